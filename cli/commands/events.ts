import path from 'node:path';
import type { Command } from 'commander';
import { readEventLines } from '../../adapters/events/event-logs';
import { EVENTS_FILE } from '../../local/embedded-runtime';
import { fetchEvents } from '../../local/events-endpoint';
import type { PublishedEvent } from '../../ports/status-events';
import { formatShownInstant, showInstant, type ShownInstant } from '../../core/time-format';
import { existingDataDir } from '../data-dir-option';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';

interface EventsOptions {
  dataDir?: string;
  endpoint?: string;
  follow?: boolean;
  json?: boolean;
}

/** Real ms between two reads while following. */
const FOLLOW_POLL_MS = 500;

export function registerEventsCommand(program: Command): void {
  program
    .command('events')
    .description(
      "Show the status events of the embedded control plane: of a data directory (its events.jsonl) or of a running `rollout serve`. On AWS they go to the stack's EventBridge bus: subscribe with a rule.",
    )
    .option('--data-dir <dir>', 'data directory of the sessions')
    .option('--endpoint <url>', 'a running `rollout serve`')
    .option('--follow', 'keep showing new events until interrupted')
    .option('--json', "print each event as one JSON line, as stored (an instant on simulated time as seconds from its run's start)")
    .action(async (options: EventsOptions) => {
      if ((options.dataDir === undefined) === (options.endpoint === undefined))
        throw new CliError('give exactly one of --data-dir DIR and --endpoint URL', ExitCode.invalidInput);
      const file = options.dataDir === undefined ? '' : path.join(await existingDataDir(options.dataDir), EVENTS_FILE);
      const warned = new Set<number>();
      const warnTorn = (line: number) => {
        if (!warned.has(line)) process.stderr.write(`warning: ${file} line ${line} is not a whole event (a write cut short by a crash?): left out\n`);
        warned.add(line);
      };
      const read = options.dataDir
        ? async (after: number) => (await readEventLines(file, warnTorn)).slice(after)
        : (after: number) =>
            fetchEvents(options.endpoint!, after).catch((err: unknown) => {
              throw new CliError(err instanceof Error ? err.message : String(err), ExitCode.notCompleted);
            });
      let seen = 0;
      const shown = eventInstants();
      let stop = false;
      const interrupt = () => (stop = true);
      process.once('SIGINT', interrupt);
      try {
        do {
          const events = await read(seen);
          for (const event of events) {
            const at = shown(event);
            process.stdout.write(`${options.json ? JSON.stringify({ ...event, detail: { ...event.detail, at } }) : eventLine(event, at)}\n`);
          }
          seen += events.length;
          if (options.follow && !stop) await new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS));
        } while (options.follow && !stop);
      } finally {
        process.off('SIGINT', interrupt);
      }
    });
}

/**
 * Each event's instant as it is shown: an ISO date on the wall clock; on simulated time (the event says
 * so) seconds from its run's start, the instant of the run's first event (its Session Started).
 */
export function eventInstants(): (event: PublishedEvent) => ShownInstant {
  const starts = new Map<string, string>();
  return ({ detail }) => {
    if (!starts.has(detail.sessionId)) starts.set(detail.sessionId, detail.at);
    if (detail.timeBase !== 'simulated') return detail.at;
    return showInstant(detail.at, { timeBase: 'simulated', startedAt: starts.get(detail.sessionId)! });
  };
}

/** One readable line: time, detail-type, session, and what happened. */
export function eventLine(event: PublishedEvent, at: ShownInstant = event.detail.at): string {
  const d = event.detail as Record<string, unknown>;
  const parts: string[] = [];
  if (d.step !== undefined) parts.push(`step ${String(d.step)}${d.stepCount !== undefined ? ` of ${String(d.stepCount)}` : ''}`);
  if (d.group !== undefined) parts.push(`group ${String(d.group)}`);
  if (d.phase !== undefined) parts.push(String(d.phase));
  if (d.nodeCount !== undefined) parts.push(`${String(d.nodeCount)} node(s)`);
  if (d.upgraded !== undefined) parts.push(`${String(d.upgraded)} upgraded, ${String(d.failed)} failed`);
  if (d.stage !== undefined) parts.push(String(d.stage));
  if (d.outcome !== undefined) parts.push(`${String(d.outcome)} (${String(d.state)})`);
  if (Array.isArray(d.nodes)) parts.push(`${d.nodes.join(',')}: ${String(d.reason)}`);
  if (d.summary !== undefined) parts.push(String(d.summary));
  return `${typeof at === 'string' ? at : formatShownInstant(at)}  ${event.detailType.replace(/^Rollout /, '')}  ${String(d.kind)} ${String(d.sessionId)}  ${parts.join('  ')}`;
}
