import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { z } from 'zod';
import { toFieldProblems } from '../core/validation';
import { DEFAULT_STACK, discoverEndpoints, resolveApiUrl } from './targets';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';

export interface ApiTargetOptions {
  endpoint?: string;
  api?: string;
  aws?: boolean;
  stack?: string;
  region?: string;
  profile?: string;
}

/** Where the REST API is, and the SigV4 signer its IAM auth needs (none for a `rollout serve`). */
export interface ApiTarget {
  base: string;
  signer?: SignatureV4;
}

/** `https://<id>.execute-api.<region>.amazonaws.com/...`: API Gateway, behind IAM auth; the region is in the host. */
const EXECUTE_API_HOST = /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/;

/** The region of an API Gateway URL (its host names it), or undefined for any other URL. */
export function executeApiRegion(url: URL): string | undefined {
  return EXECUTE_API_HOST.exec(url.hostname)?.[1];
}

/** A SigV4 signer for API Gateway's IAM auth in `region`, with the default credential chain (or `profile`'s). */
export function signerFor(region: string, profile: string | undefined): SignatureV4 {
  return new SignatureV4({
    service: 'execute-api',
    region,
    credentials: defaultProvider(profile ? { profile } : {}),
    sha256: Hash.bind(null, 'sha256'),
    applyChecksum: true,
  });
}

/**
 * The REST API the options name: a `rollout serve` (--endpoint, its discovery route), the URL as given
 * (--api; an API Gateway URL is signed), or the deployed stack's (--aws: its `ApiUrl` output, signed
 * with SigV4 through the default credential chain, or --profile).
 */
