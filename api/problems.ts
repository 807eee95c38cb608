import { z } from 'zod';
import {
  DeploymentNotFoundError,
  EnvironmentResourceNotFoundError,
  InvalidInputError,
  ResourceConflictError,
  RolloutError,
  SessionNotCancellableError,
  SessionNotStoppableError,
  SessionStillRunningError,
  SessionNotFoundError,
  StaleWriteError,
  UpgradeConflictError,
  UpgradeNotAllowedError,
  type FieldProblem,
} from '../core/errors';
import { decodeDocumentBytes, parseDocumentText } from '../core/document-text';
import { PROBLEM_TYPE, type ApiResponse } from './http';

/** RFC 9457 problem details, with the fields at fault in `errors` (a field of '' is the request as a whole). */
export const problemSchema = z.object({
  type: z.string().describe('A URI naming the kind of problem'),
  title: z.string().describe('A short summary of the kind of problem'),
  status: z.number().int().describe('The HTTP status'),
  detail: z.string().describe('What went wrong here, and what would fix it'),
  errors: z
    .array(
      z.object({
        field: z.string().describe("The field at fault, as a path (`maintenanceWindows[0].cron`); '' for the request as a whole"),
        message: z.string().describe('What is wrong with it'),
      }),
    )
    .optional()
    .describe('The fields at fault, each with its problem'),
});
export type Problem = z.output<typeof problemSchema>;

/** A body that is not UTF-8 JSON, or not a JSON object: 400 on every route (422 is for fields that are wrong). */
export class MalformedRequestError extends RolloutError {
  override readonly name = 'MalformedRequestError';
  constructor(
    message: string,
    /** Where the body is broken (a duplicate key's path, ...); the request as a whole by default. */
    readonly problems: FieldProblem[] = [{ field: '', message }],
  ) {
    super(message);
  }
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  500: 'Internal Server Error',
};

export function problem(status: number, detail: string, errors?: FieldProblem[], headers: Record<string, string> = {}): ApiResponse {
  const body: Problem = { type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, ...(errors && errors.length > 0 ? { errors } : {}) };
  return { status, headers: { 'content-type': PROBLEM_TYPE, ...headers }, body };
}

/**
 * The one mapping of the domain's typed errors to statuses. `invalidStatus`: what bad input maps
 * to on this route (CRUS answers 422 for a session's fields, Fuel 400 for a clone's). Anything
 * that is not ours is a 500 that does not leak its message.
 */
export function problemFor(err: unknown, invalidStatus: 400 | 422): ApiResponse {
  if (err instanceof MalformedRequestError) return problem(400, err.message, err.problems);
  if (err instanceof InvalidInputError) return problem(invalidStatus, err.message, err.problems);
  if (err instanceof SessionNotFoundError || err instanceof DeploymentNotFoundError) return problem(404, err.message);
  if (err instanceof EnvironmentResourceNotFoundError) return problem(404, err.message, err.field ? [{ field: err.field, message: err.message }] : undefined);
  if (err instanceof UpgradeNotAllowedError) return problem(405, err.message, err.field ? [{ field: err.field, message: err.message }] : undefined);
  if (err instanceof UpgradeConflictError || err instanceof ResourceConflictError) return problem(409, err.message, err.problems);
  if (err instanceof SessionNotCancellableError || err instanceof SessionNotStoppableError || err instanceof SessionStillRunningError)
    return problem(409, err.message);
  if (err instanceof StaleWriteError) return problem(409, `${err.message}: it changed during the request; ask again`);
  if (err instanceof RolloutError) return problem(500, err.message);
  return problem(500, 'internal error');
}

/** A body's bytes as text: UTF-8 only (lossy decoding would let U+FFFD through into names), or MalformedRequestError. */
export function bodyText(bytes: Uint8Array): string {
  const decoded = decodeDocumentBytes(bytes);
  if ('problems' in decoded) throw new MalformedRequestError('the body is not UTF-8 text');
  return decoded.text;
}

/**
 * The request body as a JSON object, read by the one strict reader (no duplicate keys, whole numbers
 * in decimal digits), or MalformedRequestError naming where it is broken.
 */
export function readJsonObject(body: string | undefined): Record<string, unknown> {
  if (body === undefined || body.trim() === '') throw new MalformedRequestError('the request needs a JSON object as its body');
  const parsed = parseDocumentText(body, 'json');
  if ('problems' in parsed) {
    const detail = parsed.problems.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message)).join('; ');
    throw new MalformedRequestError(`the body is not strict JSON: ${detail}`, parsed.problems);
  }
  const { value } = parsed;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new MalformedRequestError('the body must be a JSON object');
  return value as Record<string, unknown>;
}
