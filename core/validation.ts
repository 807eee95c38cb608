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
