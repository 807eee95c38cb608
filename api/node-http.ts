import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenHttp, type HttpListener } from '../engine/http-listener';
import type { ApiHandler } from './http';
import { bodyText, MalformedRequestError, problem, problemFor } from './problems';

/** Bodies above this are refused before they are read whole: every request of the API is small JSON. */
const MAX_BODY_BYTES = 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 0 ? undefined : bodyText(Buffer.concat(chunks));
}

/** Serves one request with the API's handler: a node:http listener (`rollout serve` mounts it). */
export async function serveApiRequest(api: ApiHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let response;
  try {
    const url = new URL(req.url ?? '/', 'http://api.invalid');
    response = await api({ method: req.method ?? 'GET', path: url.pathname, body: await readBody(req) });
  } catch (err) {
    response = err instanceof MalformedRequestError ? problemFor(err, 400) : problem(400, err instanceof Error ? err.message : String(err));
  }
  const text = response.body === undefined ? undefined : JSON.stringify(response.body);
  res.writeHead(response.status, { ...response.headers, ...(text === undefined ? {} : { 'content-length': Buffer.byteLength(text) }) });
  res.end(text);
}

export type ListeningApi = HttpListener;

/** The API on its own HTTP server (port 0: an ephemeral one), on loopback unless told. */
export function listenApi(api: ApiHandler, port = 0, host = '127.0.0.1'): Promise<ListeningApi> {
  return listenHttp((req, res) => void serveApiRequest(api, req, res), port, host);
}
