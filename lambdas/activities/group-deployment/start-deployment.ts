import { InvalidInputError } from '../../../core/errors';
import { idForExecution } from '../../../core/execution-id';
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
 * plan and a run with every group and node NOT_STARTED.
 */
export async function startDeployment(event: StartDeploymentEvent, deps: GroupDeploymentDependencies): Promise<DeploymentPointer> {
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
    if (err instanceof InvalidInputError) await recordRefusal(deps.starts, deploymentId, 'deployment', err, deps.clock.now());
    throw err;
  }
  const { strategy: _strategy, nodes: _nodes, ...settings } = request;
  await deps.store.createDeployment(
    {
      deploymentId,
      createdAt: new Date(deps.clock.now()).toISOString(),
      status: 'RUNNING',
      settings,
      state: startDeploymentRun(plan),
      groupCount: plan.order.length,
      nodeCount: plan.nodes.length,
    },
    plan,
  );
  const summary = `Deployment of ${plan.nodes.length} node(s) in ${plan.order.length} group(s)`;
  await publishStatusEvents(deps, [statusEvent(DETAIL_TYPES.sessionStarted, { kind: 'deployment', sessionId: deploymentId, at: eventTime(deps.clock.now()), summary }, 'session')]);
  return { deploymentId, maxParallelGroups: settings.maxParallelGroups };
}
