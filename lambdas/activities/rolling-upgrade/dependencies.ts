import type { Logger } from '@aws-lambda-powertools/logger';
import type { Clock } from '../../../core/clock';
import type { UpgradeSession } from '../../../core/rolling-upgrade/session';
import type { RunStartStore } from '../../../ports/run-start-store';
import type { SessionStore } from '../../../ports/session-store';
import type { Site } from '../../../ports/site';
import type { StatusEventPublisher } from '../../../ports/status-events';
import type { PlanCache } from './plan-cache';

/** What every rolling-upgrade handler is built from: injected, never read from globals. */
export interface RollingUpgradeDependencies {
  store: SessionStore;
  site: Site;
  clock: Clock;
  settings: RollingUpgradeSettings;
  /** The clock is a simulated one (a simulated site): sessions say so, and their instants are never shown as dates. */
  simulatedTime?: boolean;
  /** The activities' structured logger; by default one at POWERTOOLS_LOG_LEVEL (lambdas/activities/middleware.ts). */
  logger?: Logger;
  /** Where status events go (an EventBridge bus, the data dir's events file); none without it. */
  events?: StatusEventPublisher;
  /** Where Open Session records a refused request, so that the session id says why; none without it. */
  starts?: RunStartStore;
  /** The plan names this container has read (mode window): built by the handler factory, one per container. */
  planCache?: PlanCache;
}

export interface RollingUpgradeSettings {
  /**
   * Loop iterations one execution may run before it continues as a new execution.
   * An iteration costs at most 11 history events, so 1,000 keeps an execution near 11,000 of the 25,000 allowed.
   */
  iterationsPerExecution: number;
  /** Nodes one CANCELLING increment fails at most, so one invocation stays short at any fleet size. */
  cancelChunkSize: number;
  /** Concurrent calls to the site within one handler invocation. */
  siteConcurrency: number;
  /**
   * Lease of the session's node locks, renewed a quarter lease apart (the heartbeat, at the first
   * increment a quarter lease after the last renewal: heartbeatDue). Its other three quarters are
   * several times the longest wait between two increments (a poll backoff capped at 300 s, a Lambda
   * of at most 15 min): only a dead session lets it run out. A session polling slower gets 4 poll intervals.
   */
  lockLeaseSeconds: number;
}

export const defaultSettings: RollingUpgradeSettings = {
  iterationsPerExecution: 1000,
  cancelChunkSize: 500,
  siteConcurrency: 16,
  lockLeaseSeconds: 3600,
};

/** The lease a session's locks get: the configured one, or 4 poll intervals if the session polls slower. */
export function lockLeaseSeconds(settings: RollingUpgradeSettings, session: UpgradeSession): number {
  return Math.max(settings.lockLeaseSeconds, 4 * session.pollIntervalSeconds);
}
