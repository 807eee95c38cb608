/**
 * Site services answering in this process (the embedded runtime's simulator): an HTTP client of a
 * URL under a registered origin hands its request to the service's handler instead of sending it
 * over loopback, and gets the same status and body text the service would have sent. The
 * connectors stay as they are; only the transport under them changes. Anything not registered (a
 * real site, another process's simulator) goes over the network as always.
 */
export interface InProcessRequest {
  method: string;
  /** The path with its query, as an HTTP request line has it. */
  url: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
}

export interface InProcessAnswer {
  status: number;
  text: string;
}

/** Answers a request, or resolves undefined to never answer (a hung service: the client's timeout applies). */
export type InProcessHandler = (request: InProcessRequest) => Promise<InProcessAnswer | undefined>;

const endpoints = new Map<string, InProcessHandler>();

/** Serves `origin` (e.g. http://127.0.0.1:41234) in this process until the returned function is called. */
export function serveInProcess(origin: string, handler: InProcessHandler): () => void {
  const key = new URL(origin).origin;
  endpoints.set(key, handler);
  return () => {
    if (endpoints.get(key) === handler) endpoints.delete(key);
  };
}

/** The handler serving this URL's origin, with the request line's path; undefined when none does. */
export function inProcessEndpoint(url: string): { handler: InProcessHandler; path: string } | undefined {
  if (endpoints.size === 0) return undefined;
  const parsed = new URL(url);
  const handler = endpoints.get(parsed.origin);
  return handler && { handler, path: parsed.pathname + parsed.search };
}

/** A request to an in-process handler under the client's timeout, failing as fetch fails on one (a DOMException named TimeoutError). */
export function sendInProcess(
  endpoint: { handler: InProcessHandler; path: string },
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  timeoutMs: number,
): Promise<InProcessAnswer> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), timeoutMs);
    const lowerCase = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    endpoint.handler({ method, url: endpoint.path, headers: lowerCase, body: body ?? '' }).then(
      (answer) => {
        // No answer: hung, as the service was told to; the timer fails the request.
        if (answer === undefined) return;
        clearTimeout(timer);
        resolve(answer);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? new TypeError('fetch failed', { cause: err }) : err);
      },
    );
  });
}
