import { isIP } from 'node:net';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { buildOpenApiDocument } from '../../api/openapi';

const DOCUMENT_ID = 'https://rollout.invalid/openapi.json';
const document = buildOpenApiDocument() as unknown as {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
};
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
// zod-to-openapi writes z.ipv4() and z.ipv6() as format "ip" (an open format in OpenAPI): either address.
ajv.addFormat('ip', (value: string) => isIP(value) !== 0);
ajv.addSchema({ ...document, $id: DOCUMENT_ID });
const compiled = new Map<string, ValidateFunction>();

const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** The documented path template an actual path is an instance of (`/sessions/abc` → `/sessions/{id}`). */
function templateOf(path: string): string | undefined {
  const got = path.replace(/\/+$/, '').split('/');
  return Object.keys(document.paths).find((template) => {
    const want = template.split('/');
    return want.length === got.length && want.every((segment, i) => segment.startsWith('{') || segment === got[i]);
  });
}

function validator(ref: string): ValidateFunction {
  let validate = compiled.get(ref);
  if (!validate) compiled.set(ref, (validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/${ref}` })));
  return validate;
}

/**
 * Checks an answer of the API against its OpenAPI document (generated from the zod schemas): the
 * status must be documented for the route and method, and the body must match the documented schema
 * of that status and content type. A path or method the API does not serve answers a Problem (404,
 * 405), as does a body it refuses for its size (413). Returns what is wrong, or undefined.
 */
export function contractViolation(method: string, path: string, status: number, contentType: string | null, body: unknown): string | undefined {
  const template = templateOf(path);
  const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const operation = template ? document.paths[template]?.[verb] : undefined;
  const generic = !operation || status === 413;
  if (generic) {
    if (![404, 405, 413].includes(status)) return `${method} ${path}: ${status} from a route or method the document does not list`;
  } else if (!operation.responses[String(status)]) {
    return `${method} ${path}: status ${status} is not documented for ${verb.toUpperCase()} ${template}`;
  }
  if (method.toUpperCase() === 'HEAD' || body === undefined) return undefined;
  const type = (contentType ?? '').split(';')[0]!;
  const ref = generic ? 'components/schemas/Problem' : pointer('paths', template!, verb, 'responses', String(status), 'content', type, 'schema');
  if (!generic && !operation.responses[String(status)]?.content?.[type])
    return `${method} ${path}: ${status} answered ${type}, which the document does not list`;
  const validate = validator(ref);
  return validate(body)
    ? undefined
    : `${method} ${path}: the ${status} body does not match ${template ?? ''} in the document: ${ajv.errorsText(validate.errors)}`;
}

/** Throws what contractViolation finds: the test helpers that call the API run every answer through it. */
export function checkContract(method: string, path: string, status: number, contentType: string | null, body: unknown): void {
  const violation = contractViolation(method, path, status, contentType, body);
  if (violation) throw new Error(`the answer breaks the API's contract: ${violation}`);
}
