import type { NodeRecord, UpgradeSession } from '../../../core/rolling-upgrade/session';
import type { InventoryNode } from '../../../core/site/site-nodes';
import type { parseUpgradeRequest } from '../../../core/rolling-upgrade/upgrade-request';
import { Mark, withMarks } from '../../../core/rolling-upgrade/plan-marks';
import { initialWindowProgress, scheduleWindow } from '../../../core/rolling-upgrade/window-decisions';
import { candidatesStarting, outsideTodoToRecord, SCAN_BATCH, WindowCandidateScan, type ScannedSite } from '../../../core/rolling-upgrade/window-candidates';
import { NOW, session as baseSession, windowRequest, wlmNode } from '../../support/upgrade-sessions';

/**
 * The window's candidate scan: which TODO nodes an increment looks at. The scan hands out plan
 * positions, takes their records once the site was read for them, and stops when it has enough
 * that could start now (the scheduler's start gate and rack cap), or, idle-first, after looking at all.
 */

type Request = Parameters<typeof parseUpgradeRequest>[0];

function windowSession(nodeCount: number, request: Partial<Request> = {}, state: UpgradeSession['state'] = 'UPDATING'): UpgradeSession {
  const parsed = windowRequest(request);
  return baseSession({ ...parsed, nodeCount, stepCount: nodeCount, state });
}

const name = (i: number) => `n${String(i).padStart(3, '0')}`;
const record = (i: number): NodeRecord => ({ name: name(i), index: i, status: 'NOT_STARTED' });
const flying = (i: number): NodeRecord => ({ ...record(i), status: 'IN_PROGRESS', phase: 'BOOTING', op: { state: 'TRANSITION', holdsSlot: true } });

/** A site of `count` idle nodes in the workload manager, with the inventory's word on some (rack, alive, available). */
function site(count: number, inventory: (i: number) => Partial<InventoryNode> = () => ({})): ScannedSite {
  const nodes = Array.from({ length: count }, (_, i) => i);
  return {
    wlm: new Map(nodes.map((i) => [name(i), wlmNode(name(i), 'IDLE')])),
    inventory: new Map(nodes.map((i) => [name(i), { name: name(i), nid: i + 1, alive: true, available: true, ...inventory(i) } as InventoryNode])),
  };
}

/** Runs the scan to its end as the activity does; returns the batches it handed out. */
function runScan(scan: WindowCandidateScan, seen: ScannedSite): number[][] {
  const batches: number[][] = [];
  for (let batch = scan.next(); batch.length > 0; batch = scan.next()) {
    batches.push([...batch]);
    scan.add(
      batch.map((p) => record(p)),
      seen,
    );
  }
  return batches;
}

describe('WindowCandidateScan: plan order', () => {
  it('looks at one batch when it holds enough nodes that could start now, in plan order, passing over the positions in flight', () => {
    const window = { ...initialWindowProgress(100), inFlight: [1] };
    const scan = new WindowCandidateScan(windowSession(100, { maxUnavailable: 3 }), window, [flying(1)]);
    expect(scan.readsInventory).toBe(true);
    const batches = runScan(scan, site(100));
    expect(batches).toHaveLength(1);
    expect(batches[0]).toHaveLength(SCAN_BATCH);
    expect(batches[0]!.slice(0, 3)).toEqual([0, 2, 3]);
    expect(scan.candidates.map((r) => r.index)).toEqual(batches[0]);
    expect(scan.todo).toHaveLength(99);
  });

  it('the start gate: passes over nodes the workload manager does not know, not alive or not available, until enough could start', () => {
    // 40 of the first 40 cannot start (every kind of gate), then every node can: 2 are needed.
    const seen = site(100, (i) => (i < 40 ? (i % 2 === 0 ? { alive: false } : { available: false }) : {}));
    const unknown = { ...seen, wlm: new Map([...seen.wlm].filter(([n]) => n !== name(40))) };
    const scan = new WindowCandidateScan(windowSession(100), initialWindowProgress(100), []);
    const batches = runScan(scan, unknown);
    // Batch 1 [0, 32): none could start; batch 2 [32, 64): n040 unknown to the workload manager, n041 and n042 could.
    expect(batches.map((b) => [b[0], b.at(-1)])).toEqual([
      [0, 31],
      [32, 63],
    ]);
  });

  it('the rack cap: a node whose rack holds as many nodes in flight as the cap allows does not count, so the scan goes on', () => {
    // Racks of 40 nodes; n000 is in flight on rack r0 with maxUnavailablePerRack 1: nothing of r0 could start.
    const seen = site(100, (i) => ({ rack: `r${Math.floor(i / 40)}` }));
    const window = { ...initialWindowProgress(100), inFlight: [0] };
    const scan = new WindowCandidateScan(windowSession(100, { maxUnavailable: 2, maxUnavailablePerRack: 1 }), window, [flying(0)]);
    const batches = runScan(scan, seen);
    expect(batches.map((b) => [b[0], b.at(-1)])).toEqual([
      [1, 32],
      [33, 64],
    ]);
    // Without the cap, the first batch would do.
    const uncapped = new WindowCandidateScan(windowSession(100, { maxUnavailable: 2 }), window, [flying(0)]);
    expect(runScan(uncapped, seen)).toHaveLength(1);
  });

  it('asks for enough to fill every free slot and the drain-ahead room, and never hands out a position twice (more than a batch needed)', () => {
    // 50 slots: a batch of 50; half the nodes cannot start, so it goes on, from where it stopped.
    const seen = site(200, (i) => (i % 2 === 0 ? { alive: false } : {}));
    const scan = new WindowCandidateScan(windowSession(200, { maxUnavailable: 40, drainAhead: 10 }), initialWindowProgress(200), []);
    const batches = runScan(scan, seen);
    expect(batches.map((b) => [b[0], b.at(-1)])).toEqual([
      [0, 49],
      [50, 99],
    ]);
    const looked = scan.candidates.map((r) => r.index);
    expect(new Set(looked).size).toBe(looked.length);
    expect(scan.notLookedAt()).toEqual(Array.from({ length: 100 }, (_, i) => 100 + i));
  });

  it('stops at the end of the plan', () => {
    const seen = site(10, () => ({ alive: false }));
    const scan = new WindowCandidateScan(windowSession(10), initialWindowProgress(10), []);
    expect(runScan(scan, seen)).toEqual([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]]);
    expect(scan.next()).toEqual([]);
  });

  it('skips the positions already upgraded, failed or gone', () => {
    const marks = withMarks(
      initialWindowProgress(8).marks!,
      new Map([
        [0, Mark.upgraded],
        [1, Mark.failed],
        [3, Mark.gone],
      ]),
    );
    const scan = new WindowCandidateScan(windowSession(8), { ...initialWindowProgress(8), marks }, []);
    expect(scan.todo).toEqual([2, 4, 5, 6, 7]);
    expect(runScan(scan, site(8))).toEqual([[2, 4, 5, 6, 7]]);
  });
});

