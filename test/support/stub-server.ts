import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A stub service answering each request with `reply` (canned bodies: a real service's documented answers), recording what it received. */
export async function stubServer(reply: (path: string, method: string) => { status: number; text: string } | 'never') {
  const seen: { method?: string; url?: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const server: Server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    seen.push({ method: req.method, url: req.url, headers: req.headers, body });
    const answer = reply(req.url ?? '', req.method ?? 'GET');
    if (answer === 'never') return;
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { url, seen, close };
}
