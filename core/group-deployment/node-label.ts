import { z } from 'zod';
import type { NodeLabel } from './strategy';

/** Shipyard's rule for a label string: exactly one ':' and a non-blank key and value around it. */
const LABEL_TEXT = /^[^:]*[^:\s][^:]*:[^:]*[^:\s][^:]*$/;
/** A key or value of the map form: non-blank and colon-free, so it always renders back to valid `key:value`. */
const LABEL_PART = /^[^:]*[^:\s][^:]*$/;

const LABEL_FORMS = "must be a 'key:value' string or a one-key map (key: value)";

export type NodeLabelEntry = string | Record<string, string>;

/**
 * Reads one `node_labels` entry. Shipyard writes labels as `"key:value"` strings, while its own
 * design document shows YAML maps (`- ucp_control_plane: enabled`); both are accepted and trimmed.
 */
export function readNodeLabel(entry: NodeLabelEntry): { label: NodeLabel } | { problem: string } {
  if (typeof entry === 'string') {
    if (!LABEL_TEXT.test(entry)) {
      return { problem: `label '${entry}' must be key:value: exactly one ':' with a non-blank key and value` };
    }
    const [key = '', value = ''] = entry.split(':');
    return { label: { key: key.trim(), value: value.trim() } };
  }
  const pairs = Object.entries(entry);
  const [pair] = pairs;
  if (pairs.length !== 1 || pair === undefined) {
    return { problem: `a label map must have exactly one key, found ${pairs.length}` };
  }
  const [key, value] = pair;
  if (!LABEL_PART.test(key) || !LABEL_PART.test(value)) {
    return { problem: `label '${key}: ${value}' must have a non-blank key and value without ':'` };
  }
  return { label: { key: key.trim(), value: value.trim() } };
}

/**
 * A `node_labels` entry, normalised to {key, value}. The `meta` patterns only feed the JSON Schema;
 * the transform gives zod users the precise message.
 */
export const nodeLabelEntrySchema = z
  .union(
    [
      z.string().meta({ pattern: LABEL_TEXT.source }),
      z.record(z.string().meta({ pattern: LABEL_PART.source }), z.string().meta({ pattern: LABEL_PART.source })).meta({ minProperties: 1, maxProperties: 1 }),
    ],
    { error: () => LABEL_FORMS },
  )
  .transform((entry, ctx): NodeLabel => {
    const read = readNodeLabel(entry);
    if ('problem' in read) {
      ctx.addIssue({ code: 'custom', message: read.problem, input: entry });
      return z.NEVER;
    }
    return read.label;
  });