describe('WindowCandidateScan: idle-first, stopping, deleting', () => {
  it('idle-first looks at every TODO node in one batch, without the inventory', () => {
    const scan = new WindowCandidateScan(windowSession(100, { order: 'idle-first' }), initialWindowProgress(100), []);
    expect(scan.readsInventory).toBe(false);
    const batches = runScan(scan, { wlm: site(100).wlm, inventory: new Map() });
    expect(batches).toEqual([Array.from({ length: 100 }, (_, i) => i)]);
  });

  it('a stopping run looks at none but counts the TODO nodes; a deleting one counts none', () => {
    const stopping = new WindowCandidateScan(windowSession(10, {}, 'STOPPING'), initialWindowProgress(10), []);
    expect(stopping.next()).toEqual([]);
    expect(stopping.todo).toHaveLength(10);
    expect(stopping.notLookedAt()).toHaveLength(10);
    const deleting = new WindowCandidateScan(windowSession(10, {}, 'DELETING'), initialWindowProgress(10), []);
    expect(deleting.next()).toEqual([]);
    expect(deleting.todo).toEqual([]);
    expect(deleting.readsInventory).toBe(false);
  });
});

describe('candidatesStarting and outsideTodoToRecord', () => {
  it('gives the candidates the decision starts, in the decision’s order', () => {
    const candidates = [record(0), record(1), record(2)];
    const start = [
      { op: 'n002/upgrade', holdsSlot: true },
      { op: 'n000/upgrade', holdsSlot: false },
    ];
    expect(candidatesStarting(candidates, { start }).map((r) => r.name)).toEqual(['n002', 'n000']);
  });

  it('records the positions not looked at left alone only when the run finishes with nodes outside the view', () => {
    const scan = new WindowCandidateScan(windowSession(100), initialWindowProgress(100), []);
    runScan(scan, site(100));
    expect(outsideTodoToRecord(scan, { finished: false })).toEqual([]);
    expect(outsideTodoToRecord(scan, { finished: true })).toEqual([]);
    expect(outsideTodoToRecord(scan, { finished: true, leftAloneOutside: 'halted: budget' })).toEqual(Array.from({ length: 68 }, (_, i) => 32 + i));
  });
});

describe('the scan and the scheduler together', () => {
  it('under a rack cap the scheduler starts, of the candidates looked at, the first of each rack in plan order', () => {
    // Racks r0 (n000-n002) and r1 (n003-n005); two slots, one per rack.
    const seen = site(6, (i) => ({ rack: i < 3 ? 'r0' : 'r1' }));
    const session = windowSession(6, { maxUnavailable: 2, maxUnavailablePerRack: 1 });
    const window = initialWindowProgress(6);
    const scan = new WindowCandidateScan(session, window, []);
    runScan(scan, seen);
    const progress = { step: 0, stage: 'ROLLING' as const, stageStartedAt: NOW, errorCount: 0, window };
    const view = { inFlight: [], settled: [], dropped: [], candidates: scan.candidates, todoOutside: scan.todo.length - scan.candidates.length };
    const decision = scheduleWindow({ session, progress, view, observed: { ...seen, boots: new Map() }, now: NOW });
    expect(candidatesStarting(scan.candidates, decision).map((r) => r.name)).toEqual(['n000', 'n003']);
  });
});