export async function resolveApiTarget(options: ApiTargetOptions): Promise<ApiTarget> {
  const given = [options.endpoint !== undefined, options.api !== undefined, options.aws === true].filter(Boolean).length;
  if (given !== 1)
    throw new CliError('give one of --endpoint (a `rollout serve`), --api (the REST API URL) and --aws (the deployed stack)', ExitCode.invalidInput);
  if (options.stack !== undefined && !options.aws) throw new CliError('--stack goes with --aws', ExitCode.invalidInput);
  if ((options.region !== undefined || options.profile !== undefined) && options.endpoint !== undefined) {
    throw new CliError('--region and --profile go with --aws or an API Gateway --api', ExitCode.invalidInput);
  }
  if (options.api !== undefined) {
    let url: URL;
    try {
      url = new URL(options.api);
    } catch {
      throw new CliError(`--api must be a URL (https://...), got '${options.api}'`, ExitCode.invalidInput);
    }
    const region = options.region ?? executeApiRegion(url);
    return { base: options.api.replace(/\/+$/, ''), ...(region ? { signer: signerFor(region, options.profile) } : {}) };
  }
  if (options.endpoint !== undefined) {
    let discovered: Awaited<ReturnType<typeof discoverEndpoints>>;
    try {
      discovered = await discoverEndpoints(options.endpoint);
    } catch (err) {
      if (err instanceof Error && err.name === 'InvalidInputError') throw err;
      throw new CliError(err instanceof Error ? err.message : String(err), ExitCode.notCompleted);
    }
    if (!discovered)
      throw new CliError(`${options.endpoint} is not a \`rollout serve\` (no discovery route): give the REST API's URL with --api`, ExitCode.notCompleted);
    const { apiEndpoint } = discovered;
    if (!apiEndpoint) throw new CliError(`the control plane at ${options.endpoint} serves no REST API`, ExitCode.notCompleted);
    return { base: apiEndpoint };
  }
  const cloudFormation = new CloudFormationClient({
    ...(options.region ? { region: options.region } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
  });
  try {
    const region = options.region ?? (await cloudFormation.config.region());
    return { base: await resolveApiUrl(cloudFormation, options.stack ?? DEFAULT_STACK, region), signer: signerFor(region, options.profile) };
  } catch (err) {
    throw new CliError(`cannot read the stack's ApiUrl: ${err instanceof Error ? err.message : String(err)}`, ExitCode.notCompleted);
  } finally {
    cloudFormation.destroy();
  }
}

/** The headers to send for a request signed by `signer`: the request's own, the Host it signs, and the signature's. */
export async function signedHeaders(
  signer: SignatureV4,
  request: { method: string; url: URL; headers: Record<string, string>; body?: string },
): Promise<Record<string, string>> {
  const { url } = request;
  const signed = await signer.sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: { ...request.headers, host: url.host },
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  // fetch sets Host from the URL: the value signed.
  const { host: _host, ...sent } = signed.headers;
  return sent;
}

interface Problem {
  status: number;
  detail?: string;
  errors?: { field: string; message: string }[];
}

/**
 * One request to the REST API; its JSON answer, checked against `schema` (the API's own), or a
 * CliError that says what went wrong in one line: the problem's detail and each field it names (bad
 * input exits 2, anything else refused exits 1), an answer that is not the API's (an HTML error page,
 * a proxy), or an answer that does not fit the schema.
 */
export async function callApi<T>(target: ApiTarget, method: 'GET' | 'POST' | 'DELETE', path: string, body: unknown, schema: z.ZodType<T>): Promise<T> {
  return (await callApiWithStatus(target, method, path, body, schema)).body;
}

/** callApi, with the status of a successful answer (201 created, 200 unchanged, ...). */
export async function callApiWithStatus<T>(
  target: ApiTarget,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body: unknown,
  schema: z.ZodType<T>,
): Promise<{ status: number; body: T }> {
  const url = new URL(`${target.base}${path}`);
  const text = body === undefined ? undefined : JSON.stringify(body);
  let headers: Record<string, string> = { accept: 'application/json', ...(text === undefined ? {} : { 'content-type': 'application/json' }) };
  let response: Response;
  try {
    if (target.signer) headers = await signedHeaders(target.signer, { method, url, headers, ...(text === undefined ? {} : { body: text }) });
    response = await fetch(url, { method, headers, ...(text === undefined ? {} : { body: text }) });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const credentials = err instanceof Error && /credential/i.test(`${err.name} ${reason}`);
    throw new CliError(
      credentials ? `no AWS credentials to sign the request with: ${reason}` : `cannot reach the REST API at ${target.base}: ${reason}`,
      ExitCode.notCompleted,
    );
  }
  const answer = await response.text();
  const type = response.headers.get('content-type') ?? '';
  let parsed: unknown;
  try {
    parsed = answer === '' ? undefined : JSON.parse(answer);
  } catch {
    const excerpt = answer.replace(/\s+/g, ' ').trim().slice(0, 120);
    throw new CliError(
      `${url.origin}${url.pathname} answered ${response.status} with ${type || 'no content type'}, not the REST API's JSON${excerpt ? `: ${excerpt}` : ''}`,
      ExitCode.notCompleted,
    );
  }
  if (response.ok) {
    const checked = schema.safeParse(parsed);
    if (checked.success) return { status: response.status, body: checked.data };
    const problems = toFieldProblems(checked.error, parsed)
      .slice(0, 3)
      .map((p) => (p.field ? `${p.field}: ${p.message}` : p.message));
    throw new CliError(`unexpected answer from ${method} ${path} (${response.status}): ${problems.join('; ')}`, ExitCode.notCompleted);
  }
  // API Gateway's own refusals (403 without a valid signature, 429, 5xx) carry `message`, not a problem.
  const problem = (parsed ?? {}) as Problem & { message?: unknown };
  const detail = problem.detail ?? (typeof problem.message === 'string' ? problem.message : response.statusText);
  const fields = (Array.isArray(problem.errors) ? problem.errors : [])
    .filter((e) => e.field !== '' && !detail.includes(e.message))
    .map((e) => `${e.field}: ${e.message}`);
  const message = [`${response.status}: ${detail}`, ...fields].join('; ');
  // Only the API's own problem documents say that the input was bad.
  const badInput = (response.status === 400 || response.status === 422) && type.startsWith('application/problem+json');
  throw new CliError(message, badInput ? ExitCode.invalidInput : ExitCode.notCompleted);
}
