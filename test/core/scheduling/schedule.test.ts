import { basePolicy, commitSchedule, proposeSchedule, recordOutcome, terminalStatus, type OperationSpec } from '../../../core/scheduling';
import { drive, START, type ModelNode } from '../../support/scheduling-site';

const node = (name: string, over: Partial<ModelNode> = {}): ModelNode => ({ name, jobSeconds: 0, workSeconds: 100, fails: false, ...over });
const startsOf = (run: ReturnType<typeof drive>) =>
  run.decisions
    .filter((d) => d.decision.start.length + d.decision.admit.length > 0)
    .map((d) => ({
      t: (d.at - START) / 1000,
      start: d.decision.start.map((s) => (s.holdsSlot ? s.op : `${s.op} (ahead)`)),
      admit: d.decision.admit,
    }));

describe('schedule', () => {
  describe('the window', () => {
    it('refills a freed slot at once instead of waiting for the slowest node of a step', () => {
      const nodes = [node('a', { jobSeconds: 1000 }), node('b'), node('c'), node('d')];
      const run = drive(nodes, basePolicy({ maxInTransition: 2 }));
      expect(startsOf(run)).toEqual([
        { t: 0, start: ['a/upgrade', 'b/upgrade'], admit: [] },
        { t: 100, start: ['c/upgrade'], admit: [] },
        { t: 200, start: ['d/upgrade'], admit: [] },
      ]);
    });

    it('drains ahead busy nodes without a slot and admits them when a slot frees', () => {
      const nodes = [node('a'), node('b', { jobSeconds: 150 }), node('c', { jobSeconds: 500 })];
      const run = drive(nodes, basePolicy({ maxInTransition: 1, drainAhead: 1 }));
      expect(startsOf(run)).toEqual([
        { t: 0, start: ['a/upgrade', 'b/upgrade (ahead)'], admit: [] },
        { t: 100, start: ['c/upgrade (ahead)'], admit: ['b/upgrade'] },
        { t: 250, start: [], admit: ['c/upgrade'] },
      ]);
    });

    it('gives a node drained ahead back to service when its job ends and no slot is free (never over the cap)', () => {
      // b's job ends at 50 while a holds the only slot: b is not left drained and idle without a slot.
      const nodes = [node('a'), node('b', { jobSeconds: 50 }), node('c', { jobSeconds: 500 })];
      const run = drive(nodes, basePolicy({ maxInTransition: 1, drainAhead: 1 }));
      const at50 = run.decisions.find((d) => d.at === START + 50_000)!.decision;
      expect(at50.release).toEqual([{ op: 'b/upgrade', reason: 'no-free-slot' }]);
      expect(startsOf(run)).toEqual([
        { t: 0, start: ['a/upgrade', 'b/upgrade (ahead)'], admit: [] },
        { t: 50, start: ['c/upgrade (ahead)'], admit: [] },
        { t: 100, start: ['b/upgrade'], admit: [] },
        { t: 200, start: [], admit: ['c/upgrade'] },
      ]);
    });

    it('drains ahead only nodes whose job surely outlasts the next decision, and decides again before it ends', () => {
      const nodes = [node('a'), node('b', { jobSeconds: 20 }), node('c', { jobSeconds: 500 })];
      const run = drive(nodes, basePolicy({ maxInTransition: 1, drainAhead: 2, aheadHorizonSeconds: 30 }));
      expect(startsOf(run)[0]).toEqual({ t: 0, start: ['a/upgrade', 'c/upgrade (ahead)'], admit: [] });
      expect(run.decisions[0]!.decision.recheckAt).toBe(START + 470_000);
    });

    it('with job ends known only as time limits (Slurm), drains nothing ahead: a job may end at any moment, and its node would be idle without a slot', () => {
      // b's limit says 500 s, its job ends at 150 s; c's limit 900, ends at 300.
      const nodes = [node('a'), node('b', { jobSeconds: 150, jobLimitSeconds: 500 }), node('c', { jobSeconds: 300, jobLimitSeconds: 900 })];
      const run = drive(nodes, basePolicy({ maxInTransition: 1, drainAhead: 2, aheadHorizonSeconds: 30, order: 'idle-first' }), { jobEnds: 'limit' });
      expect(run.decisions.flatMap((d) => d.decision.start.filter((s) => !s.holdsSlot))).toEqual([]);
      // Idle first, then by the reported end: b (limit 500) before c (limit 900).
      expect(startsOf(run).map((s) => s.start)).toEqual([['a/upgrade'], ['b/upgrade'], ['c/upgrade']]);
    });

    it('idle-first gives a free slot to the node with the shortest remaining job', () => {
      const nodes = [node('a', { jobSeconds: 900 }), node('b', { jobSeconds: 300 }), node('c')];
      const run = drive(nodes, basePolicy({ maxInTransition: 1, order: 'idle-first' }));
      expect(startsOf(run).map((s) => s.start)).toEqual([['c/upgrade'], ['b/upgrade'], ['a/upgrade']]);
    });

    it('keeps to maxPerRack even with free global slots', () => {
      const nodes = [node('a', { rack: 'r1' }), node('b', { rack: 'r1' }), node('c', { rack: 'r2' })];
      const run = drive(nodes, basePolicy({ maxInTransition: 3, maxPerRack: 1 }));
      expect(startsOf(run).map((s) => s.start)).toEqual([['a/upgrade', 'c/upgrade'], ['b/upgrade']]);
    });
  });

  describe('waves', () => {
    it('ramps through batches, baking and waiting for approval between them, then opens the window', () => {
      const nodes = ['a', 'b', 'c', 'd', 'e'].map((n) => node(n));
      const run = drive(nodes, basePolicy({ maxInTransition: 2, waveSizes: [1, 2], approvalBeforeWaves: [1], bakeSeconds: 50 }), { approvalDelaySeconds: 30 });
      const waits = run.decisions.map((d) => [(d.at - START) / 1000, d.decision.wait?.kind]).filter(([, kind]) => kind);
      expect(waits).toEqual([
        [100, 'bake'],
        [150, 'approval'],
        [180, 'approval'],
        [280, 'bake'],
      ]);
      expect(startsOf(run)).toEqual([
        { t: 0, start: ['a/upgrade'], admit: [] },
        // Batch 1 ended at 100, baked to 150, was approved 30 s later; batch 2 ended at 280 and baked before the window.
        { t: 180, start: ['b/upgrade', 'c/upgrade'], admit: [] },
        { t: 330, start: ['d/upgrade', 'e/upgrade'], admit: [] },
      ]);
    });
  });

  describe('failure budget', () => {
    it('halts once more nodes failed than maxFailed: in-flight ops finish, no new op starts, the rest is left alone', () => {
      const nodes = [node('a', { fails: true }), node('b', { fails: true, workSeconds: 300 }), node('c'), node('d')];
      const run = drive(nodes, basePolicy({ maxInTransition: 2, maxFailedNodes: 0 }));
      expect(run.state.halted).toEqual({ reason: '1 failed nodes exceed maxFailed (0)', at: START + 100_000 });
      expect(run.state.ops.map((op) => [op.id, terminalStatus(op), op.leftAlone])).toEqual([
        ['a/upgrade', 'ERROR', undefined],
        ['b/upgrade', 'ERROR', undefined],
        ['c/upgrade', 'LEFT_ALONE', 'halted: 1 failed nodes exceed maxFailed (0)'],
        ['d/upgrade', 'LEFT_ALONE', 'halted: 1 failed nodes exceed maxFailed (0)'],
      ]);
      expect(run.state.finishedAt).toBe(START + 300_000);
    });

    it('halts on a failure outside the plan when asked to', () => {
      const run = drive([node('a'), node('b')], basePolicy({ maxInTransition: 1, haltOnOutsideFailures: true }), { outsideFailureAt: 50 });
      expect(run.state.halted?.reason).toBe('nodes outside the plan went DOWN or FAIL: outsider');
      expect(run.state.ops.map(terminalStatus)).toEqual(['ACTIVE', 'LEFT_ALONE']);
    });
  });

  describe('gates', () => {
    it('leaves a node that is not available alone without failing it, and starts it once it is available again', () => {
      const nodes = [node('a', { unavailable: [[0, 150]] }), node('b', { workSeconds: 300 }), node('c', { alive: false })];
      const run = drive(nodes, basePolicy({ maxInTransition: 2 }));
      expect(run.decisions[0]!.decision.gated).toEqual([
        { op: 'a/upgrade', reason: 'node-unavailable' },
        { op: 'c/upgrade', reason: 'node-not-alive' },
      ]);
      expect(startsOf(run).map((s) => [s.t, s.start])).toEqual([
        [0, ['b/upgrade']],
        [150, ['a/upgrade']],
      ]);
      expect(run.state.ops.map((op) => [terminalStatus(op), op.leftAlone])).toEqual([
        ['ACTIVE', undefined],
        ['ACTIVE', undefined],
        ['LEFT_ALONE', 'node-not-alive'],
      ]);
    });

    it('finishes when only gated nodes remain, leaving them alone', () => {
      const run = drive([node('a', { unavailable: [[0, 1000]] }), node('b')], basePolicy({ maxInTransition: 1 }));
      expect(run.state.finishedAt).toBe(START + 100_000);
      expect(run.state.ops.map((op) => [terminalStatus(op), op.leftAlone])).toEqual([
        ['LEFT_ALONE', 'node-unavailable'],
        ['ACTIVE', undefined],
      ]);
    });
  });

  describe('maintenance windows', () => {
    it('starts nodes only inside a window and lets in-flight nodes finish after it closes', () => {
      // Windows open at 00:00 and 01:00 for 2 minutes; each node takes 200 s.
      const policy = basePolicy({ maxInTransition: 1, maintenanceWindows: [{ cron: '0 * * * *', durationMinutes: 2 }] });
      const run = drive([node('a', { workSeconds: 200 }), node('b', { workSeconds: 200 })], policy);
      expect(startsOf(run).map((s) => [s.t, s.start])).toEqual([
        [0, ['a/upgrade']],
        [3600, ['b/upgrade']],
      ]);
      expect(run.decisions.some((d) => d.decision.wait?.kind === 'maintenance-window')).toBe(true);
    });
  });

  describe('dependencies and group caps (issue 10: task graphs)', () => {
    /** The Fuel worked example: controllers parallel amount 2, network required for compute, setup_network before setup_services. */
    function fuelExample(failing?: string) {
      const roles: Record<string, string[]> = {
        'primary-controller': ['node-1'],
        controller: ['node-4', 'node-2', 'node-3', 'node-5'],
        cinder: ['node-6'],
        network: ['node-7'],
        compute: ['node-8'],
      };
      const after: Record<string, string[]> = { controller: ['primary-controller'], cinder: ['controller'], network: ['controller'], compute: ['network'] };
      const specs: OperationSpec[] = [];
      for (const [role, members] of Object.entries(roles)) {
        for (const n of members) {
          const upstream = (after[role] ?? []).flatMap((r) => roles[r]!.map((m) => `${m}/setup_services`));
          specs.push({ id: `${n}/setup_network`, node: n, group: role, requires: upstream });
          specs.push({ id: `${n}/setup_services`, node: n, group: role, requires: [`${n}/setup_network`] });
        }
      }
      const nodes = Object.values(roles)
        .flat()
        .map((n) => node(n, { fails: n === failing }));
      return drive(nodes, basePolicy({ maxInTransition: 10, groupLimits: { controller: 2 } }), { specs });
    }

    it('runs the seed example in its expected order', () => {
      const run = fuelExample();
      const firstStart = (n: string) => run.decisions.find((d) => d.decision.start.some((s) => s.op === `${n}/setup_network`))!.at;
      expect(firstStart('node-1')).toBeLessThan(firstStart('node-4'));
      expect(firstStart('node-4')).toBe(firstStart('node-2'));
      expect(firstStart('node-3')).toBe(firstStart('node-5'));
      expect(firstStart('node-2')).toBeLessThan(firstStart('node-3'));
      expect(firstStart('node-7')).toBe(firstStart('node-6'));
      expect(firstStart('node-6')).toBeGreaterThan(firstStart('node-5'));
      expect(firstStart('node-8')).toBeGreaterThan(firstStart('node-7'));
      expect(run.state.ops.every((op) => op.state === 'ACTIVE')).toBe(true);
    });

    it('keeps every descendant of a failed op BLOCKED, naming the failed op', () => {
      const run = fuelExample('node-7');
      const status = Object.fromEntries(run.state.ops.map((op) => [op.id, [terminalStatus(op), op.blockedBy]]));
      expect(status['node-7/setup_network']).toEqual(['ERROR', undefined]);
      expect(status['node-7/setup_services']).toEqual(['BLOCKED', ['node-7/setup_network']]);
      expect(status['node-8/setup_network']).toEqual(['BLOCKED', ['node-7/setup_network']]);
      expect(status['node-6/setup_services']).toEqual(['ACTIVE', undefined]);
    });
  });

  describe('proposeSchedule', () => {
    it('rejects duplicate ids, unknown requirements and cycles, naming them', () => {
      expect(() =>
        proposeSchedule([
          { id: 'a', node: 'n' },
          { id: 'a', node: 'n' },
        ]),
      ).toThrow("operations[1].id: duplicate operation id 'a'");
      expect(() => proposeSchedule([{ id: 'a', node: 'n', requires: ['z'] }])).toThrow("operations[0].requires[0]: unknown operation 'z'");
      expect(() =>
        proposeSchedule([
          { id: 'a', node: 'n', requires: ['b'] },
          { id: 'b', node: 'n', requires: ['a'] },
        ]),
      ).toThrow(/dependency cycle/);
    });
  });

  describe('recordOutcome', () => {
    it('refuses an outcome for an op that is not in TRANSITION (a replayed result)', () => {
      const state = commitSchedule(proposeSchedule([{ id: 'a', node: 'n' }]));
      expect(() => recordOutcome(state, 'a', { ok: true }, 0)).toThrow('operation a is TODO, not in TRANSITION');
      expect(() => recordOutcome(state, 'zz', { ok: true }, 0)).toThrow('no operation zz');
    });
  });
});
