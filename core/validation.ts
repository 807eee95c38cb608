import { z } from 'zod';
import { InvalidInputError, type FieldProblem } from './errors';

/** Renders a zod issue path as `nodes[3].wlm.state`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`)).join('');
}

/** The longest wait any request or file may ask for: a week (a longer one is a typo, or seconds meant as milliseconds). */
export const MAX_DURATION_SECONDS = 7 * 24 * 3600;
/** The longest poll interval: an hour. */
export const MAX_POLL_INTERVAL_SECONDS = 3600;
/** The fastest a run may go against the wall clock: a million times (a week in 0.6 s). */
export const MAX_TIME_SCALE = 1_000_000;

/** Where a document or request should be a mapping and is not, say what it is instead. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'string' ? 'a string' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * Where each key of a document is valid, from its JSON Schema: key -> the paths of the objects that
 * take it (`''` the top level, `tasks`, `bootService`), for an unknown key that belongs elsewhere.
 */
export type KeyPlaces = ReadonlyMap<string, readonly string[]>;

export function keyPlaces(jsonSchema: Record<string, unknown>): KeyPlaces {
  const places = new Map<string, Set<string>>();
  const visit = (node: unknown, at: string, depth: number): void => {
    if (typeof node !== 'object' || node === null || depth > 12) return;
    const schema = node as Record<string, unknown>;
    for (const [key, child] of Object.entries((schema.properties ?? {}) as Record<string, unknown>)) {
      (places.get(key) ?? places.set(key, new Set()).get(key)!).add(at);
      visit(child, at ? `${at}.${key}` : key, depth + 1);
    }
    for (const variants of [schema.anyOf, schema.oneOf, schema.allOf])
      if (Array.isArray(variants)) for (const variant of variants) visit(variant, at, depth + 1);
    visit(schema.items, `${at}[]`, depth + 1);
    if (typeof schema.additionalProperties === 'object') visit(schema.additionalProperties, `${at}.*`, depth + 1);
  };
  visit(jsonSchema, '', 0);
  return new Map([...places].map(([key, at]) => [key, [...at]]));
}

/** `unknown key`, and where it belongs when the document takes it elsewhere: `'nodeExec' belongs under 'tasks'`. */
function unknownKeyMessage(key: string, at: string, places: KeyPlaces | undefined): string {
  const valid = places?.get(key) ?? [];
  const under = valid.filter((place) => place !== at && place !== '').map((place) => `'${place}'`);
  const top = valid.includes('') && at !== '';
  if (under.length === 0 && !top) return 'unknown key';
  const unders = under.length === 0 ? '' : `under ${under.length > 1 ? `${under.slice(0, -1).join(', ')} or ${under.at(-1)}` : under[0]}`;
  const where = top ? `at the top level${unders ? ` or ${unders}` : ''}` : unders;
  return `unknown key${valid.includes(at) ? ' (taken here only by another type)' : ''}: '${key}' belongs ${where}`;
}

export function toFieldProblems(error: z.ZodError, input?: unknown, places?: KeyPlaces): FieldProblem[] {
  return error.issues.flatMap((issue): FieldProblem | FieldProblem[] => {
    if (issue.path.length === 0 && issue.code === 'invalid_type' && issue.expected === 'object') {
      return { field: '', message: `must be an object (a mapping of fields), not ${kindOf(input)}` };
    }
    // A record key its schema refused: the key schema's own message says why.
    if (issue.code === 'invalid_key') return { field: formatPath(issue.path), message: issue.issues[0]?.message ?? issue.message };
    // Unknown keys: name the key itself, not the object holding it.
    if (issue.code === 'unrecognized_keys') {
      const base = formatPath(issue.path);
      const field = (key: string) => (base ? `${base}.${key}` : key);
      if (!places) return { field: issue.keys.map(field).join(', '), message: 'unknown key' };
      // Places are paths of keys: list items (`[]`) and record entries (`*`) stand for any index or name.
      const at = issue.path
        .map((part) => (typeof part === 'number' ? '[]' : String(part)))
        .join('.')
        .replace(/\.\[\]/g, '[]');
      return issue.keys.map((key) => ({ field: field(key), message: unknownKeyMessage(key, at, places) }));
    }
    return { field: formatPath(issue.path), message: issue.message };
  });
}

/** Parses `input` with `schema` or throws an InvalidInputError naming every bad field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, subject: string, places?: KeyPlaces): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new InvalidInputError(subject, toFieldProblems(result.error, input, places));
  return result.data;
}

/**
 * A duration in seconds, the one way every request and file reads one. `field` prefixes the
 * messages (a request names its field; a site file's path already does). Whole seconds of at least
 * 1 and at most a week unless told otherwise.
 */
export function seconds(field?: string, options: { min?: number; max?: number; whole?: boolean } = {}) {
  const { min = 1, max = MAX_DURATION_SECONDS, whole = true } = options;
  const subject = field ? `${field} must` : 'must';
  let schema = z.number({ error: `${subject} be a number of seconds` });
  if (whole) schema = schema.int(`${subject} be a whole number of seconds`);
  schema = schema.min(min, min === 0 ? `${subject} not be negative` : `${subject} be at least ${min}`);
  return schema.max(max, `${subject} be at most ${max}${max === MAX_DURATION_SECONDS ? ' (a week)' : max === MAX_POLL_INTERVAL_SECONDS ? ' (an hour)' : ''}`);
}

/** How much faster than the wall clock a run goes: above 0, at most MAX_TIME_SCALE. */
export function timeScale(field?: string) {
  const subject = field ? `${field} must` : 'must';
  return z
    .number({ error: `${subject} be a number` })
    .positive(`${subject} be above 0`)
    .max(MAX_TIME_SCALE, `${subject} be at most ${MAX_TIME_SCALE}`);
}
