import { DeploymentNotFoundError, InvalidInputError } from '../../../core/errors';
import { idForExecution } from '../../../core/execution-id';
import {
  SESSION_CONTROL_KEYS,
  resumeCarriesOn,
  resumedMessage,
  sessionControlOf,
  type CancelRequested,
  type StopRequested,
} from '../../../core/session-control';
import { isDeploymentEnded } from '../../../ports/deployment-store';
import { recordRefusal } from '../run-starts';
import { planDeployment, selectDeploymentStrategy, startDeploymentRun } from '../../../core/group-deployment';
import { parseDeploymentRequest } from '../../../core/group-deployment/deployment-request';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { eventTime, publishStatusEvents } from '../status-events';
import type { GroupDeploymentDependencies } from './dependencies';

export interface StartDeploymentEvent {
  input: unknown;
  executionId: string;
}

export interface DeploymentPointer {
  deploymentId: string;
  maxParallelGroups: number;
}

/**
 * Validates the request and the strategy (schema, then cycles, unknown and duplicate names) and
 * resolves the selectors against the inventory, all before any node is touched; then stores the
 * plan and a run with every group and node NOT_STARTED. The control inputs (core/session-control.ts)
 * resume a deployment, or write a cancel request and end the execution (the console's cancel).
 */
export async function startDeployment(
  event: StartDeploymentEvent,
  deps: GroupDeploymentDependencies,
): Promise<DeploymentPointer | CancelRequested | StopRequested> {
  const control = sessionControlOf(event.input, 'deployment', ['cancel', 'resume', 'stop']);
  if (control?.action === 'cancel') {
    const record = await deps.store.requestCancel(control.id);
    return { cancelRequested: { id: control.id, kind: 'deployment', state: record.status } };
  }
  if (control?.action === 'stop') {
    const record = await deps.store.requestStop(control.id);
    return { stopRequested: { id: control.id, kind: 'deployment', state: record.status } };
  }
  if (control?.action === 'resume') return resumeDeployment(control.id, deps);
  const deploymentId = idForExecution(event.executionId);
  let request;
  let plan;
  try {
    request = parseDeploymentRequest(event.input);
    const existing = await deps.store.getDeployment(deploymentId);
    if (existing) return { deploymentId, maxParallelGroups: existing.settings.maxParallelGroups };
    const inventory = await deps.inventory.listNodes();
    plan = planDeployment(selectDeploymentStrategy(request, inventory), inventory);
  } catch (err) {
    // Refused before anything was written: the deployment id says why from now on.
    if (err instanceof InvalidInputError) await recordRefusal(deps.starts, deploymentId, 'deployment', err, deps.clock.now(), deps.simulatedTime);
    throw err;
  }
  const { strategy: _strategy, nodes: _nodes, ...settings } = request;
  await deps.store.createDeployment(
    {
      deploymentId,
      createdAt: new Date(deps.clock.now()).toISOString(),
      ...(deps.simulatedTime ? { simulatedTime: true, wallCreatedAt: new Date().toISOString() } : {}),
      status: 'RUNNING',
      settings,
      state: startDeploymentRun(plan),
      groupCount: plan.order.length,
      nodeCount: plan.nodes.length,
    },
    plan,
  );
  const summary = `Deployment of ${plan.nodes.length} node(s) in ${plan.order.length} group(s)`;
  await publishStatusEvents(deps, [
    statusEvent(DETAIL_TYPES.sessionStarted, { kind: 'deployment', sessionId: deploymentId, at: eventTime(deps.clock.now()), summary }, 'session'),
  ]);
  return { deploymentId, maxParallelGroups: settings.maxParallelGroups };
}

/**
 * A deployment whose execution died goes on from the store: groups already DEPLOYED or FAILED stay
 * so, the ones in flight start their phase again (a batch's site action is named after the batch,
 * so one that already ran is read back, not run again). One that ended is refused, naming it.
 */
async function resumeDeployment(deploymentId: string, deps: GroupDeploymentDependencies): Promise<DeploymentPointer> {
  const record = await deps.store.getDeployment(deploymentId);
  if (!record) throw new DeploymentNotFoundError(deploymentId);
  if (isDeploymentEnded(record.status)) {
    throw new InvalidInputError('resume request', [
      { field: SESSION_CONTROL_KEYS.deployment.resume, message: `deployment ${deploymentId} has ended (${record.status}): nothing to resume` },
    ]);
  }
  // A stopped deployment, or one whose stop nothing finished (its process died), runs again: its groups in flight start their phase again.
  if (resumeCarriesOn(record.status)) {
    const reopened = await deps.store.reopenStopped(deploymentId);
    // Said as an upgrade and a task run say it (core/session-control.ts).
    if (reopened.status === 'RUNNING') await deps.store.messages.append(deploymentId, resumedMessage(record.status));
  }
  return { deploymentId, maxParallelGroups: record.settings.maxParallelGroups };
}
