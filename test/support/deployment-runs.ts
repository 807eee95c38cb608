import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { InventoryNode } from '../../ports/site';
import type { DeploymentPlan } from '../../core/group-deployment/deployment-plan';
import { applyPhaseResult, phaseNodes } from '../../core/group-deployment/deployment-run-step';
import { groupRunState, startDeploymentRun, type DeploymentRunState } from '../../core/group-deployment/deployment-run-state';
import { summarizeDeploymentRun, type DeploymentRunResult } from '../../core/group-deployment/deployment-run-result';
import { groupsToStart } from '../../core/group-deployment/groups-to-start';
import { phaseWork } from '../../core/group-deployment/node-batches';
import { plannedGroup } from '../../core/group-deployment/deployment-plan';
import type { DeploymentPhase } from '../../core/group-deployment/stages';

/** One phase of one group as the workflow submits it: its nodes, split into batches by the group's concurrency. */
export interface PhaseAction {
  type: DeploymentPhase;
  group: string;
  nodes: string[];
  batches: string[][];
  maxConcurrency: number;
}

export const FIXTURES = path.join(__dirname, '..', '..', 'examples', 'strategies');

export function readStrategyFixture(file: string): string {
  return readFileSync(path.join(FIXTURES, file), 'utf8');
}

let nid = 0;
export function inventoryNode(name: string, extra: { rack?: string; tags?: string[]; labels?: Record<string, string>; role?: string } = {}): InventoryNode {
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

/**
 * Steps a run to its end with the core functions the workflow calls, one group at a time: Pick
 * Ready Groups (groupsToStart), then per group prepare and, if it prepared, deploy (Plan Phase,
 * Evaluate Phase), recording each phase.
 */
export function runToEnd(plan: DeploymentPlan, provisioner: Provisioner = (a) => a.nodes): RunLog {
  let state = startDeploymentRun(plan);
  const actions: PhaseAction[] = [];
  for (let step = 0; step < 1000; step++) {
    const [group] = groupsToStart(plan, state, 1);
    if (group === undefined) return { actions, state, result: summarizeDeploymentRun(plan, state) };
    for (const phase of ['PREPARE', 'DEPLOY'] as const) {
      if (phase === 'DEPLOY' && groupRunState(state, group).stage !== 'PREPARED') break;
      const nodes = phaseNodes(plan, state, group, phase);
      const action: PhaseAction = { type: phase, group, nodes, ...phaseWork(nodes, plannedGroup(plan, group).concurrency) };
      actions.push(action);
      state = applyPhaseResult(plan, state, { group, phase, succeededNodes: provisioner(action) });
    }
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
