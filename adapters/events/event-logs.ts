import { appendFile, readFile } from 'node:fs/promises';
import { EVENT_SOURCE, type StatusEvent } from '../../core/events/status-events';
import type { PublishedEvent, StatusEventLog } from '../../ports/status-events';

/** The embedded control plane's events without a data directory: kept in memory for `rollout events` of a `rollout serve`. */
export class MemoryEventLog implements StatusEventLog {
  private readonly events: PublishedEvent[] = [];

  publish(events: readonly StatusEvent[]): Promise<void> {
    for (const event of events) this.events.push({ seq: this.events.length + 1, source: EVENT_SOURCE, detailType: event.detailType, detail: event.detail });
    return Promise.resolve();
  }

  read(after = 0): Promise<PublishedEvent[]> {
    return Promise.resolve(this.events.slice(after));
  }
}

/**
 * The embedded control plane's events in its data directory: one JSON object a line, appended
 * (the process that owns the data directory is the only writer), read by `rollout events`.
 */
export class JsonLinesEventLog implements StatusEventLog {
  private seq: number | undefined;
  /** Appends in order, one after the other. */
  private tail: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  publish(events: readonly StatusEvent[]): Promise<void> {
    const write = this.tail.then(async () => {
      // A line a killed process left half-written is ended first, so that it does not swallow the next event.
      let endTornLine = false;
      if (this.seq === undefined) {
        this.seq = (await readEventLines(this.file)).length;
        endTornLine = !(await readFile(this.file, 'utf8').catch(() => '\n')).endsWith('\n');
      }
      const lines = events.map((event) =>
        JSON.stringify({ seq: ++this.seq!, source: EVENT_SOURCE, detailType: event.detailType, detail: event.detail } satisfies PublishedEvent),
      );
      if (lines.length > 0) await appendFile(this.file, `${endTornLine ? '\n' : ''}${lines.join('\n')}\n`);
    });
    this.tail = write.catch(() => undefined);
    return write;
  }

  async read(after = 0): Promise<PublishedEvent[]> {
    await this.tail;
    return (await readEventLines(this.file)).slice(after);
  }
}

/**
 * The events of a JSON-lines file; none if it does not exist yet. A last line still being written is
 * left out, and so is a line that is not a whole event (a write a crash cut short): `onTorn` hears
 * of it by its line number.
 */
export async function readEventLines(file: string, onTorn?: (line: number) => void): Promise<PublishedEvent[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const lines = text.split('\n');
  lines.pop(); // after the last newline: empty, or a line not yet complete
  const events: PublishedEvent[] = [];
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    const event = wholeEvent(line);
    if (event) events.push(event);
    else onTorn?.(i + 1);
  });
  return events;
}

function wholeEvent(line: string): PublishedEvent | undefined {
  try {
    const event = JSON.parse(line) as Partial<PublishedEvent> | null;
    return event && typeof event === 'object' && typeof event.detailType === 'string' && event.detail !== undefined ? (event as PublishedEvent) : undefined;
  } catch {
    return undefined;
  }
}
