import { planDeployment, type DeploymentPlan, plannedGroup } from '../../../core/group-deployment/deployment-plan';
import { summarizeDeployment, summarizeDeploymentRun } from '../../../core/group-deployment/deployment-run-result';
import { cascadeFailure, groupRunState, readyGroups, startDeploymentRun, type DeploymentRunState } from '../../../core/group-deployment/deployment-run-state';
import { applyPhaseResult, phaseNodes } from '../../../core/group-deployment/deployment-run-step';
import { applyInterruptedPhase } from '../../../core/group-deployment/deployment-cancel';
import { groupsToStart } from '../../../core/group-deployment/groups-to-start';
import { phaseWork } from '../../../core/group-deployment/node-batches';
import { DeploymentRunNotFinishedError, IllegalStageTransitionError, UnexpectedPhaseResultError, UnknownDeploymentGroupError } from '../../../core/errors';
import { parseDeploymentStrategy } from '../../../core/group-deployment/parse-strategy';
import type { InventoryNode } from '../../../ports/site';
import { describeActions, inventoryNode, readStrategyFixture, runToEnd, seedInventory, thrownBy } from '../../support/deployment-runs';

const seedPlan = () => planDeployment(parseDeploymentStrategy(readStrategyFixture('shipyard-example.yaml')), seedInventory());

interface GroupSpec {
  dependsOn?: string[];
  nodes?: string[];
  critical?: boolean;
  criteria?: Record<string, number>;
  strategy?: Record<string, unknown>;
}

