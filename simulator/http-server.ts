import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeDocumentBytes, parseDocumentText } from '../core/document-text';
import { describeError } from '../core/errors';
import { ApiFaults } from './api-faults';
import { bosApi } from './routes/bos';
import { controlApi } from './routes/control';
import { hsmApi } from './routes/hsm';
import { provisionerApi } from './routes/provisioner';
import type { Method, ServiceApi, SimResponse } from './routes/route';
import { slurmApi } from './routes/slurm';
import { execApi, type ExecApi } from './routes/exec';
import { ssmApi, type SsmApi } from './routes/ssm';
import { LocalSsmAgent, type LocalSsmAgentOptions } from './models/ssm-agent';
import type { TimeSource } from '../time/sim-clock';
import { SimRequestError } from './errors';
import type { SiteDefinition } from './site-file';
import { SiteSimulator, type SiteState } from './site-simulator';

export interface SiteSimulatorOptions {
  site: SiteDefinition;
  clock: TimeSource;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /**
   * Instance ids whose SSM commands run on this machine (an SSM agent stand-in), e.g. a real Slurm
   * head node's; every other id is the simulated head node's.
   */
  ssmAgent?: LocalSsmAgentOptions;
}

/** Where each simulated service answers, as a site profile or the connectors take them. */
export interface SimulatorUrls {
  /** `/sim/time`, `/sim/state`. */
  control: string;
  /** slurmrestd: `/slurm/v0.0.4x/...`. */
  slurmrestd: string;
  /** BOS's base (its paths start at `/v2`), as https://api-gw/apis/bos on a CSM site. */
  bos: string;
  /** HSM/SMD's base (its paths start at `/hsm/v2`): groups, State/Components, memberships. */
  hsm: string;
  /** Our provisioner API: `/provisioner/v1/actions`. */
  provisioner: string;
  /** SSM (AWS JSON 1.1, `X-Amz-Target: AmazonSSM.*`): an endpoint override for the SSM client. */
  ssm: string;
}

export function simulatorUrls(url: string): SimulatorUrls {
  return { control: url, slurmrestd: url, bos: `${url}/bos`, hsm: url, provisioner: url, ssm: url };
}

export interface RunningSiteSimulator {
  /** Base URL of the server, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  /** Base URL of each service. */
  urls: SimulatorUrls;
  /** The models, for in-process inspection. */
  simulator: SiteSimulator;
  /** The SSM agent stand-in, when `ssmAgent` was given: its commandLog is what ran on this machine. */
  ssmAgent?: LocalSsmAgent;
  state(): SiteState;
  /**
   * Answers one request in this process, as the HTTP server would answer it (the same routing,
   * parsing, faults and error bodies): what an embedded runtime's connectors reach the site through
   * instead of loopback HTTP. Undefined: an injected hang (no answer, ever).
   */
  handle(request: SimRequest): Promise<SimAnswer | undefined>;
  close(): Promise<void>;
}

/** One request: the method, the path with its query, the headers (lower-case names) and the body's bytes. */
export interface SimRequest {
  method: string;
  url: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer | string;
}

/** The answer as sent: status, content type and body text. */
export interface SimAnswer {
  status: number;
  contentType: string;
  text: string;
}

