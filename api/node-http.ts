import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenHttp, type HttpListener } from './http-listener';
import type { ApiHandler, ApiResponse } from './http';
import { bodyText, MalformedRequestError, problem, problemFor } from './problems';
import { MAX_BODY_BYTES } from './router';

class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
}

/** The body, refused (413) as soon as it passes MAX_BODY_BYTES, before it is read whole. */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const announced = Number(req.headers['content-length']);
  if (announced > MAX_BODY_BYTES) throw new BodyTooLargeError();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLargeError();
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 0 ? undefined : bodyText(Buffer.concat(chunks));
}

/** Serves one request with the API's handler: a node:http listener (`rollout serve` mounts it). */
export async function serveApiRequest(api: ApiHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let response: ApiResponse;
  try {
    const url = new URL(req.url ?? '/', 'http://api.invalid');
    response = await api({ method: req.method ?? 'GET', path: url.pathname, body: await readBody(req), contentType: req.headers['content-type'] });
  } catch (err) {
    response =
      err instanceof BodyTooLargeError
        ? problem(413, `the body is over ${MAX_BODY_BYTES} bytes: every request of this API is small JSON`)
        : err instanceof MalformedRequestError
          ? problemFor(err, 400)
          : problem(400, err instanceof Error ? err.message : String(err));
    // The rest of an unread body is not waited for.
    if (err instanceof BodyTooLargeError) res.setHeader('connection', 'close');
  }
  const text = response.body === undefined ? undefined : JSON.stringify(response.body);
  res.writeHead(response.status, { ...response.headers, ...(text === undefined ? {} : { 'content-length': Buffer.byteLength(text) }) });
  res.end(text);
}

export type ListeningApi = HttpListener;

/** A route served beside the API on its server (not a REST route: `rollout serve`'s HTML report); true when it answered. */
export type ExtraRoute = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/** The API on its own HTTP server (port 0: an ephemeral one), on loopback unless told; `extraRoutes` are tried first. */
export function listenApi(
  api: ApiHandler,
  port = 0,
  { host = '127.0.0.1', extraRoutes = [] }: { host?: string; extraRoutes?: readonly ExtraRoute[] } = {},
): Promise<ListeningApi> {
  return listenHttp(
    (req, res) =>
      void (async () => {
        for (const route of extraRoutes) if (await route(req, res)) return;
        await serveApiRequest(api, req, res);
      })().catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(err instanceof Error ? err.message : String(err));
      }),
    port,
    host,
  );
}
