import { EmbeddedRuntime, type EmbeddedRuntimeOptions } from '../../local/embedded-runtime';
import type { ExecutionOutcome } from '../../local/local-step-functions';
import type { SessionReport } from '../../control-plane/reports/session-report';

/** An embedded runtime on virtual time (unless the options give a timeScale): simulated durations are exact. */
export async function startTestRuntime(options: EmbeddedRuntimeOptions): Promise<EmbeddedRuntime> {
  return EmbeddedRuntime.start(options);
}

export interface FinishedRun {
  upgradeId: string;
  outcome: ExecutionOutcome;
  report: SessionReport;
}

/** Runs a rolling upgrade to its end and reads the session back. */
export async function runUpgrade(runtime: EmbeddedRuntime, request: unknown): Promise<FinishedRun> {
  const run = await runtime.run('rollingUpgrade', request);
  const outcome = await run.outcome;
  const found = await runtime.session(run.id);
  if (found?.kind !== 'upgrade') throw new Error(`no session after the run: ${outcome.status} ${outcome.error ?? ''} ${outcome.cause ?? ''}`);
  return { upgradeId: run.id, outcome, report: found.report };
}

/**
 * Runs `probe` each time every execution waits, before the clock moves on (on virtual time: so it
 * sees every simulated instant and misses no stage), until it returns a value. The probe runs as
 * work in progress; a test that acts on what it saw wraps the act in `runtime.clock.busy` too, so
 * that it lands at that same simulated instant.
 */
export async function eventually<T>(runtime: EmbeddedRuntime, probe: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await runtime.clock.busy(probe);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    try {
      await runtime.clock.settled();
    } catch (err) {
      throw new Error(`never saw ${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }
}
