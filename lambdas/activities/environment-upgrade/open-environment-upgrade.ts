import {
  failedUpgrade,
  ENVIRONMENT_UPGRADE_KIND,
  withMessages,
  type EnvironmentUpgradePlan,
  type EnvironmentUpgradePointer,
  type EnvironmentUpgradeSession,
} from '../../../core/environments';
import { InvalidInputError, SessionNotFoundError, UpgradeConflictError } from '../../../core/errors';
import { idForExecution, isPossibleSessionId } from '../../../core/execution-id';
import type { EnvironmentUpgradeDependencies } from './dependencies';
import { isRefusal, pointerTo, problemsOf, setEnvironmentStatus } from './phase-runner';
import { checkOnSite, planFromStore } from '../../../control-plane/request-checks/environment-upgrade-request';

/** What the workflow hands Open: its input and the execution's id. */
export interface OpenEnvironmentUpgradeEvent {
  input: unknown;
  executionId: string;
}

/** The workflow's input: the environment (the URL's id) and the request body, as the API starts it. */
export interface EnvironmentUpgradeInput {
  environmentId: number;
  request: unknown;
}

/** The input of an execution that carries a session on (continue-as-new). */
interface ContinuationInput {
  resumeUpgradeId: string;
  generation?: number;
}

const isContinuation = (input: unknown): input is ContinuationInput => typeof input === 'object' && input !== null && 'resumeUpgradeId' in input;

/**
 * Opens the session: stored first (so that whatever is refused next is on record, never a 404),
 * then the request checked against the environments and the site, each problem named, and the
 * environment claimed (one upgrade per environment at a time). Nothing on the site is touched here.
 */
export async function openEnvironmentUpgrade(event: OpenEnvironmentUpgradeEvent, deps: EnvironmentUpgradeDependencies): Promise<EnvironmentUpgradePointer> {
  const limits = { iteration: 0, iterationLimit: deps.settings.iterationsPerExecution, generation: 0 };
  if (isContinuation(event.input)) {
    const { resumeUpgradeId } = event.input;
    // An id no session can have is not looked up: a key over DynamoDB's limit is an error, not "not found".
    if (typeof resumeUpgradeId !== 'string' || !isPossibleSessionId(resumeUpgradeId)) throw new SessionNotFoundError(String(resumeUpgradeId));
    const stored = await deps.upgrades.getUpgrade(event.input.resumeUpgradeId);
    if (!stored) throw new SessionNotFoundError(event.input.resumeUpgradeId);
    const { generation } = event.input;
    if (generation !== undefined) await deps.upgrades.noteGeneration(resumeUpgradeId, generation);
    // A person's resume (the console's: no generation, which continue-as-new always carries) continues as new
    // after the newest generation of the session's earlier chains (their names, `<id>-g<n>`, are taken).
    return pointerTo(stored.session, { ...limits, generation: generation ?? stored.session.generation ?? 0 });
  }

  const input = (typeof event.input === 'object' && event.input !== null ? event.input : {}) as Partial<EnvironmentUpgradeInput>;
  const environmentId = Number.isSafeInteger(input.environmentId) && input.environmentId! > 0 ? input.environmentId! : 0;
  const now = deps.clock.now();
  const { session, revision } = await deps.upgrades.createUpgrade({
    upgradeId: idForExecution(event.executionId),
    kind: ENVIRONMENT_UPGRADE_KIND,
    environmentId,
    state: 'UPDATING',
    completed: false,
    createdAt: new Date(now).toISOString(),
    ...(deps.simulatedTime ? { simulatedTime: true, wallCreatedAt: new Date().toISOString() } : {}),
    progress: { phase: 'CLONING', phaseStartedAt: now, errorCount: 0 },
    messages: [],
  });
  // A retried Open finds the session it opened (or refused) and goes on from it.
  if (session.request || session.failure) return pointerTo(session, limits);

  let opened: EnvironmentUpgradeSession;
  try {
    if (environmentId === 0)
      throw new InvalidInputError('environment upgrade', [{ field: 'environmentId', message: 'must be the id of an environment (a whole number from 1)' }]);
    const plan = await planFromStore(deps.environments, environmentId, input.request);
    await checkOnSite(deps.site, plan);
    const holder = await deps.upgrades.claimEnvironment(environmentId, session.upgradeId);
    if (holder !== undefined)
      throw new UpgradeConflictError(`environment ${environmentId} cannot be upgraded now`, [
        { field: '', message: `environment upgrade ${holder} is upgrading it` },
      ]);
    const seedId = plan.seedDraft ? undefined : await deps.environments.seedOf(environmentId);
    opened = withMessages(
      {
        ...session,
        request: plan.request,
        releaseId: plan.target.id,
        rollingUpgrade: plan.rollingUpgrade,
        progress: { ...session.progress, phase: seedId === undefined ? 'CLONING' : 'ASSIGNING', ...(seedId === undefined ? {} : { seedId }) },
      },
      openedMessage(plan, seedId),
    );
    await setEnvironmentStatus(deps, environmentId, 'update');
  } catch (err) {
    if (!isRefusal(err)) throw err;
    opened = failedUpgrade(session, err.name, problemsOf(err), now);
  }
  await deps.upgrades.saveUpgrade(opened, revision);
  return pointerTo(opened, limits);
}

function openedMessage(plan: EnvironmentUpgradePlan, seedId: number | undefined): string {
  const { original, target, controllers, others, rollingUpgrade } = plan;
  const names = (nodes: readonly { name: string }[]) => nodes.map((n) => n.name).join(', ');
  return (
    `Environment upgrade of environment ${original.id} '${original.name}' to release ${target.id} (${target.name} ${target.version}, boot template '${target.bootTemplate}'): ` +
    `${seedId === undefined ? `clone upgrade seed '${plan.request.name}'` : `upgrade seed ${seedId}`}; controllers ${names(controllers)}; ` +
    `then ${others.length} other node(s) in steps of ${rollingUpgrade.upgradeStepSize}`
  );
}
