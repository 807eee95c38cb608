import {
  failedUpgrade,
  deletedUpgrade,
  upgradeInPhase,
  childExecutionName,
  childUpgradeRequest,
  executionArnOf,
  withMessages,
  type ChildUpgrade,
  type EnvironmentUpgradeSession,
} from '../../../core/environments';
import { EnvironmentResourceNotFoundError, InvalidInputError, SessionNotCancellableError, StaleWriteError } from '../../../core/errors';
import { idForExecution } from '../../../core/execution-id';
import type { NodeRecord } from '../../../core/rolling-upgrade/session';
import type { EnvironmentUpgradeDependencies } from './dependencies';
import { setEnvironmentStatus, type PhaseBody, type PhaseContext, type PhaseOutcome } from './phase-runner';
import { isController } from './seed-phases';

type ChildPhase = 'CONTROLLERS' | 'NODES';
const childKey = (phase: ChildPhase) => (phase === 'CONTROLLERS' ? 'controllers' : 'nodes');

function childPhase(session: EnvironmentUpgradeSession): ChildPhase {
  const { phase } = session.progress;
  if (phase !== 'CONTROLLERS' && phase !== 'NODES') throw new Error(`phase ${phase} runs no rolling upgrade`);
  return phase;
}

async function environmentOf(deps: EnvironmentUpgradeDependencies, id: number) {
  const stored = await deps.environments.getEnvironment(id);
  if (!stored) throw new EnvironmentResourceNotFoundError('environment', id);
  return stored.environment;
}

/** The site node names a phase upgrades: the seed's controllers, or the nodes still in the original. */
async function phaseNodes(deps: EnvironmentUpgradeDependencies, session: EnvironmentUpgradeSession, phase: ChildPhase): Promise<string[]> {
  if (phase === 'NODES') return (await environmentOf(deps, session.environmentId)).nodes.map((node) => node.name);
  return (await environmentOf(deps, session.progress.seedId!)).nodes.filter(isController(session.request!.controller_roles)).map((node) => node.name);
}

/**
 * Makes the starting group hold exactly `nodes`. It may hold nothing but the environment's and the
 * seed's nodes (checked before the upgrade started, and again here): another's node is never removed.
 */
async function setStartingGroup(deps: EnvironmentUpgradeDependencies, session: EnvironmentUpgradeSession, nodes: readonly string[]): Promise<void> {
  const label = session.rollingUpgrade!.startingLabel;
  const ours = new Set(
    [...(await environmentOf(deps, session.environmentId)).nodes, ...(await environmentOf(deps, session.progress.seedId!)).nodes].map((n) => n.name),
  );
  const members = await deps.site.inventory.getGroupMembers(label);
  const foreign = members.filter((member) => !ours.has(member));
  if (foreign.length > 0) {
    throw new InvalidInputError('environment upgrade', [
      {
        field: 'rolling_upgrade.startingLabel',
        message: `group '${label}' now holds nodes outside environment ${session.environmentId}: ${foreign.slice(0, 5).join(', ')}`,
      },
    ]);
  }
  const wanted = new Set(nodes);
  const remove = members.filter((member) => !wanted.has(member));
  const add = nodes.filter((node) => !members.includes(node));
  if (remove.length > 0) await deps.site.inventory.removeGroupMembers(label, remove);
  if (add.length > 0) await deps.site.inventory.addGroupMembers(label, add);
}

/**
 * CONTROLLERS or NODES, before the child runs: the starting group set to the phase's nodes, the
 * child named (its session id derived from its execution ARN) and recorded, then started by the
 * workflow. Asked again before the child has opened its session, it asks for the same start (by
 * name, with the same input: Step Functions answers with the same execution, or that it exists).
 */
export function prepareRollingUpgrade(rollingUpgradeStateMachineArn: string): PhaseBody {
  return async ({ session, deps, now }) => {
    const phase = childPhase(session);
    const key = childKey(phase);
    const recorded = session.progress[key];
    if (recorded && (await deps.sessions.getSession(recorded.upgradeId))) return { session, waitSeconds: 0 };
    if (session.state === 'DELETING' && !recorded)
      return { session: deletedUpgrade(session, `the rolling upgrade of the ${key} was not started`, now), waitSeconds: 0 };

    const nodes = recorded?.nodes ?? (await phaseNodes(deps, session, phase));
    if (nodes.length === 0) {
      if (phase === 'CONTROLLERS')
        throw new InvalidInputError('environment upgrade', [
          { field: 'controller_roles', message: `upgrade seed ${session.progress.seedId} holds no controller` },
        ]);
      return { session: await completed(deps, session, [], [], now), waitSeconds: 0 };
    }
    if (!recorded) await setStartingGroup(deps, session, nodes);
    const executionName = childExecutionName(session.upgradeId, phase);
    const child: ChildUpgrade = { executionName, upgradeId: idForExecution(executionArnOf(rollingUpgradeStateMachineArn, executionName)), nodes };
    const input = childUpgradeRequest({ rollingUpgrade: session.rollingUpgrade! }, phase, nodes.length);
    const next = recorded
      ? session
      : withMessages(
          { ...session, progress: { ...session.progress, [key]: child } },
          `Rolling upgrade of the ${key} (${nodes.length}: ${nodes.slice(0, 10).join(', ')}${nodes.length > 10 ? ', ...' : ''}) with template '${input.upgradeTemplateId}': session ${child.upgradeId}`,
        );
    return { session: next, waitSeconds: 0, start: { name: executionName, input } };
  };
}

