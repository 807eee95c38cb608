import fc from 'fast-check';
import { upgradePolicy } from '../../../core/rolling-upgrade/upgrade-policy';
import { parseUpgradeRequest } from '../../../core/rolling-upgrade/upgrade-request';
import { stepCount, stepRange } from '../../../core/rolling-upgrade/step-plan';
import { terminalStatus, waveSize, windowStatus, type SchedulingPolicy } from '../../../core/scheduling';
import { drive, START, type DriveResult, type ModelNode } from '../../support/scheduling-site';

const nodeArb = (i: number) =>
  fc
    .record({
      rack: fc.constantFrom('r0', 'r1', 'r2', 'r3'),
      jobSeconds: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20_000 })),
      workSeconds: fc.integer({ min: 60, max: 1200 }),
      fails: fc.boolean().map((b) => b && i % 3 === 0),
      unavailable: fc.option(
        fc.tuple(fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 1, max: 20_000 })).map(([a, d]) => [[a, a + d]] as [number, number][]),
        { nil: undefined },
      ),
      alive: fc.boolean().map((b) => b || i % 7 !== 3),
    })
    .map((n): ModelNode => ({ name: `n${String(i).padStart(2, '0')}`, ...n }));

const fleetArb = fc.integer({ min: 1, max: 30 }).chain((count) => fc.tuple(...Array.from({ length: count }, (_, i) => nodeArb(i))));

const countOrPercent = (min: number) =>
  fc.oneof(
    fc.integer({ min, max: 12 }),
    fc.integer({ min: Math.max(min, 1), max: 100 }).map((p) => `${p}%`),
  );

const sharedControls = {
  maxFailed: fc.option(countOrPercent(0), { nil: undefined }),
  haltOnOutsideFailures: fc.boolean(),
  maintenanceWindows: fc.option(fc.constant([{ cron: '0 */3 * * *', durationMinutes: 90 }]), { nil: undefined }),
};

const requestArb = fc.oneof(
  fc.record({
    mode: fc.constant('lockstep' as const),
    upgradeStepSize: fc.integer({ min: 1, max: 8 }),
    approval: fc.constantFrom('none' as const, 'each-batch' as const),
    bakeSeconds: fc.constantFrom(0, 600),
    ...sharedControls,
  }),
  fc
    .record({
      mode: fc.constant('window' as const),
      upgradeStepSize: fc.integer({ min: 1, max: 8 }),
      maxUnavailable: fc.option(countOrPercent(1), { nil: undefined }),
      drainAhead: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
      order: fc.constantFrom('plan' as const, 'idle-first' as const),
      maxUnavailablePerRack: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
      batches: fc.option(fc.array(countOrPercent(1), { minLength: 1, maxLength: 3 }), { nil: undefined }),
      eachBatch: fc.boolean(),
      bakeSeconds: fc.constantFrom(0, 600),
      ...sharedControls,
    })
    .map(({ eachBatch, bakeSeconds, ...r }) => ({
      ...r,
      ...(r.batches ? { approval: eachBatch ? ('each-batch' as const) : ('none' as const), bakeSeconds } : {}),
    })),
);

function policyFor(request: Record<string, unknown>, nodeCount: number): SchedulingPolicy {
  const defined = Object.fromEntries(Object.entries(request).filter(([, v]) => v !== undefined));
  const parsed = parseUpgradeRequest({
    startingLabel: 'compute',
    upgradingLabel: 'upgrading',
    failedLabel: 'failed',
    upgradeTemplateId: 'img',
    workloadManagerType: 'slurm',
    ...defined,
  });
  return upgradePolicy(parsed, nodeCount);
}

