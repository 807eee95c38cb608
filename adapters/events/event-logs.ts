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
      this.seq ??= (await readEventLines(this.file)).length;
      const lines = events.map((event) => JSON.stringify({ seq: ++this.seq!, source: EVENT_SOURCE, detailType: event.detailType, detail: event.detail } satisfies PublishedEvent));
      if (lines.length > 0) await appendFile(this.file, `${lines.join('\n')}\n`);
    });
    this.tail = write.catch(() => undefined);
    return write;
  }

  async read(after = 0): Promise<PublishedEvent[]> {
    await this.tail;
    return (await readEventLines(this.file)).slice(after);
  }
}

/** The events of a JSON-lines file; none if it does not exist yet. A last line still being written is left out. */
export async function readEventLines(file: string): Promise<PublishedEvent[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const lines = text.split('\n');
  lines.pop(); // after the last newline: empty, or a line not yet complete
  return lines.filter((line) => line.trim()).map((line) => JSON.parse(line) as PublishedEvent);
}