/** Largest request body accepted: a provisioner action naming 10,000 nodes is ~300 KB. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Serves the simulated site over HTTP (node:http only) until `close()`. */
export async function startSiteSimulator({
  site,
  clock,
  host = '127.0.0.1',
  port = 0,
  ssmAgent: agentOptions,
}: SiteSimulatorOptions): Promise<RunningSiteSimulator> {
  const simulator = new SiteSimulator(site, clock);
  const faults = new ApiFaults(site.apiFaults);
  const apis = [slurmApi(simulator), bosApi(simulator), hsmApi(simulator), provisionerApi(simulator), controlApi(simulator)];
  const ssmAgent = agentOptions ? new LocalSsmAgent(agentOptions) : undefined;
  const ssm = ssmApi(simulator, ssmAgent);
  const exec = execApi(simulator);

  const handle = async (request: SimRequest): Promise<SimAnswer | undefined> => {
    let response: SimResponse | undefined;
    try {
      response = await serve(request, apis, ssm, exec, faults);
    } catch (err) {
      response = { status: 500, body: { detail: `simulator error: ${describeError(err)}` } };
    }
    return response && answerOf(response);
  };
  const server = createServer((req, res) => {
    readRequest(req)
      .then(handle)
      // No response: an injected hang, left open until the client gives up (or close()).
      .then((answer) => answer && send(res, answer))
      .catch((err: unknown) => send(res, answerOf({ status: 500, body: { detail: `simulator error: ${describeError(err)}` } })));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  const url = `http://${urlHost}:${address.port}`;
  return {
    url,
    urls: simulatorUrls(url),
    simulator,
    ...(ssmAgent ? { ssmAgent } : {}),
    state: () => simulator.state(),
    handle,
    close: () =>
      new Promise<void>((resolve, reject) => {
        ssmAgent?.close();
        server.close((err) => (err ? reject(err) : resolve()));
        // Keep-alive connections from fetch would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}

async function serve(req: SimRequest, apis: readonly ServiceApi[], ssm: SsmApi, exec: ExecApi, faults: ApiFaults): Promise<SimResponse | undefined> {
  const method = req.method;
  const [path = '/', search = ''] = req.url.split('?', 2);
  // AWS JSON 1.1 names the operation in a header, not the path.
  const target = req.headers['x-amz-target'];
  if (typeof target === 'string' && target.startsWith('AmazonSSM.')) return ssm.serve(target.slice('AmazonSSM.'.length), readText(req), faults);
  // The local transport's stand-in programs: argv in, plain text out.
  if (path.startsWith('/sim/exec')) {
    const answer = exec.serve(method, path, readText(req));
    if (answer) return answer;
  }
  const api = apis.find((a) => a.prefix.test(path));
  if (!api) return { status: 404, body: { detail: `no service at ${path}` } };
  const fail = (status: number, message: string): SimResponse => ({ status, body: api.errorBody(status, message) });

  let text: string;
  try {
    text = readText(req);
  } catch (err) {
    return fail(400, describeError(err));
  }

  const injected = api.service && faults.check(api.service, method, path);
  if (injected === 'hang') return undefined;
  if (injected) return fail(injected, `injected fault: ${method} ${path}`);

  const candidates = api.routes.filter((r) => r.path.test(path));
  const route = candidates.find((r) => r.method === (method as Method));
  if (!route) return candidates.length > 0 ? fail(405, `${method} is not allowed on ${path}`) : fail(404, `no such resource: ${path}`);

  try {
    const params = route.path
      .exec(path)!
      .slice(1)
      .map((p) => decodeURIComponent(p));
    const body = method === 'POST' ? parseJson(text) : undefined;
    return route.handle(params, body, new URLSearchParams(search));
  } catch (err) {
    if (err instanceof SimRequestError) return fail(err.status, err.message);
    if (err instanceof URIError) return fail(400, `bad URL encoding in ${path}`);
    throw err;
  }
}

/** Bodies are read as strictly as files: no duplicate keys, no `1e3` for a whole number. */
function parseJson(text: string): unknown {
  if (text.trim() === '') throw new SimRequestError(400, 'a JSON body is required');
  const parsed = parseDocumentText(text, 'json');
  if ('problems' in parsed)
    throw new SimRequestError(
      400,
      `the body is not valid JSON: ${parsed.problems.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message.replace(/^invalid JSON:? ?/, ''))).join('; ')}`,
    );
  return parsed.value;
}

/** The request as the routes take it, its body read whole (up to MAX_BODY_BYTES; past it, the body is marked too large). */
async function readRequest(req: IncomingMessage): Promise<SimRequest> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) tooLarge = true;
    else chunks.push(chunk as Buffer);
  }
  return { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: tooLarge ? TOO_LARGE : Buffer.concat(chunks) };
}

/** Stands for a body past MAX_BODY_BYTES (not kept). */
const TOO_LARGE = Buffer.alloc(0);

function readText(req: SimRequest): string {
  if (typeof req.body === 'string') {
    if (Buffer.byteLength(req.body) > MAX_BODY_BYTES) throw new Error(`the body exceeds ${MAX_BODY_BYTES} bytes`);
    return req.body;
  }
  if (req.body === TOO_LARGE) throw new Error(`the body exceeds ${MAX_BODY_BYTES} bytes`);
  const decoded = decodeDocumentBytes(req.body);
  if ('problems' in decoded) throw new Error('the body is not UTF-8 text');
  return decoded.text;
}

function answerOf({ status, body, contentType = 'application/json' }: SimResponse): SimAnswer {
  return { status, contentType, text: contentType.startsWith('text/') && typeof body === 'string' ? body : JSON.stringify(body) };
}

function send(res: ServerResponse, { status, contentType, text }: SimAnswer): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
