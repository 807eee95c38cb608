import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { InventoryNode } from '../../ports/site';
import type { DeploymentPlan } from '../../core/group-deployment/deployment-plan';
import {
  applyPhaseResult,
  nextDeploymentAction,
  type PhaseAction,
} from '../../core/group-deployment/deployment-run-step';
import { startDeploymentRun, type DeploymentRunState } from '../../core/group-deployment/deployment-run-state';
import type { DeploymentRunResult } from '../../core/group-deployment/deployment-run-result';

export const FIXTURES = path.join(__dirname, '..', '..', 'examples', 'strategies');

export function readStrategyFixture(file: string): string {
  return readFileSync(path.join(FIXTURES, file), 'utf8');
}

let nid = 0;
export function inventoryNode(
  name: string,
  extra: { rack?: string; tags?: string[]; labels?: Record<string, string>; role?: string } = {},
): InventoryNode {
  return {
    name,
    nid: ++nid,
    role: extra.role ?? 'Compute',
    tags: extra.tags ?? [],
    labels: extra.labels ?? {},
    ...(extra.rack === undefined ? {} : { rack: extra.rack }),
  };
}

/** A site for the seed's example strategy: every group has nodes, and the groups overlap. */
export function seedInventory(): InventoryNode[] {
  return [
    inventoryNode('ntp01', { rack: 'rack01', tags: ['ntp'] }),
    ...['ctl01', 'ctl02', 'ctl03', 'ctl04'].map((n) => inventoryNode(n, { rack: 'rack03', tags: ['control'] })),
    ...['cmp101', 'cmp102', 'cmp103', 'cmp104'].map((n) => inventoryNode(n, { rack: 'rack01', tags: ['compute'] })),
    ...['cmp201', 'cmp202', 'cmp203', 'cmp204'].map((n) => inventoryNode(n, { rack: 'rack02', tags: ['compute'] })),
    inventoryNode('mon01', { rack: 'rack01', tags: ['monitoring'] }),
    inventoryNode('mon02', { rack: 'rack02', tags: ['monitoring', 'compute'] }),
    inventoryNode('mon03', { rack: 'rack03', tags: ['monitoring', 'control'] }),
    inventoryNode('spare01', { rack: 'rack04', tags: ['compute'] }),
  ];
}

/** Decides which submitted nodes succeed; by default all of them. */
export type Provisioner = (action: PhaseAction) => readonly string[];

export interface RunLog {
  actions: PhaseAction[];
  state: DeploymentRunState;
  result: DeploymentRunResult;
}

/** Steps a run to its end the way a workflow would, recording each action. */
export function runToEnd(plan: DeploymentPlan, provisioner: Provisioner = (a) => a.nodes): RunLog {
  let state = startDeploymentRun(plan);
  const actions: PhaseAction[] = [];
  for (let step = 0; step < 1000; step++) {
    const action = nextDeploymentAction(plan, state);
    if (action.type === 'DONE') return { actions, state, result: action.result };
    actions.push(action);
    state = applyPhaseResult(plan, state, { group: action.group, phase: action.type, succeededNodes: provisioner(action) });
  }
  throw new Error('run did not finish');
}

/** `PREPARE ntp-node`, `DEPLOY ntp-node`, ... */
export function describeActions(actions: readonly PhaseAction[]): string[] {
  return actions.map((a) => `${a.type} ${a.group}`);
}

/** Catches and returns a thrown error for property assertions. */
export function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}
