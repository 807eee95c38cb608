import type { Logger } from '@aws-lambda-powertools/logger';
import { LOG_MESSAGES } from '../../contracts';
import type { StatusEvent } from '../../core/events/status-events';
import type { StatusEventPublisher } from '../../ports/status-events';
import { createActivityLogger } from './middleware';

let fallbackLogger: Logger | undefined;

/**
 * Publishes status events after the store write they report. Best effort: the store is the truth
 * and the workflow goes on if the bus refuses (the failure is logged); a retried handler publishes
 * the same event ids again, which consumers dedupe.
 */
export async function publishStatusEvents(
  deps: { events?: StatusEventPublisher; logger?: Logger; simulatedTime?: boolean },
  events: readonly StatusEvent[],
): Promise<void> {
  if (!deps.events || events.length === 0) return;
  try {
    // On a simulated clock the events say so: their `at` is not a date.
    await deps.events.publish(deps.simulatedTime ? events.map((e) => ({ ...e, detail: { ...e.detail, timeBase: 'simulated' } }) as StatusEvent) : events);
  } catch (err) {
    fallbackLogger ??= createActivityLogger();
    (deps.logger ?? fallbackLogger).warn(LOG_MESSAGES.statusEventsNotPublished, {
      detailTypes: events.map((e) => e.detailType),
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/** The ISO time of an epoch ms, as events carry it. */
export const eventTime = (ms: number): string => new Date(ms).toISOString();
