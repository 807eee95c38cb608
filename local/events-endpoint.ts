import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PublishedEvent, StatusEventLog } from '../ports/status-events';

export const EVENTS_PATH = '/rollout/v1/events';

/** `GET /rollout/v1/events?after=N`: the status events after the first N, as `{ events: [...] }` (what `rollout events --endpoint` reads). */
export function eventsRoute(log: StatusEventLog) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://local');
    if (url.pathname !== EVENTS_PATH || req.method !== 'GET') return false;
    const after = Number(url.searchParams.get('after') ?? 0);
    const body =
      Number.isInteger(after) && after >= 0
        ? { events: await log.read(after) }
        : { message: `after must be a whole number, got '${url.searchParams.get('after')}'` };
    const text = JSON.stringify(body);
    res.writeHead('events' in body ? 200 : 400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
    return true;
  };
}

/** The events of a `rollout serve` after the first `after`. */
export async function fetchEvents(baseUrl: string, after: number): Promise<PublishedEvent[]> {
  const response = await fetch(new URL(`${EVENTS_PATH}?after=${after}`, baseUrl));
  if (!response.ok) throw new Error(`${baseUrl}${EVENTS_PATH} answered ${response.status}: is it a \`rollout serve\`?`);
  return ((await response.json()) as { events: PublishedEvent[] }).events;
}
