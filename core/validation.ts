import type { z } from 'zod';
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