/** Every invariant the scheduler promises, checked on every decision of a run. */
function checkRun(nodes: readonly ModelNode[], policy: SchedulingPolicy, run: DriveResult): void {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const admitted = new Set<string>();
  // Drains per op: a start is a drain request; a node whose drain ahead was lifted is drained again only with a slot.
  const drains = new Map<string, number>();
  const releasedAhead = new Set<string>();
  for (const { at, decision, before, after } of run.decisions) {
    for (const { op, holdsSlot } of decision.start) {
      drains.set(op, (drains.get(op) ?? 0) + 1);
      expect(drains.get(op)).toBeLessThanOrEqual(2);
      if (releasedAhead.has(op)) expect(holdsSlot).toBe(true);
    }
    for (const { op } of decision.release) releasedAhead.add(op);
    const holders = after.ops.filter((op) => op.state === 'TRANSITION' && op.holdsSlot);
    expect(holders.length).toBeLessThanOrEqual(policy.maxInTransition);
    if (policy.maxPerRack !== undefined) {
      const perRack = new Map<string, number>();
      for (const op of holders) perRack.set(byName.get(op.node)!.rack!, (perRack.get(byName.get(op.node)!.rack!) ?? 0) + 1);
      for (const count of perRack.values()) expect(count).toBeLessThanOrEqual(policy.maxPerRack);
    }
    // A node drained ahead has no slot: its job must surely run past the next decision (the horizon),
    // and the next decision must come before that, so it is never idle and drained without a slot.
    for (const op of after.ops.filter((o) => o.state === 'TRANSITION' && !o.holdsSlot)) {
      const left = (START + byName.get(op.node)!.jobSeconds * 1000 - at) / 1000;
      expect(left).toBeGreaterThan(policy.aheadHorizonSeconds);
      expect(decision.recheckAt).toBeLessThanOrEqual(at + (left - policy.aheadHorizonSeconds) * 1000);
    }
    // So nodes out of service (slot holders, and nodes drained ahead whose job ended) never exceed the cap.
    const idleAhead = after.ops.filter((o) => o.state === 'TRANSITION' && !o.holdsSlot && START + byName.get(o.node)!.jobSeconds * 1000 <= at);
    expect(holders.length + idleAhead.length).toBeLessThanOrEqual(policy.maxInTransition);
    const inTransition = after.ops.filter((op) => op.state === 'TRANSITION').map((op) => op.node);
    expect(new Set(inTransition).size).toBe(inTransition.length);
    for (let wave = 0; wave <= after.wave; wave++) {
      expect(after.ops.filter((op) => op.wave === wave).length).toBeLessThanOrEqual(waveSize(policy, wave));
    }

    const startsWithSlot = [...decision.start.filter((s) => s.holdsSlot).map((s) => s.op), ...decision.admit];
    const anyStart = decision.start.length + decision.admit.length > 0;
    for (const op of startsWithSlot) {
      expect(admitted.has(op)).toBe(false);
      admitted.add(op);
    }
    for (const { op } of decision.start) {
      const node = byName.get(before.ops.find((o) => o.id === op)!.node)!;
      const t = (at - START) / 1000;
      expect(node.alive ?? true).toBe(true);
      expect((node.unavailable ?? []).some(([a, b]) => t >= a && t < b)).toBe(false);
    }
    if (before.halted || decision.halt) expect(anyStart).toBe(false);
    if (policy.maintenanceWindows.length > 0 && !windowStatus(policy.maintenanceWindows, at).open) expect(anyStart).toBe(false);
    if (policy.admission === 'together' && decision.start.length > 0) {
      expect(before.ops.some((op) => op.state === 'TRANSITION')).toBe(false);
    }
  }
  for (const op of run.state.ops) expect(terminalStatus(op)).toBeDefined();
}

describe('schedule, driven step by step against a model site', () => {
  it('never exceeds a cap, never starts a node twice, stops starting once halted, and ends every op in a terminal status', () => {
    fc.assert(
      fc.property(fleetArb, requestArb, fc.option(fc.integer({ min: 0, max: 30_000 }), { nil: undefined }), (nodes, request, outsideFailureAt) => {
        const policy = policyFor(request, nodes.length);
        const run = drive(nodes, policy, { outsideFailureAt, approvalDelaySeconds: 300 });
        checkRun(nodes, policy, run);
      }),
      { numRuns: 150 },
    );
  });

  it('lockstep on an available fleet starts exactly CRUS steps: step k is plan positions [k*size, (k+1)*size), all at once', () => {
    fc.assert(
      fc.property(fleetArb, fc.integer({ min: 1, max: 8 }), (fleet, stepSize) => {
        const nodes = fleet.map((n) => ({ ...n, alive: true, unavailable: undefined }));
        const policy = policyFor({ mode: 'lockstep', upgradeStepSize: stepSize }, nodes.length);
        const run = drive(nodes, policy);
        checkRun(nodes, policy, run);
        const starts = run.decisions.filter((d) => d.decision.start.length > 0).map((d) => d.decision.start.map((s) => s.op));
        expect(starts).toHaveLength(stepCount(nodes.length, stepSize));
        starts.forEach((ops, k) => {
          const { start, end } = stepRange(k, stepSize, nodes.length);
          expect(ops).toEqual(nodes.slice(start, end).map((n) => `${n.name}/upgrade`));
        });
      }),
      { numRuns: 100 },
    );
  });
});
