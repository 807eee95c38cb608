import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderSessionHtml } from '../control-plane/reports/session-html';
import type { Site } from '../ports/site';
import type { ControlPlane } from '../control-plane/control-plane';

const REPORT_PATH = /^\/sessions\/([^/]+)\/report\/?$/;

/** How often the served page of a running session reloads itself. */
export const REPORT_REFRESH_SECONDS = 10;

/**
 * `GET /sessions/{id}/report` of `rollout serve` (beside the REST API, on its port): the upgrade session's
 * HTML report (control-plane/reports/session-html.ts), reloading itself while the session runs, with each
 * node's rack from the site's inventory. Not a REST route: it answers HTML, and only `rollout serve` has
 * the plotting library on disk to inline.
 */
export function sessionReportRoute(controlPlane: Pick<ControlPlane, 'session' | 'now'>, site?: Pick<Site, 'inventory'>) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const path = new URL(req.url ?? '/', 'http://local').pathname.match(REPORT_PATH);
    if (!path) return false;
    const send = (status: number, type: string, text: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text), ...headers });
      res.end(req.method === 'HEAD' ? undefined : text);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(405, 'text/plain; charset=utf-8', `${req.method} is not allowed on /sessions/{id}/report; allowed: GET, HEAD\n`, { allow: 'GET, HEAD' });
      return true;
    }
    let id: string;
    try {
      id = decodeURIComponent(path[1]!);
    } catch {
      send(404, 'text/plain; charset=utf-8', 'no upgrade session at this path\n');
      return true;
    }
    const found = await controlPlane.session(id);
    if (found?.kind !== 'upgrade') {
      send(404, 'text/plain; charset=utf-8', `no upgrade session with id '${id}': rollout session list shows them\n`);
      return true;
    }
    const racks = await inventoryRacks(site);
    const html = await renderSessionHtml(found.report, { now: controlPlane.now(), refreshSeconds: REPORT_REFRESH_SECONDS, racks });
    send(200, 'text/html; charset=utf-8', html, { 'cache-control': 'no-store' });
    return true;
  };
}

/** Each node's rack as the inventory gives it; none when the inventory does not answer (the page falls back to xname cabinets). */
async function inventoryRacks(site: Pick<Site, 'inventory'> | undefined): Promise<Record<string, string>> {
  try {
    const nodes = (await site?.inventory.listNodes()) ?? [];
    return Object.fromEntries(nodes.flatMap((node) => (node.rack === undefined ? [] : [[node.name, node.rack]])));
  } catch {
    return {};
  }
}
