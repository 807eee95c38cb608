import { discoverEndpoints } from '../engine/client/targets';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';

export interface ApiTargetOptions {
  endpoint?: string;
  api?: string;
}

/** Where the REST API is: announced by a `rollout serve` (--endpoint, its discovery route), or given as is (--api). */
export async function resolveApiBase(options: ApiTargetOptions): Promise<string> {
  if ((options.endpoint === undefined) === (options.api === undefined)) {
    throw new CliError('give one of --endpoint (a `rollout serve`) and --api (the REST API URL)', ExitCode.invalidInput);
  }
  if (options.api !== undefined) return options.api.replace(/\/+$/, '');
  const { apiEndpoint } = await discoverEndpoints(options.endpoint!);
  if (!apiEndpoint) throw new CliError(`the control plane at ${options.endpoint} serves no REST API`, ExitCode.notCompleted);
  return apiEndpoint;
}

interface Problem {
  status: number;
  detail?: string;
  errors?: { field: string; message: string }[];
}

/**
 * One request to the REST API; its JSON answer, or a CliError carrying the problem's detail (and
 * each field it names): bad input exits 2, anything else refused exits 1.
 */
export async function callApi<T>(base: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  return (await callApiWithStatus<T>(base, method, path, body)).body;
}

/** callApi, with the status of a successful answer (201 created, 200 unchanged, ...). */
export async function callApiWithStatus<T>(base: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: T }> {
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
  } catch (err) {
    throw new CliError(`cannot reach the REST API at ${base}: ${err instanceof Error ? err.message : String(err)}`, ExitCode.notCompleted);
  }
  const text = await response.text();
  const answer: unknown = text ? JSON.parse(text) : undefined;
  if (response.ok) return { status: response.status, body: answer as T };
  const problem = (answer ?? { status: response.status }) as Problem;
  const fields = (problem.errors ?? []).filter((e) => e.field !== '' && !problem.detail?.includes(e.message)).map((e) => `${e.field}: ${e.message}`);
  const message = [`${response.status}: ${problem.detail ?? response.statusText}`, ...fields].join('; ');
  throw new CliError(message, response.status === 400 || response.status === 422 ? ExitCode.invalidInput : ExitCode.notCompleted);
}