/** A plan whose groups select nodes by name from an inventory of every node named. */
function planOf(groups: Record<string, GroupSpec>, extraNodes: InventoryNode[] = []): DeploymentPlan {
  const names = new Set(Object.values(groups).flatMap((g) => g.nodes ?? []));
  const strategy = parseDeploymentStrategy({
    groups: Object.entries(groups).map(([name, g]) => ({
      name,
      critical: g.critical ?? false,
      depends_on: g.dependsOn ?? [],
      selectors: [{ node_names: g.nodes ?? [] }],
      ...(g.criteria ? { success_criteria: g.criteria } : {}),
      ...(g.strategy ? { strategy: g.strategy } : {}),
    })),
  });
  return planDeployment(strategy, [...[...names].map((n) => inventoryNode(n)), ...extraNodes]);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

describe('a deployment run of the seed example', () => {
  it('starts with the groups that depend on nothing ready', () => {
    const plan = seedPlan();
    expect(readyGroups(plan, startDeploymentRun(plan))).toEqual(['monitoring-nodes', 'ntp-node']);
  });

  it('prepares then deploys each group in order and succeeds', () => {
    const { actions, result } = runToEnd(seedPlan());
    expect(describeActions(actions)).toEqual([
      'PREPARE monitoring-nodes',
      'DEPLOY monitoring-nodes',
      'PREPARE ntp-node',
      'DEPLOY ntp-node',
      'PREPARE control-nodes',
      'DEPLOY control-nodes',
      'PREPARE compute-nodes-1',
      'DEPLOY compute-nodes-1',
      'PREPARE compute-nodes-2',
      'DEPLOY compute-nodes-2',
    ]);
    expect(actions[4]).toEqual({
      type: 'PREPARE',
      group: 'control-nodes',
      nodes: ['ctl01', 'ctl02', 'ctl03', 'ctl04'],
      batches: [['ctl01', 'ctl02', 'ctl03', 'ctl04']],
      maxConcurrency: 1,
    });
    expect(result.status).toBe('SUCCEEDED');
    expect(result).toMatchObject({ criticalGroupsFailed: false, failedCriticalGroups: [], cause: 'Every critical group deployed' });
    expect(Object.values(result.nodes).every((stage) => stage === 'DEPLOYED')).toBe(true);
    expect(result.groups['control-nodes']).toEqual({
      stage: 'DEPLOYED',
      critical: true,
      nodes: ['ctl01', 'ctl02', 'ctl03', 'ctl04', 'mon03'],
      failures: [],
    });
  });

  it('fails the dependants of ntp-node when it fails to prepare, and the deployment with them', () => {
    const { actions, result } = runToEnd(seedPlan(), (a) => (a.group === 'ntp-node' ? [] : a.nodes));
    expect(describeActions(actions)).toEqual(['PREPARE monitoring-nodes', 'DEPLOY monitoring-nodes', 'PREPARE ntp-node']);
    expect(result.status).toBe('FAILED');
    expect(result).toMatchObject({
      criticalGroupsFailed: true,
      failedCriticalGroups: ['ntp-node', 'control-nodes'],
      cause: 'Critical groups failed: ntp-node, control-nodes',
    });
    expect(result.groups['ntp-node']).toMatchObject({
      stage: 'FAILED',
      failures: [{ criteria: 'minimum_successful_nodes', needed: 1, actual: 0 }],
    });
    for (const name of ['control-nodes', 'compute-nodes-1', 'compute-nodes-2']) {
      expect(result.groups[name]).toMatchObject({ stage: 'FAILED', failures: [], blockedBy: 'ntp-node' });
    }
    expect(result.groups['monitoring-nodes']?.stage).toBe('DEPLOYED');
    expect(result.nodes).toMatchObject({ ntp01: 'FAILED', ctl01: 'NOT_STARTED', cmp101: 'NOT_STARTED', mon01: 'DEPLOYED' });
  });

  it('succeeds with a non-critical group failed when compute-nodes-2 fails to deploy', () => {
    const { actions, result } = runToEnd(seedPlan(), (a) => (a.group === 'compute-nodes-2' && a.type === 'DEPLOY' ? [] : a.nodes));
    expect(actions).toHaveLength(10);
    expect(result.status).toBe('SUCCEEDED');
    // mon02, deployed by monitoring-nodes, still counts: 1 of 5.
    expect(result.groups['compute-nodes-2']).toMatchObject({
      stage: 'FAILED',
      failures: [{ criteria: 'percent_successful_nodes', needed: 50, actual: 20 }],
    });
    expect(result.nodes).toMatchObject({ cmp201: 'FAILED', mon02: 'DEPLOYED', cmp101: 'DEPLOYED' });
  });
});

describe('cascading failure', () => {
  const chain = () =>
    planOf({
      a: { nodes: ['n1'] },
      b: { dependsOn: ['a'], nodes: ['n2'], criteria: { minimum_successful_nodes: 1 } },
      c: { dependsOn: ['b'], nodes: ['n3'] },
      d: { dependsOn: ['c'], nodes: ['n4'] },
    });

  it('fails everything down a chain, each blocked by the group that failed', () => {
    const { actions, result } = runToEnd(chain(), (a) => (a.group === 'b' ? [] : a.nodes));
    expect(describeActions(actions)).toEqual(['PREPARE a', 'DEPLOY a', 'PREPARE b']);
    expect(result.groups.a?.stage).toBe('DEPLOYED');
    expect(result.groups.b).toMatchObject({ stage: 'FAILED' });
    expect(result.groups.b?.blockedBy).toBeUndefined();
    expect(result.groups.c).toMatchObject({ stage: 'FAILED', blockedBy: 'b' });
    expect(result.groups.d).toMatchObject({ stage: 'FAILED', blockedBy: 'b' });
    expect(result.nodes).toEqual({ n1: 'DEPLOYED', n2: 'FAILED', n3: 'NOT_STARTED', n4: 'NOT_STARTED' });
  });

  const diamond = () =>
    planOf({
      top: { nodes: ['t'] },
      left: { dependsOn: ['top'], nodes: ['l'], criteria: { maximum_failed_nodes: 0 } },
      right: { dependsOn: ['top'], nodes: ['r'] },
      bottom: { dependsOn: ['left', 'right'], nodes: ['b'], critical: true },
    });

  it('fails the bottom of a diamond when one side fails, while the other side still deploys', () => {
    const { actions, result } = runToEnd(diamond(), (a) => (a.group === 'left' && a.type === 'DEPLOY' ? [] : a.nodes));
    expect(describeActions(actions)).toEqual(['PREPARE top', 'DEPLOY top', 'PREPARE left', 'DEPLOY left', 'PREPARE right', 'DEPLOY right']);
    expect(result.groups.right?.stage).toBe('DEPLOYED');
    expect(result.groups.bottom).toMatchObject({ stage: 'FAILED', blockedBy: 'left' });
    expect(result).toMatchObject({ status: 'FAILED', criticalGroupsFailed: true, failedCriticalGroups: ['bottom'] });
  });

  it('fails a whole diamond once when its top fails', () => {
    const plan = diamond();
    const state = cascadeFailure(plan, startDeploymentRun(plan), 'top');
    expect(Object.entries(state.groups).map(([name, g]) => [name, g.stage, g.blockedBy])).toEqual([
      ['top', 'FAILED', undefined],
      ['left', 'FAILED', 'top'],
      ['right', 'FAILED', 'top'],
      ['bottom', 'FAILED', 'top'],
    ]);
  });

  it('leaves a descendant that already failed as it was', () => {
    const plan = diamond();
    const afterLeft = cascadeFailure(plan, startDeploymentRun(plan), 'left');
    const afterRight = cascadeFailure(plan, afterLeft, 'right');
    expect(groupRunState(afterRight, 'bottom')).toEqual({ stage: 'FAILED', failures: [], blockedBy: 'left' });
    expect(() => cascadeFailure(plan, afterRight, 'left')).toThrow(IllegalStageTransitionError);
  });

  it('does not change the state it is given', () => {
    const plan = diamond();
    const state = deepFreeze(startDeploymentRun(plan));
    const copy = JSON.parse(JSON.stringify(state)) as DeploymentRunState;
    cascadeFailure(plan, state, 'top');
    expect(state).toEqual(copy);
  });
});

describe('overlapping groups', () => {
  // 'second' selects n1 and n2 again; it only submits n3, but its criteria count all three.
  const overlap = (criteria: Record<string, number>) =>
    planOf({ first: { nodes: ['n1', 'n2'] }, second: { dependsOn: ['first'], nodes: ['n1', 'n2', 'n3'], criteria } });

  it('submits only nodes no earlier group handled, while success counts nodes handled earlier', () => {
    const { actions, result } = runToEnd(overlap({ minimum_successful_nodes: 3 }));
    expect(actions.filter((a) => a.group === 'second').map((a) => a.nodes)).toEqual([['n3'], ['n3']]);
    expect(result.groups.second?.stage).toBe('DEPLOYED');
  });

  it('counts a node that failed in an earlier group as a failure of the later group too', () => {
    const { result } = runToEnd(overlap({ maximum_failed_nodes: 0 }), (a) => a.nodes.filter((n) => n !== 'n1'));
    expect(result.groups.first?.stage).toBe('DEPLOYED');
    expect(result.groups.second).toMatchObject({
      stage: 'FAILED',
      failures: [{ criteria: 'maximum_failed_nodes', needed: 0, actual: 1 }],
    });
  });

  it('evaluates a group with no node left to submit at once', () => {
    const plan = planOf({ first: { nodes: ['n1'] }, again: { dependsOn: ['first'], nodes: ['n1'], criteria: { percent_successful_nodes: 100 } } });
    const { actions, result } = runToEnd(plan);
    expect(actions.filter((a) => a.group === 'again')).toEqual([
      { type: 'PREPARE', group: 'again', nodes: [], batches: [], maxConcurrency: 1 },
      { type: 'DEPLOY', group: 'again', nodes: [], batches: [], maxConcurrency: 1 },
    ]);
    expect(result.groups.again?.stage).toBe('DEPLOYED');
  });

  it('fails a group that selects no node when it needs a minimum of 1 (a plan every start refuses, run as the reducer runs it)', () => {
    const strategy = parseDeploymentStrategy({
      groups: [{ name: 'empty', critical: false, depends_on: [], selectors: [{ node_tags: ['storage'] }], success_criteria: { minimum_successful_nodes: 1 } }],
    });
    const { actions, result } = runToEnd(planDeployment(strategy, [inventoryNode('n1')], { unreachableCriteria: 'report' }));
    expect(describeActions(actions)).toEqual(['PREPARE empty']);
    expect(result.groups.empty).toMatchObject({
      stage: 'FAILED',
      nodes: [],
      failures: [{ criteria: 'minimum_successful_nodes', needed: 1, actual: 0 }],
    });
  });
});

describe('phases of one group', () => {
  const single = (spec: GroupSpec = {}) => planOf({ g: { nodes: ['n1', 'n2', 'n3', 'n4', 'n5'], ...spec } });

  it('deploys only the nodes that prepared (a timeout counts as failure of the unreported)', () => {
    const plan = single();
    let state = startDeploymentRun(plan);
    state = applyPhaseResult(plan, state, { group: 'g', phase: 'PREPARE', succeededNodes: ['n1', 'n2', 'n3'] });
    expect(state.nodes).toEqual({ n1: 'PREPARED', n2: 'PREPARED', n3: 'PREPARED', n4: 'FAILED', n5: 'FAILED' });
    expect(phaseNodes(plan, state, 'g', 'DEPLOY')).toEqual(['n1', 'n2', 'n3']);
  });

  it('skips deploy for a group that misses its criteria when preparing', () => {
    const plan = single({ criteria: { percent_successful_nodes: 80 } });
    const state = applyPhaseResult(plan, startDeploymentRun(plan), { group: 'g', phase: 'PREPARE', succeededNodes: ['n1', 'n2', 'n3'] });
    expect(groupRunState(state, 'g')).toEqual({
      stage: 'FAILED',
      failures: [{ criteria: 'percent_successful_nodes', needed: 80, actual: 60 }],
    });
    expect(groupsToStart(plan, state, 1)).toEqual([]);
  });

  it('ignores reported successes for nodes it did not submit', () => {
    const plan = planOf({ g: { nodes: ['n1'] } }, [inventoryNode('other')]);
    const state = applyPhaseResult(plan, startDeploymentRun(plan), { group: 'g', phase: 'PREPARE', succeededNodes: ['n1', 'other', 'ghost'] });
    expect(state.nodes).toEqual({ n1: 'PREPARED' });
  });

  it('batches by the group strategy', () => {
    const work = (plan: DeploymentPlan) => phaseWork(phaseNodes(plan, startDeploymentRun(plan), 'g', 'PREPARE'), plannedGroup(plan, 'g').concurrency);
    expect(work(single({ strategy: { type: 'one_by_one' } }))).toMatchObject({ batches: [['n1'], ['n2'], ['n3'], ['n4'], ['n5']] });
    expect(work(single({ strategy: { type: 'parallel', amount: 2 } }))).toMatchObject({ batches: [['n1'], ['n2'], ['n3'], ['n4'], ['n5']], maxConcurrency: 2 });
  });

  it('a phase a stop cut short keeps its nodes and batches: cut twice, it records what ran each time, and is judged once finished, over all of them', () => {
    const plan = single({ strategy: { type: 'one_by_one' }, criteria: { percent_successful_nodes: 100 } });
    const batches = (state: DeploymentRunState) => phaseWork(phaseNodes(plan, state, 'g', 'PREPARE'), plannedGroup(plan, 'g').concurrency).batches;
    let state = startDeploymentRun(plan);
    state = applyInterruptedPhase(plan, state, { group: 'g', phase: 'PREPARE', succeededNodes: ['n1'], failedNodes: ['n2'] });
    expect(state.nodes).toEqual({ n1: 'PREPARED', n2: 'FAILED', n3: 'NOT_STARTED', n4: 'NOT_STARTED', n5: 'NOT_STARTED' });
    expect(groupRunState(state, 'g').stage).toBe('NOT_STARTED');
    // The resumed phase submits the same nodes in the same batches (batch 2 is n3, as before the stop).
    expect(batches(state)).toEqual([['n1'], ['n2'], ['n3'], ['n4'], ['n5']]);
    state = applyInterruptedPhase(plan, state, { group: 'g', phase: 'PREPARE', succeededNodes: ['n1', 'n3'], failedNodes: ['n2'] });
    expect(state.nodes).toMatchObject({ n1: 'PREPARED', n2: 'FAILED', n3: 'PREPARED', n4: 'NOT_STARTED' });
    expect(batches(state)).toEqual([['n1'], ['n2'], ['n3'], ['n4'], ['n5']]);
    state = applyPhaseResult(plan, state, { group: 'g', phase: 'PREPARE', succeededNodes: ['n1', 'n3', 'n4', 'n5'] });
    expect(state.nodes).toEqual({ n1: 'PREPARED', n2: 'FAILED', n3: 'PREPARED', n4: 'PREPARED', n5: 'PREPARED' });
    // Judged over all five: n2 failed, so 80% misses 100%; the mark of the cut is gone with the judgement.
    expect(groupRunState(state, 'g')).toEqual({ stage: 'FAILED', failures: [{ criteria: 'percent_successful_nodes', needed: 100, actual: 80 }] });
  });

  it('a deploy a stop cut short resumes over the nodes it had, not only those still PREPARED', () => {
    const plan = single();
    let state = applyPhaseResult(plan, startDeploymentRun(plan), { group: 'g', phase: 'PREPARE', succeededNodes: ['n1', 'n2', 'n3', 'n4', 'n5'] });
    state = applyInterruptedPhase(plan, state, { group: 'g', phase: 'DEPLOY', succeededNodes: ['n1', 'n2'], failedNodes: [] });
    expect(groupRunState(state, 'g').stage).toBe('PREPARED');
    expect(phaseNodes(plan, state, 'g', 'DEPLOY')).toEqual(['n1', 'n2', 'n3', 'n4', 'n5']);
    state = applyPhaseResult(plan, state, { group: 'g', phase: 'DEPLOY', succeededNodes: ['n1', 'n2', 'n3', 'n4', 'n5'] });
    expect(Object.values(state.nodes)).toEqual(Array(5).fill('DEPLOYED'));
    expect(groupRunState(state, 'g')).toEqual({ stage: 'DEPLOYED', failures: [] });
  });

  it('does not change the state it is given', () => {
    const plan = single();
    const state = deepFreeze(startDeploymentRun(plan));
    const next = applyPhaseResult(plan, state, { group: 'g', phase: 'PREPARE', succeededNodes: ['n1'] });
    expect(state.nodes.n1).toBe('NOT_STARTED');
    expect(next.nodes.n1).toBe('PREPARED');
  });
});

describe('names that are Object.prototype keys', () => {
  // A node cannot be called __proto__ (node names start with a letter or digit); a group can.
  it('treats groups called __proto__ or constructor and nodes called constructor or valueOf as data', () => {
    const plan = planOf({ ['__proto__']: { nodes: ['valueOf', 'constructor'] }, constructor: { dependsOn: ['__proto__'], nodes: ['toString'] } });
    const { actions, result } = runToEnd(plan, (a) => a.nodes.filter((n) => n !== 'constructor'));
    expect(describeActions(actions)).toEqual(['PREPARE __proto__', 'DEPLOY __proto__', 'PREPARE constructor', 'DEPLOY constructor']);
    expect(Object.keys(result.groups)).toEqual(['__proto__', 'constructor']);
    expect(JSON.parse(JSON.stringify(result.nodes))).toEqual({ valueOf: 'DEPLOYED', constructor: 'FAILED', toString: 'DEPLOYED' });
    expect(Object.getPrototypeOf(result.nodes)).toBe(Object.prototype);
  });
});

describe('results the run does not expect', () => {
  const plan = () => planOf({ a: { nodes: ['n1'] }, b: { dependsOn: ['a'], nodes: ['n2'] } });

  it('rejects a replayed PREPARE result', () => {
    const p = plan();
    const prepared = applyPhaseResult(p, startDeploymentRun(p), { group: 'a', phase: 'PREPARE', succeededNodes: ['n1'] });
    const err = thrownBy(() => applyPhaseResult(p, prepared, { group: 'a', phase: 'PREPARE', succeededNodes: ['n1'] }));
    expect(err).toBeInstanceOf(UnexpectedPhaseResultError);
    expect((err as Error).message).toBe('group a (PREPARED) cannot take a PREPARE result: it is already PREPARED');
  });

  it('rejects a DEPLOY result for a group that was not prepared', () => {
    const p = plan();
    expect(() => applyPhaseResult(p, startDeploymentRun(p), { group: 'a', phase: 'DEPLOY', succeededNodes: [] })).toThrow(UnexpectedPhaseResultError);
  });

  it('rejects a PREPARE result for a group whose dependencies are not deployed', () => {
    const p = plan();
    expect(() => applyPhaseResult(p, startDeploymentRun(p), { group: 'b', phase: 'PREPARE', succeededNodes: [] })).toThrow(
      /its dependencies are not all DEPLOYED/,
    );
  });

  it('rejects an unknown group', () => {
    const p = plan();
    expect(() => applyPhaseResult(p, startDeploymentRun(p), { group: 'zz', phase: 'PREPARE', succeededNodes: [] })).toThrow(UnknownDeploymentGroupError);
  });

  it('refuses a final result before the run is done', () => {
    const p = plan();
    const err = thrownBy(() => summarizeDeploymentRun(p, startDeploymentRun(p)));
    expect(err).toBeInstanceOf(DeploymentRunNotFinishedError);
    expect(err).toMatchObject({ pendingGroups: ['a', 'b'] });
  });
});

describe('summarizeDeployment: the one summary the report and Finish Deployment read', () => {
  const plan = () =>
    planOf({
      a: { nodes: ['n1'], critical: true },
      b: { dependsOn: ['a'], nodes: ['n2'], critical: true },
      c: { nodes: ['n3'] },
      d: { nodes: ['n4'], critical: true },
    });

  it('mid-run: the failed critical groups (a flag and their names, in plan order), the groups not finished, each group and node', () => {
    const p = plan();
    // a's workflow broke (b, its dependant, fails with it; their nodes keep their stage); d is prepared; c has not started.
    const broken = cascadeFailure(p, startDeploymentRun(p), 'a', [], 'SiteServiceError: provisioner: answered 500');
    const state = applyPhaseResult(p, broken, { group: 'd', phase: 'PREPARE', succeededNodes: ['n4'] });

    const summary = summarizeDeployment(p, state);

    expect(summary).toEqual({
      criticalGroupsFailed: true,
      failedCriticalGroups: ['a', 'b'],
      groups: {
        a: { stage: 'FAILED', critical: true, nodes: ['n1'], failures: [], cause: 'SiteServiceError: provisioner: answered 500' },
        b: { stage: 'FAILED', critical: true, nodes: ['n2'], failures: [], blockedBy: 'a' },
        c: { stage: 'NOT_STARTED', critical: false, nodes: ['n3'], failures: [] },
        d: { stage: 'PREPARED', critical: true, nodes: ['n4'], failures: [] },
      },
      nodes: { n1: 'NOT_STARTED', n2: 'NOT_STARTED', n3: 'NOT_STARTED', n4: 'PREPARED' },
      unfinishedGroups: ['c', 'd'],
    });
    expect(Object.keys(summary.groups)).toEqual(p.order);
    // Not finished: no final result yet, naming the same groups.
    expect(thrownBy(() => summarizeDeploymentRun(p, state))).toMatchObject({ pendingGroups: ['c', 'd'] });
  });

  it('a failed non-critical group alone: criticalGroupsFailed false, and the finished run succeeds', () => {
    const p = planOf({ a: { nodes: ['n1'], critical: true }, c: { nodes: ['n3'], criteria: { percent_successful_nodes: 100 } } });
    const { result } = runToEnd(p, (action) => (action.group === 'c' ? [] : action.nodes));
    expect(summarizeDeployment(p, startDeploymentRun(p))).toMatchObject({
      criticalGroupsFailed: false,
      failedCriticalGroups: [],
      unfinishedGroups: ['a', 'c'],
    });
    expect(result).toMatchObject({ status: 'SUCCEEDED', criticalGroupsFailed: false, failedCriticalGroups: [], cause: 'Every critical group deployed' });
    expect(result.groups['c']!.stage).toBe('FAILED');
  });
});
