import { z } from 'zod';
import { InvalidInputError, type FieldProblem } from './errors';

/** Renders a zod issue path as `nodes[3].wlm.state`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`))
    .join('');
}

export function toFieldProblems(error: z.ZodError): FieldProblem[] {
  return error.issues.map((issue) => {
    // Unknown keys: name the key itself, not the object holding it.
    if (issue.code === 'unrecognized_keys') {
      const base = formatPath(issue.path);
      return { field: issue.keys.map((k) => (base ? `${base}.${k}` : k)).join(', '), message: 'unknown key' };
    }
    return { field: formatPath(issue.path), message: issue.message };
  });
}

/** Parses `input` with `schema` or throws an InvalidInputError naming every bad field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, subject: string): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new InvalidInputError(subject, toFieldProblems(result.error));
  return result.data;
}

/**
 * A duration in seconds, the one way every request and file reads one. `field` prefixes the
 * messages (a request names its field; a site file's path already does). Whole seconds of at least
 * 1 unless told otherwise.
 */
export function seconds(field?: string, options: { min?: number; max?: number; whole?: boolean } = {}) {
  const { min = 1, max, whole = true } = options;
  const subject = field ? `${field} must` : 'must';
  let schema = z.number({ error: `${subject} be a number of seconds` });
  if (whole) schema = schema.int(`${subject} be a whole number of seconds`);
  schema = schema.min(min, min === 0 ? `${subject} not be negative` : `${subject} be at least ${min}`);
  return max === undefined ? schema : schema.max(max, `${subject} be at most ${max}`);
}

/**
 * Group labels (HSM groups, Slurm partitions / features): ASCII letters and digits first, then
 * letters, digits, `.`, `_`, `-`, `:`, `=`; at most 128 characters. Rules out spaces, unicode,
 * `/`, `,`, `.` and `..` before a label reaches a URL or a command. The same pattern as
 * core/site/names.ts on the command-connectors branch: one of the two goes on merge.
 */
export const LABEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:=-]{0,127}$/;
export const LABEL_RULE = 'letters, digits, `.`, `_`, `-`, `:`, `=`, starting with a letter or digit, at most 128 characters';

/**
 * Node names (Slurm node names, xnames, hostnames): ASCII letters and digits first, then letters,
 * digits, `.`, `_`, `-`; at most 64 characters (HOST_NAME_MAX), far below DynamoDB's 1,024-byte
 * key limit; never `.` or `..`, which an HTTP client would resolve as a path.
 */
export const NODE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const NODE_NAME_RULE = 'letters, digits, `.`, `_`, `-`, starting with a letter or digit, at most 64 characters';

/** A group label checked by LABEL_PATTERN, with messages naming `field`. */
export function groupLabel(field: string) {
  return z.string({ error: `${field} is required` }).superRefine((value, ctx) => {
    if (value.trim() === '') ctx.addIssue({ code: 'custom', message: `${field} must not be empty` });
    else if (!LABEL_PATTERN.test(value)) ctx.addIssue({ code: 'custom', message: `${field} ${JSON.stringify(value.slice(0, 80))} is not a valid group label: ${LABEL_RULE}` });
  });
}
