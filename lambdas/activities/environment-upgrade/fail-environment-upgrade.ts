import { failedUpgrade, ENVIRONMENT_UPGRADE_KIND, upgradeHasEnded, type EnvironmentUpgradePointer } from '../../../core/environments';
import { idForExecution } from '../../../core/execution-id';
import type { EnvironmentUpgradeDependencies } from './dependencies';
import { pointerTo } from './phase-runner';

/** What Record Failure hands the function: the state the error was caught in (with `error`), and the execution's id. */
export interface FailEnvironmentUpgradeEvent {
  state: { upgradeId?: string; resumeUpgradeId?: string; environmentId?: number; error?: { Error?: string; Cause?: string } } & Record<string, unknown>;
  executionId: string;
}

/** A Lambda error's Cause is its error JSON: the message is what an operator reads. */
function causeText(cause: string | undefined): string {
  if (!cause) return 'no cause given';
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    return typeof parsed.errorMessage === 'string' ? parsed.errorMessage : cause;
  } catch {
    return cause;
  }
}

/**
 * An error no phase absorbed (a bug, a Lambda that kept failing, a start the service refused): the
 * session is marked FAILED with it, created if Open never stored it, so the session says why.
 */
export async function failEnvironmentUpgrade(event: FailEnvironmentUpgradeEvent, deps: EnvironmentUpgradeDependencies): Promise<EnvironmentUpgradePointer> {
  const { state } = event;
  const upgradeId = state.upgradeId ?? state.resumeUpgradeId ?? idForExecution(event.executionId);
  const limits = { iteration: 0, iterationLimit: deps.settings.iterationsPerExecution, generation: 0 };
  const now = deps.clock.now();
  const stored =
    (await deps.upgrades.getUpgrade(upgradeId)) ??
    (await deps.upgrades.createUpgrade({
      upgradeId,
      kind: ENVIRONMENT_UPGRADE_KIND,
      environmentId: Number.isSafeInteger(state.environmentId) ? state.environmentId! : 0,
      state: 'UPDATING',
      completed: false,
      createdAt: new Date(now).toISOString(),
      ...(deps.simulatedTime ? { simulatedTime: true, wallCreatedAt: new Date().toISOString() } : {}),
      progress: { phase: 'CLONING', phaseStartedAt: now, errorCount: 0 },
      messages: [],
    }));
  if (upgradeHasEnded(stored.session)) return pointerTo(stored.session, limits);
  const failure = failedUpgrade(stored.session, state.error?.Error ?? 'States.Runtime', [{ field: '', message: causeText(state.error?.Cause) }], now);
  await deps.upgrades.saveUpgrade(failure, stored.revision);
  return pointerTo(failure, limits);
}
