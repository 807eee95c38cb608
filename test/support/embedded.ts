import { EmbeddedRuntime, type EmbeddedRuntimeOptions } from '../../engine/embedded-runtime';
import type { ExecutionOutcome } from '../../engine/local-step-functions';
import type { SessionReport } from '../../engine/reports/session-report';

/** Simulated time in tests: fast, with margins that real-time jitter cannot eat (10 ms real = 10 s simulated). */
export const TEST_TIME_SCALE = 1000;

export async function startTestRuntime(options: EmbeddedRuntimeOptions): Promise<EmbeddedRuntime> {
  return EmbeddedRuntime.start({ timeScale: TEST_TIME_SCALE, ...options });
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

/** Polls `probe` until it returns a value (bounded), for waiting on a session reaching a stage. */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
