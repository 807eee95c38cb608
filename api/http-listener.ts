import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpListener {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Serves `handler` on `port` (0: an ephemeral one) of `host`, loopback unless given, until `close()`. */
export async function listenHttp(handler: RequestListener, port = 0, host = '127.0.0.1'): Promise<HttpListener> {
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}`,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        // Keep-alive connections (fetch, the SDK) would otherwise hold close() open.
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