/**
 * CONTROLLERS or NODES, while the child runs: polls its session, passes a deletion on (the CRUS
 * deletion rules apply to its nodes). Once it has ended: a controller that did not come back fails
 * the upgrade (the other nodes are not touched); else the NODES phase follows. After NODES, each
 * node that upgraded moves into the seed; one that failed stays in the original, named.
 */
export const followRollingUpgrade: PhaseBody = async (context) => {
  const { session, deps, now } = context;
  const phase = childPhase(session);
  const child = session.progress[childKey(phase)];
  // Not prepared (a resumed execution): Dispatch goes to Prepare.
  if (!child) return { session, waitSeconds: 0 };
  const poll = session.rollingUpgrade!.pollIntervalSeconds;
  const run = await deps.sessions.getSession(child.upgradeId);
  if (!run) {
    if (now - session.progress.phaseStartedAt > deps.settings.childOpenTimeoutSeconds * 1000) {
      return {
        session: failedUpgrade(
          session,
          'RollingUpgradeNotOpened',
          [
            {
              field: '',
              message: `rolling upgrade ${child.executionName} did not open session ${child.upgradeId} within ${deps.settings.childOpenTimeoutSeconds} s`,
            },
          ],
          now,
        ),
        waitSeconds: 0,
      };
    }
    return { session, waitSeconds: poll, following: true };
  }
  if (run.progress.stage !== 'COMPLETE') {
    if (session.state !== 'DELETING' || run.state !== 'UPDATING') return { session, waitSeconds: poll, following: true };
    try {
      await deps.sessions.requestCancel(child.upgradeId);
    } catch (err) {
      if (!(err instanceof SessionNotCancellableError)) throw err;
    }
    return {
      session: withMessages(session, `Deletion passed on to rolling upgrade ${child.upgradeId}: it applies the CRUS deletion rules`),
      waitSeconds: poll,
      following: true,
    };
  }
  return ended(context, phase, child, run.state, await deps.sessions.listNodes(child.upgradeId));
};

async function ended(context: PhaseContext, phase: ChildPhase, child: ChildUpgrade, childState: string, records: readonly NodeRecord[]): Promise<PhaseOutcome> {
  const { session, deps, now } = context;
  const byName = new Map(records.map((record) => [record.name, record]));
  const upgraded = child.nodes.filter((name) => byName.get(name)?.status === 'UPGRADED');
  const notUpgraded = child.nodes.filter((name) => byName.get(name)?.status !== 'UPGRADED');
  const why = (name: string) => byName.get(name)?.reason ?? (byName.get(name)?.status ?? 'NOT_STARTED').toLowerCase().replace('_', ' ');

  if (phase === 'NODES')
    return {
      session: await completed(
        deps,
        session,
        upgraded,
        notUpgraded.map((name) => `${name} (${why(name)})`),
        now,
      ),
      waitSeconds: 0,
    };
  if (session.state === 'DELETING')
    return { session: deletedUpgrade(session, `the rolling upgrade of the controllers ended ${childState}`, now), waitSeconds: 0 };
  if (notUpgraded.length > 0 || childState === 'DELETED') {
    await setEnvironmentStatus(deps, session.progress.seedId!, 'error');
    await setEnvironmentStatus(deps, session.environmentId, 'update_error');
    const problems = notUpgraded.map((name) => ({
      field: 'nodes',
      message: `controller '${name}' did not come back on release ${session.releaseId}: ${why(name)}`,
    }));
    if (childState === 'DELETED') problems.push({ field: '', message: `rolling upgrade ${child.upgradeId} was deleted` });
    return { session: failedUpgrade(session, 'ControllerUpgradeFailed', problems, now), waitSeconds: 0 };
  }
  await setEnvironmentStatus(deps, session.progress.seedId!, 'operational');
  return {
    session: withMessages(upgradeInPhase(session, 'NODES', now), `Controllers back in service on release ${session.releaseId}: ${upgraded.join(', ')}`),
    waitSeconds: 0,
  };
}

/**
 * The end: each upgraded node moves into the seed (one conditional write each; one already there
 * stays); the others stay in the original, named. READY and completed, as CRUS ends a session
 * whose nodes partly failed; DELETED when a deletion ended it.
 */
async function completed(
  deps: EnvironmentUpgradeDependencies,
  session: EnvironmentUpgradeSession,
  upgraded: readonly string[],
  left: readonly string[],
  now: number,
): Promise<EnvironmentUpgradeSession> {
  const seedId = session.progress.seedId!;
  const original = await environmentOf(deps, session.environmentId);
  const idOf = new Map(original.nodes.map((node) => [node.name, node.id]));
  for (const name of upgraded) {
    const id = idOf.get(name);
    if (id === undefined) continue;
    try {
      await deps.environments.moveNode(id, session.environmentId, seedId);
    } catch (err) {
      if (!(err instanceof StaleWriteError) || (await deps.environments.getNode(id))?.clusterId !== seedId) throw err;
    }
  }
  const remaining = (await environmentOf(deps, session.environmentId)).nodes.length;
  await setEnvironmentStatus(deps, seedId, 'operational');
  await setEnvironmentStatus(deps, session.environmentId, remaining > 0 ? 'update_error' : 'stopped');
  const summary = `${upgraded.length} node(s) upgraded and moved to upgrade seed ${seedId}${left.length > 0 ? `; left in environment ${session.environmentId}: ${left.join(', ')}` : ''}`;
  if (session.state === 'DELETING') return deletedUpgrade(session, summary, now);
  return withMessages(
    { ...session, state: 'READY', completed: true, progress: { ...session.progress, phase: 'COMPLETE', phaseStartedAt: now } },
    `Environment Upgrade Completed: ${summary}`,
  );
}
