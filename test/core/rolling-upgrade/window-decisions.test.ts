import fc from 'fast-check';
import { EmptyBootSessionError } from '../../../core/errors';
import type { Operation } from '../../../core/scheduling';
import type { BootSessionStatus, WlmNode } from '../../../core/site/site-nodes';
import type { HealthCheckResult } from '../../../core/rolling-upgrade/health-check';
import { FailureReason, type NodeRecord, type Progress, type UpgradeSession, type WindowOp } from '../../../core/rolling-upgrade/session';
import type { NodeAction } from '../../../core/rolling-upgrade/stage-decision';
import type { parseUpgradeRequest } from '../../../core/rolling-upgrade/upgrade-request';
import { markCounts } from '../../../core/rolling-upgrade/plan-marks';
import {
  decideBoots,
  decideStarts,
  decideWindow,
  decideWindowEnd,
  initialWindowProgress,
  orderWindowActions,
  scheduleWindow,
  settleEnded,
  windowAfter,
  windowWait,
  type WindowObserved,
  type WindowView,
} from '../../../core/rolling-upgrade/window-decisions';
import {
  advanceInFlight,
  decideBooting,
  decideInFlightNode,
  decidePutBack,
  decideQuiescing,
  decideReturning,
} from '../../../core/rolling-upgrade/window-in-flight';
import { NOW, OUR_DRAIN, RUN_ID, windowRequest, wlmMap, wlmNode } from '../../support/upgrade-sessions';

/**
 * The window's increment (decideWindow) and each of its phases, on small literal states. The
 * session times out quiescing after 100 s, booting after 200 s and returning to service after 300 s.
 */

type Request = Parameters<typeof parseUpgradeRequest>[0];

function windowSession(request: Partial<Request> = {}, over: Partial<UpgradeSession> = {}): UpgradeSession {
  const parsed = windowRequest({ quiesceTimeoutSeconds: 100, bootTimeoutSeconds: 200, wlmReturnTimeoutSeconds: 300, pollIntervalSeconds: 30, ...request });
  return {
    upgradeId: RUN_ID,
    kind: 'ComputeUpgradeSession',
    state: 'UPDATING',
    completed: false,
    createdAt: '2026-01-01T00:00:00.000Z',
    planTaken: true,
    nodeCount: 6,
    stepCount: 6,
    ...parsed,
    progress: rolling(),
    ...over,
  };
}

/** Another session of this store (run ids are UUIDs), dead: its drain is taken over. */
const DEAD_SESSION = '11111111-2222-4333-8444-555555555555';
const idle = (name: string) => wlmNode(name, 'IDLE');
const busy = (name: string) => wlmNode(name, 'ALLOCATED');
const drainedByUs = (name: string, base: WlmNode['base'] = 'IDLE') => wlmNode(name, base, ['DRAIN'], { reason: OUR_DRAIN });
const drainedByAdmin = (name: string) => wlmNode(name, 'IDLE', ['DRAIN'], { reason: 'bad dimm' });
const backAfterBoot = (name: string, bootTime = NOW - 10_000) => wlmNode(name, 'IDLE', ['DRAIN'], { reason: OUR_DRAIN, bootTime });

const todo = (name: string, index: number): NodeRecord => ({ name, index, status: 'NOT_STARTED' });
/** A node in flight in `phase`, started (and admitted, with a slot) `secondsAgo` before NOW. */
function flying(
  name: string,
  index: number,
  phase: NodeRecord['phase'],
  opts: { secondsAgo?: number; holdsSlot?: boolean; boot?: NodeRecord['boot']; extra?: Partial<NodeRecord> } = {},
): NodeRecord {
  const startedAt = NOW - (opts.secondsAgo ?? 10) * 1000;
  const holdsSlot = opts.holdsSlot ?? true;
  const op: WindowOp = { state: 'TRANSITION', holdsSlot, wave: 0, startedAt, ...(holdsSlot ? { admittedAt: startedAt } : {}) };
  return { name, index, status: 'IN_PROGRESS', phase, op, lockToken: 7, ...(opts.boot ? { boot: opts.boot } : {}), ...opts.extra };
}

function rolling(window: Partial<Progress['window']> = {}, counts = { upgraded: 0, failed: 0 }): Progress {
  return { step: 0, stage: 'ROLLING', stageStartedAt: NOW - 60_000, errorCount: 0, window: { ...initialWindowProgress(6), wave: 0, ...window }, counts };
}

function view(inFlight: NodeRecord[], candidates: NodeRecord[] = [], more: Partial<WindowView> = {}): WindowView {
  return { inFlight, settled: [], dropped: [], candidates, todoOutside: 0, ...more };
}

function observe(wlm: WlmNode[], more: Partial<WindowObserved> = {}): WindowObserved {
  return { wlm: wlmMap(...wlm), inventory: new Map(), boots: new Map(), ...more };
}

/** One increment as the activity runs it: the real scheduler's decision, then decideWindow. */
function increment(
  session: UpgradeSession,
  progress: Progress,
  v: WindowView,
  observed: WindowObserved,
  more: { lockedByOthers?: Set<string>; outsideTodo?: NodeRecord[]; now?: number } = {},
) {
  const now = more.now ?? NOW;
  const input = { session, progress: { ...progress, window: { ...progress.window!, inFlight: v.inFlight.map((r) => r.index) } }, view: v, observed, now };
  const decision = scheduleWindow(input);
  return decideWindow({ ...input, decision, lockedByOthers: more.lockedByOthers ?? new Set(), ...(more.outsideTodo ? { outsideTodo: more.outsideTodo } : {}) });
}

const actionsOf = <T extends NodeAction['type']>(actions: NodeAction[], type: T) =>
  actions.filter((a): a is Extract<NodeAction, { type: T }> => a.type === type);
const drained = (actions: NodeAction[]) => actionsOf(actions, 'drain').flatMap((a) => a.nodes);
const recorded = (actions: NodeAction[]) => actionsOf(actions, 'recordNodes').flatMap((a) => a.records);
const unlocked = (actions: NodeAction[]) => actionsOf(actions, 'releaseLocks').flatMap((a) => a.nodes);
const typesOf = (actions: NodeAction[]) => actions.map((a) => a.type);
const op = (name: string, fields: Partial<Operation> = {}): Operation => ({
  id: `${name}/upgrade`,
  node: name,
  requires: [],
  rank: 0,
  state: 'TRANSITION',
  holdsSlot: true,
  startedAt: NOW - 10_000,
  ...fields,
});
const opsOf = (...ops: Operation[]) => new Map(ops.map((o) => [o.node, o]));
const recordsOf = (...records: NodeRecord[]) => new Map(records.map((r) => [r.name, r]));

describe('decideWindow: starts under the caps', () => {
  it('starts no more than maxUnavailable nodes, in plan order, saving the intent before recording and recording before draining', () => {
    const d = increment(
      windowSession({ maxUnavailable: 2 }),
      rolling(),
      view([], [todo('n0', 0), todo('n1', 1), todo('n2', 2)]),
      observe([idle('n0'), idle('n1'), idle('n2')]),
    );
    expect(drained(d.actions)).toEqual(['n0', 'n1']);
    expect(typesOf(d.actions).slice(0, 3)).toEqual(['saveProgress', 'recordNodes', 'drain']);
    const intent = actionsOf(d.actions, 'saveProgress')[0]!;
    expect(intent.progress.window!.inFlight).toEqual([0, 1]);
    expect(actionsOf(d.actions, 'recordNodes')[0]!.records).toMatchObject([
      { name: 'n0', status: 'IN_PROGRESS', phase: 'DRAINING', op: { state: 'TRANSITION', holdsSlot: true, startedAt: NOW } },
      { name: 'n1', status: 'IN_PROGRESS', phase: 'DRAINING' },
    ]);
    expect(actionsOf(d.actions, 'drain')[0]!.reason).toBe(OUR_DRAIN);
    expect(d.progress.window).toMatchObject({ inFlight: [0, 1], draining: 2, ahead: 0 });
    expect(d.message).toBe('Window: draining 2 node(s): n0, n1');
    expect(d.waitSeconds).toBe(0);
  });

  it('counts the nodes already in flight with a slot against maxUnavailable', () => {
    const d = increment(
      windowSession({ maxUnavailable: 2 }),
      rolling(),
      view([flying('n0', 0, 'BOOTING', { boot: { session: 'b0', requestedAt: NOW - 5000 } })], [todo('n1', 1), todo('n2', 2)]),
      observe([drainedByUs('n0', 'DOWN'), idle('n1'), idle('n2')], { boots: new Map([['b0', { name: 'b0', status: 'running', nodes: { n0: 'booting' } }]]) }),
    );
    expect(drained(d.actions)).toEqual(['n1']);
    expect(d.progress.window!.inFlight).toEqual([0, 1]);
  });

  it('admits a node drained ahead to a free slot before starting a fresh node (its job may end any moment)', () => {
    const d = increment(
      windowSession({ maxUnavailable: 1, drainAhead: 1 }),
      rolling(),
      view([flying('n0', 0, 'DRAINING', { holdsSlot: false })], [todo('n1', 1)]),
      observe([drainedByUs('n0', 'ALLOCATED'), idle('n1')], { jobEnds: new Map() }),
    );
    expect(drained(d.actions)).toEqual([]);
    expect(recorded(d.actions)).toMatchObject([{ name: 'n0', op: { holdsSlot: true, admittedAt: NOW } }]);
    expect(d.progress.window).toMatchObject({ inFlight: [0], ahead: 0 });
  });

  it('keeps a node drained ahead out of the slot count: it is not booted, even quiet, and the window counts it apart', () => {
    const input = {
      session: windowSession({ maxUnavailable: 1, drainAhead: 1 }),
      progress: rolling({ inFlight: [0] }),
      view: view([flying('n0', 0, 'DRAINING', { holdsSlot: false })], [todo('n1', 1)]),
      observed: observe([drainedByUs('n0'), idle('n1')]),
      now: NOW,
    };
    const decision = {
      start: [{ op: 'n1/upgrade', holdsSlot: true }],
      admit: [],
      release: [],
      gated: [],
      wave: 0,
      finished: false,
      leftAlone: [],
      blocked: [],
    };
    const d = decideWindow({ ...input, decision, lockedByOthers: new Set() });
    expect(actionsOf(d.actions, 'startBoot')).toEqual([]);
    expect(drained(d.actions)).toEqual(['n1']);
    expect(d.progress.window).toMatchObject({ inFlight: [0, 1], ahead: 1, draining: 2 });
  });

  it('keeps an admin drain: a started node already drained by an admin is not drained again', () => {
    const d = increment(windowSession(), rolling(), view([], [todo('n0', 0), todo('n1', 1)]), observe([drainedByAdmin('n0'), idle('n1')]));
    expect(drained(d.actions)).toEqual(['n1']);
    expect(recorded(d.actions).map((r) => r.name)).toEqual(['n0', 'n1']);
  });

  it('does not start a node whose lock another session holds', () => {
    const d = increment(windowSession(), rolling(), view([], [todo('n0', 0), todo('n1', 1)]), observe([idle('n0'), idle('n1')]), {
      lockedByOthers: new Set(['n0']),
    });
    expect(drained(d.actions)).toEqual(['n1']);
    expect(d.progress.window!.inFlight).toEqual([1]);
    expect(actionsOf(d.actions, 'saveProgress')[0]!.progress.window!.inFlight).toEqual([1]);
  });
});

describe('decideWindow: failures, the failure budget and halting', () => {
  it('halts once the failed nodes exceed maxFailed: nothing new starts, the nodes in flight carry on', () => {
    const booting = flying('n0', 0, 'BOOTING', { boot: { session: 'b0', requestedAt: NOW - 5000 } });
    const d = increment(
      windowSession({ maxFailed: 0 }),
      rolling({}, { upgraded: 0, failed: 1 }),
      view([booting], [todo('n1', 1)]),
      observe([drainedByUs('n0', 'DOWN'), idle('n1')], { boots: new Map([['b0', { name: 'b0', status: 'running', nodes: { n0: 'succeeded' } }]]) }),
    );
    expect(drained(d.actions)).toEqual([]);
    expect(d.progress.window!.halted?.reason).toBe('1 failed nodes exceed maxFailed (0)');
    expect(recorded(d.actions)).toMatchObject([{ name: 'n0', phase: 'BOOTED', boot: { finishedAt: NOW } }]);
    expect(d.message).toContain('Window halted: 1 failed nodes exceed maxFailed (0)');
    expect(d.progress.stage).toBe('ROLLING');
  });

  it('stays within maxFailed: one failure with maxFailed 1 starts the next node', () => {
    const d = increment(windowSession({ maxFailed: 1 }), rolling({}, { upgraded: 0, failed: 1 }), view([], [todo('n1', 1)]), observe([idle('n1')]));
    expect(drained(d.actions)).toEqual(['n1']);
    expect(d.progress.window!.halted).toBeUndefined();
  });

  it('finishes halted once nothing is in flight: every TODO node, in the view or outside it, is recorded left alone', () => {
    const d = increment(
      windowSession({ maxFailed: 0 }),
      rolling({}, { upgraded: 2, failed: 1 }),
      view([], [todo('n3', 3)], { todoOutside: 1 }),
      observe([idle('n3')]),
      {
        outsideTodo: [todo('n5', 5)],
      },
    );
    expect(d.progress).toMatchObject({ stage: 'CLEANUP', window: { finishedAt: NOW, halted: { reason: '1 failed nodes exceed maxFailed (0)' } } });
    expect(recorded(d.actions)).toEqual([
      { name: 'n3', index: 3, status: 'NOT_STARTED', reason: 'left alone: halted: 1 failed nodes exceed maxFailed (0)' },
      { name: 'n5', index: 5, status: 'NOT_STARTED', reason: 'left alone: halted: 1 failed nodes exceed maxFailed (0)' },
    ]);
    expect(d.message).toContain('Window finished halted: 1 failed nodes exceed maxFailed (0)');
  });

  it('fails a node with the reason, in Slurm and the failed group, before recording it done and releasing its lock; counts and marks it once', () => {
    const booting = flying('n2', 2, 'BOOTING', { boot: { session: 'b0', requestedAt: NOW - 5000 } });
    const d = increment(
      windowSession(),
      rolling({}, { upgraded: 1, failed: 0 }),
      view([booting]),
      observe([drainedByUs('n2', 'DOWN')], { boots: new Map([['b0', { name: 'b0', status: 'complete', nodes: { n2: 'failed' } }]]) }),
    );
    expect(typesOf(d.actions)).toEqual(['fail', 'addToGroup', 'recordNodes', 'releaseLocks']);
    expect(d.actions[0]).toMatchObject({ type: 'fail', nodes: ['n2'], reason: FailureReason.bootFailed });
    const done = recorded(d.actions)[0]!;
    expect(done).toMatchObject({ name: 'n2', status: 'FAILED', phase: 'DONE', reason: FailureReason.bootFailed, op: { state: 'ERROR', endedAt: NOW } });
    expect(done.lockToken).toBeUndefined();
    expect(d.progress.counts).toEqual({ upgraded: 1, failed: 1 });
    expect(markCounts(d.progress.window!.marks!, 0, 6)).toEqual({ upgraded: 0, failed: 1 });
    expect(d.progress.window).toMatchObject({ inFlight: [], waveEnded: 1, waveLastEndedAt: NOW });
    expect(d.message).toBe(`Window: 1 node(s) failed with ${FailureReason.bootFailed}: n2`);
  });
});

describe('decideWindow: a boot session that acted upon no node', () => {
  it('is an error of the run: no node failed, recorded or released, nothing done to the site', () => {
    const booting = flying('n2', 2, 'BOOTING', { boot: { session: 'b0', requestedAt: NOW - 5000 } });
    const d = increment(
      windowSession(),
      rolling(),
      view([booting]),
      observe([drainedByUs('n2')], { boots: new Map([['b0', { name: 'b0', status: 'complete', error: 'No nodes were found to act upon.', nodes: {} }]]) }),
    );
    expect(d.actions).toEqual([]);
    expect(d.error).toBeInstanceOf(EmptyBootSessionError);
    expect(d.error!.message).toBe(
      'boot-service: boot session b0 would reboot no node: the boot service says: No nodes were found to act upon.; nothing was booted',
    );
  });
});

describe('decideWindow: back in service, boots and the index', () => {
  it('boots the newly quiet nodes together in one numbered session, recorded BOOTING (and the boot count saved) before the boot starts', () => {
    const d = increment(
      windowSession(),
      rolling({ bootCount: 3 }),
      view([flying('n0', 0, 'DRAINING'), flying('n1', 1, 'DRAINING')]),
      observe([drainedByUs('n0'), drainedByUs('n1')]),
    );
    expect(typesOf(d.actions)).toEqual(['saveProgress', 'recordNodes', 'startBoot']);
    expect(actionsOf(d.actions, 'saveProgress')[0]!.progress.window!.bootCount).toBe(4);
    expect(d.actions[2]).toEqual({ type: 'startBoot', name: `rollout-${RUN_ID}-boot-3`, template: 'image-2', limit: { nodes: ['n0', 'n1'] } });
    expect(recorded(d.actions)).toMatchObject([
      { name: 'n0', phase: 'BOOTING', boot: { session: `rollout-${RUN_ID}-boot-3`, requestedAt: NOW }, phaseTimes: { QUIESCED: NOW } },
      { name: 'n1', phase: 'BOOTING' },
    ]);
    expect(d.progress.window).toMatchObject({ bootCount: 4, draining: 0, phases: { BOOTING: 2 } });
  });

  it('asks again a boot whose start failed, recorded with the time it was asked again first, and never fails the node time-out-booting (seed 40247)', () => {
    // Recorded BOOTING 300 s ago (over the 200 s boot timeout), but the increment that started its boot failed: nothing booted it.
    const booting = flying('n1', 1, 'BOOTING', { boot: { session: 'b0', requestedAt: NOW - 300_000 } });
    const startFailed: BootSessionStatus = {
      name: 'b0',
      status: 'running',
      startError: 'SSM SendCommand to i-1 failed: InternalServerError (attempt 1 of 3)',
      nodes: { n1: 'pending' },
    };
    const d = increment(windowSession(), rolling(), view([booting]), observe([drainedByUs('n1')], { boots: new Map([['b0', startFailed]]) }));
    expect(typesOf(d.actions)).toEqual(['recordNodes', 'startBoot']);
    expect(recorded(d.actions)).toEqual([{ ...booting, boot: { session: 'b0', requestedAt: NOW - 300_000, retriedAt: NOW } }]);
    expect(d.actions[1]).toEqual({ type: 'startBoot', name: 'b0', template: 'image-2', limit: { nodes: ['n1'] } });
    expect(d.progress.counts).toEqual({ upgraded: 0, failed: 0 });
  });

  it('returns an upgraded node to service: our drain lifted before it is recorded UPGRADED, then its lock released', () => {
    const booted = flying('n0', 0, 'BOOTED', { boot: { session: 'b0', requestedAt: NOW - 60_000, finishedAt: NOW - 30_000 } });
    const d = increment(windowSession(), rolling(), view([booted]), observe([backAfterBoot('n0')]));
    expect(typesOf(d.actions)).toEqual(['resume', 'recordNodes', 'releaseLocks']);
    expect(recorded(d.actions)).toMatchObject([{ name: 'n0', status: 'UPGRADED', phase: 'DONE', op: { state: 'ACTIVE' } }]);
    expect(unlocked(d.actions)).toEqual(['n0']);
    expect(d.progress.counts).toEqual({ upgraded: 1, failed: 0 });
    expect(d.message).toBe('Window: 1 node(s) back in service: n0');
  });

  it('counts an index entry that settled in an increment whose progress write was lost, and releases its lock; a lost lock is marked gone and not counted', () => {
    const settled: NodeRecord = { name: 'n0', index: 0, status: 'UPGRADED', phase: 'DONE', op: { state: 'ACTIVE', wave: 0 } };
    const lost: NodeRecord = { name: 'n1', index: 1, status: 'IN_PROGRESS', phase: 'LOCK_LOST' };
    const d = increment(windowSession(), rolling(), view([], [], { settled: [settled, lost], todoOutside: 4 }), observe([]));
    expect(d.progress.counts).toEqual({ upgraded: 1, failed: 0 });
    expect(markCounts(d.progress.window!.marks!, 0, 2)).toEqual({ upgraded: 1, failed: 0 });
    expect(unlocked(d.actions)).toEqual(['n0']);
    expect(d.progress.window!.waveEnded).toBe(1);
  });

  it('polls while nodes are in flight and nothing moved, and parks for the operator when only the operator can move it', () => {
    const booting = flying('n0', 0, 'BOOTING', { boot: { session: 'b0', requestedAt: NOW - 5000 } });
    const running = observe([drainedByUs('n0', 'DOWN')], { boots: new Map([['b0', { name: 'b0', status: 'running', nodes: { n0: 'booting' } }]]) });
    const polling = increment(windowSession(), rolling(), view([booting]), running);
    expect(polling).toMatchObject({ waitSeconds: 30, actions: [] });
    expect(polling.waitForOperator).toBeUndefined();
    const paused = increment(windowSession({}, { operator: { paused: true } }), rolling(), view([], [todo('n1', 1)]), observe([idle('n1')]));
    expect(paused).toMatchObject({ waitForOperator: true, actions: [] });
    expect(paused.progress.window).toMatchObject({ paused: true, waiting: 'paused' });
  });
});

describe('decideWindow: stop and cancel', () => {
  const mid = () => view([flying('n0', 0, 'DRAINING'), flying('n1', 1, 'BOOTING', { boot: { session: 'b0', requestedAt: NOW - 5000 } })]);
  const site = () =>
    observe([drainedByUs('n0', 'ALLOCATED'), drainedByUs('n1', 'DOWN')], {
      boots: new Map([['b0', { name: 'b0', status: 'running', nodes: { n1: 'booting' } }]]),
    });

  it.each(['STOPPING', 'DELETING'] as const)(
    '%s puts back a node not rebooted yet (our drain lifted, recorded NOT_STARTED, lock released) and lets a booting one finish',
    (state) => {
      const d = increment(windowSession({}, { state }), rolling(), mid(), site());
      expect(actionsOf(d.actions, 'resume')).toEqual([{ type: 'resume', nodes: ['n0'] }]);
      expect(recorded(d.actions)).toEqual([{ name: 'n0', index: 0, status: 'NOT_STARTED' }]);
      expect(unlocked(d.actions)).toEqual(['n0']);
      expect(d.progress).toMatchObject({ stage: 'ROLLING', window: { inFlight: [1] } });
      expect(drained(d.actions)).toEqual([]);
    },
  );

  it('a stopped window with nothing in flight closes through CLEANUP, resumable at ROLLING', () => {
    const d = increment(windowSession({}, { state: 'STOPPING' }), rolling(), view([flying('n0', 0, 'QUIESCED')]), observe([drainedByUs('n0')]));
    expect(d.progress).toMatchObject({ stage: 'CLEANUP', stop: { stage: 'ROLLING', step: 0 }, window: { inFlight: [] } });
    expect(d.message).toContain('Window stopped: nothing in flight');
    expect(d.waitSeconds).toBe(0);
  });

  it('a deleted window with nothing in flight hands over to the delete sequence, which records the rest', () => {
    const d = increment(windowSession({}, { state: 'DELETING' }), rolling(), view([flying('n0', 0, 'DRAINING')]), observe([drainedByUs('n0', 'ALLOCATED')]));
    expect(d.progress).toMatchObject({ stage: 'CANCELLING', cancelMode: 'record-remaining', cancelCursor: 0 });
  });

  it('keeps an admin drain when a stop puts a node back', () => {
    const d = increment(windowSession({}, { state: 'STOPPING' }), rolling(), view([flying('n0', 0, 'DRAINING')]), observe([drainedByAdmin('n0')]));
    expect(actionsOf(d.actions, 'resume')).toEqual([]);
    expect(recorded(d.actions)).toEqual([{ name: 'n0', index: 0, status: 'NOT_STARTED' }]);
  });
});

describe('phase: start and admit (decideStarts)', () => {
  it('records the started nodes DRAINING with their ops and drains only those not drained (an admin drain kept, a dead session of ours re-claimed)', () => {
    const records = recordsOf(todo('a', 0), todo('b', 1), todo('c', 2));
    const ops = opsOf(op('a', { wave: 2 }), op('b'), op('c'));
    const wlm = wlmMap(idle('a'), drainedByAdmin('b'), wlmNode('c', 'IDLE', ['DRAIN'], { reason: `rolling-upgrade ${DEAD_SESSION}` }));
    const s = decideStarts({ session: { upgradeId: RUN_ID }, start: ['a', 'b', 'c'], admit: [], ops, records, wlm });
    expect(s.drain).toEqual(['a', 'c']);
    expect(s.started[0]).toEqual({
      name: 'a',
      index: 0,
      status: 'IN_PROGRESS',
      phase: 'DRAINING',
      op: { state: 'TRANSITION', holdsSlot: true, wave: 2, startedAt: NOW - 10_000 },
    });
    expect(s.admitted).toEqual([]);
  });

  it('records an admitted node with its op now holding a slot, and starts no drain for it', () => {
    const ahead = flying('a', 0, 'DRAINING', { holdsSlot: false });
    const s = decideStarts({
      session: { upgradeId: RUN_ID },
      start: [],
      admit: ['a'],
      ops: opsOf(op('a', { holdsSlot: true, admittedAt: NOW })),
      records: recordsOf(ahead),
      wlm: wlmMap(drainedByUs('a')),
    });
    expect(s.admitted).toEqual([{ ...ahead, op: { state: 'TRANSITION', holdsSlot: true, startedAt: NOW - 10_000, admittedAt: NOW } }]);
    expect(s.drain).toEqual([]);
    expect(s.message).toBeUndefined();
  });
});

describe('phase: put back (decidePutBack)', () => {
  it('lifts only our drain and records the node afresh, as never started', () => {
    const records = recordsOf(flying('a', 0, 'DRAINING', { extra: { reason: 'x', phaseTimes: { DRAINING: 1 } } }), flying('b', 1, 'QUIESCED'));
    const p = decidePutBack(['a', 'b'], records, wlmMap(drainedByUs('a'), drainedByAdmin('b')));
    expect(p.resume).toEqual(['a']);
    expect(p.records).toEqual([todo('a', 0), todo('b', 1)]);
  });
});

describe('phase: quiescing (decideQuiescing)', () => {
  const session = windowSession();
  const at = (phase: 'DRAINING' | 'QUIESCED', wlm: WlmNode | undefined, o: Operation, now = NOW) =>
    decideQuiescing({ session, record: flying('a', 0, phase), op: o, wlm, now });

  it('boots a node with a slot once it is quiet (drained, no job), or once recorded QUIESCED', () => {
    expect(at('DRAINING', drainedByUs('a'), op('a')).step).toEqual({ kind: 'boot' });
    expect(at('DRAINING', drainedByUs('a', 'ALLOCATED'), op('a')).step).toEqual({ kind: 'wait' });
    expect(at('QUIESCED', undefined, op('a')).step).toEqual({ kind: 'boot' });
  });

  it('fails a node with a slot not quiet within quiesceTimeoutSeconds of its start, not a moment before', () => {
    const started = NOW - 100_000;
    expect(at('DRAINING', drainedByUs('a', 'ALLOCATED'), op('a', { startedAt: started })).step).toEqual({ kind: 'fail', reason: FailureReason.quiesceTimeout });
    expect(at('DRAINING', drainedByUs('a', 'ALLOCATED'), op('a', { startedAt: started + 1 })).step).toEqual({ kind: 'wait' });
  });

  it('never boots a node drained ahead (no slot), and times it out only while its drain has not taken', () => {
    const ahead = (startedAt: number) => op('a', { holdsSlot: false, startedAt });
    expect(at('DRAINING', drainedByUs('a'), ahead(NOW)).step).toEqual({ kind: 'wait' });
    expect(at('DRAINING', busy('a'), ahead(NOW - 100_000)).step).toEqual({ kind: 'fail', reason: FailureReason.quiesceTimeout });
    expect(at('QUIESCED', drainedByUs('a', 'ALLOCATED'), ahead(NOW - 1_000_000)).step).toEqual({ kind: 'wait' });
  });

  it('drains again a node recorded DRAINING that is not drained (the increment that recorded it died before its drain)', () => {
    expect(at('DRAINING', busy('a'), op('a')).drainAgain).toBe(true);
    expect(at('DRAINING', drainedByUs('a', 'ALLOCATED'), op('a')).drainAgain).toBe(false);
    expect(at('DRAINING', undefined, op('a')).drainAgain).toBe(false);
    expect(at('QUIESCED', busy('a'), op('a')).drainAgain).toBe(false);
  });
});

describe('phase: booting (decideBooting)', () => {
  const session = windowSession();
  const record = { ...flying('a', 0, 'BOOTING'), boot: { session: 'b0', requestedAt: NOW - 10_000 } };
  const bootOf = (nodes: BootSessionStatus['nodes'], more: Partial<BootSessionStatus> = {}): BootSessionStatus => ({
    name: 'b0',
    status: 'running',
    nodes,
    ...more,
  });

  it('is booted when its session says so, failed when the session failed or completed without it', () => {
    expect(decideBooting({ session, record, boot: bootOf({ a: 'succeeded' }), now: NOW })).toEqual({ kind: 'booted' });
    expect(decideBooting({ session, record, boot: bootOf({ a: 'failed' }), now: NOW })).toEqual({ kind: 'fail', reason: FailureReason.bootFailed });
    expect(decideBooting({ session, record, boot: bootOf({ a: 'booting' }, { status: 'complete' }), now: NOW })).toEqual({
      kind: 'fail',
      reason: FailureReason.bootFailed,
    });
    expect(decideBooting({ session, record, boot: bootOf({ a: 'succeeded' }, { error: 'template gone' }), now: NOW })).toEqual({
      kind: 'fail',
      reason: FailureReason.bootFailed,
    });
  });

  it('times out bootTimeoutSeconds after the boot was requested, not before', () => {
    const booting = bootOf({ a: 'booting' });
    expect(decideBooting({ session, record, boot: booting, now: NOW - 10_000 + 200_000 })).toEqual({ kind: 'fail', reason: FailureReason.bootTimeout });
    expect(decideBooting({ session, record, boot: booting, now: NOW - 10_000 + 199_999 })).toEqual({ kind: 'wait' });
  });

  it('starts again a boot session the boot service does not know', () => {
    expect(decideBooting({ session, record, boot: undefined, now: NOW })).toEqual({ kind: 'restart-boot', bootSession: 'b0' });
  });

  it('starts again a boot session whose start failed, and never times it out (the boot never started)', () => {
    const startFailed = bootOf({ a: 'pending' }, { startError: 'SSM SendCommand failed: InternalServerError (attempt 1 of 3)' });
    expect(decideBooting({ session, record, boot: startFailed, now: NOW + 3_600_000 })).toEqual({ kind: 'restart-boot', bootSession: 'b0' });
    // Its attempts spent, the boot service ends it failed: the node's boot failed, not timed out.
    expect(decideBooting({ session, record, boot: bootOf({ a: 'failed' }, { status: 'complete', error: 'gave up' }), now: NOW })).toEqual({
      kind: 'fail',
      reason: FailureReason.bootFailed,
    });
  });

  it('counts the boot timeout from the boot asked again, not from the first request', () => {
    const retried = { ...record, boot: { ...record.boot, retriedAt: NOW + 300_000 } };
    const booting = bootOf({ a: 'booting' });
    expect(decideBooting({ session, record: retried, boot: booting, now: NOW + 300_000 + 199_999 })).toEqual({ kind: 'wait' });
    expect(decideBooting({ session, record: retried, boot: booting, now: NOW + 300_000 + 200_000 })).toEqual({
      kind: 'fail',
      reason: FailureReason.bootTimeout,
    });
  });
});

describe('phase: returning to service (decideReturning)', () => {
  const boot = { session: 'b0', requestedAt: NOW - 400_000, finishedAt: NOW - 300_000 };
  const record = { ...flying('a', 0, 'BOOTED'), boot };

  it('is back once Slurm shows it registered after its boot; waits until wlmReturnTimeoutSeconds after the boot ended, then fails', () => {
    const session = windowSession();
    expect(decideReturning({ session, record, wlm: backAfterBoot('a', NOW - 350_000), check: undefined, now: NOW })).toEqual({ kind: 'back' });
    expect(decideReturning({ session, record, wlm: backAfterBoot('a', NOW - 500_000), check: undefined, now: NOW - 1 })).toEqual({ kind: 'wait' });
    expect(decideReturning({ session, record, wlm: backAfterBoot('a', NOW - 500_000), check: undefined, now: NOW })).toEqual({
      kind: 'fail',
      reason: FailureReason.wlmTimeout,
    });
  });

  it('with a health check: starts it when back, fails on its failure with the detail, and a running check is not cut off by the return timeout', () => {
    const session = windowSession({ healthCheck: { command: 'nhc {node}', timeoutSeconds: 600 } });
    const wlm = backAfterBoot('a', NOW - 350_000);
    expect(decideReturning({ session, record, wlm, check: undefined, now: NOW })).toEqual({ kind: 'check' });
    const checking = { ...record, phase: 'CHECKING' as const, check: { id: 'c1', startedAt: NOW - 1000 } };
    const failed: HealthCheckResult = { state: 'failed', detail: 'exit 1' };
    expect(decideReturning({ session, record: checking, wlm, check: failed, now: NOW })).toEqual({
      kind: 'fail',
      reason: FailureReason.healthCheckFailed,
      detail: 'exit 1',
    });
    // The boot ended wlmReturnTimeoutSeconds ago: a node not checking would fail now, a checking one waits for its check.
    expect(decideReturning({ session, record: checking, wlm, check: { state: 'running' }, now: NOW })).toEqual({ kind: 'wait' });
    expect(decideReturning({ session, record: checking, wlm, check: { state: 'running' }, now: NOW - 1000 + 600_000 })).toMatchObject({
      kind: 'fail',
      reason: FailureReason.healthCheckFailed,
    });
    expect(decideReturning({ session, record: checking, wlm, check: { state: 'passed' }, now: NOW })).toEqual({ kind: 'back' });
  });
});

describe('phase: one node in flight (decideInFlightNode) and all of them (advanceInFlight)', () => {
  it('a stopping or deleted run puts back a node not rebooted yet, whatever its drain', () => {
    for (const state of ['STOPPING', 'DELETING'] as const) {
      const d = decideInFlightNode({
        session: windowSession({}, { state }),
        record: flying('a', 0, 'QUIESCED'),
        op: op('a'),
        observed: observe([drainedByUs('a')]),
        now: NOW,
      });
      expect(d.step).toEqual({ kind: 'put-back' });
    }
    const running = decideInFlightNode({
      session: windowSession(),
      record: flying('a', 0, 'QUIESCED'),
      op: op('a'),
      observed: observe([drainedByUs('a')]),
      now: NOW,
    });
    expect(running.step).toEqual({ kind: 'boot' });
  });

  it('skips the nodes started now and the ops released now (no longer in TRANSITION)', () => {
    const records = [flying('a', 0, 'QUIESCED'), flying('b', 1, 'QUIESCED'), flying('c', 2, 'QUIESCED')];
    const a = advanceInFlight({
      session: windowSession(),
      inFlight: records,
      startedNow: new Set(['a']),
      ops: opsOf(op('a'), op('b', { state: 'TODO' }), op('c')),
      records: recordsOf(...records),
      observed: observe([]),
      now: NOW,
    });
    expect(a.toBoot).toEqual(['c']);
  });

  it('gathers outcomes, released locks and lost boot sessions in the index order', () => {
    const boot = (session: string) => ({ session, requestedAt: NOW - 1000 });
    const records = [
      flying('a', 0, 'BOOTING', { boot: boot('lost') }),
      flying('b', 1, 'BOOTING', { boot: boot('b0') }),
      flying('c', 2, 'BOOTING', { boot: boot('lost') }),
      flying('d', 3, 'BOOTING', { boot: boot('b0') }),
    ];
    const a = advanceInFlight({
      session: windowSession(),
      inFlight: records,
      startedNow: new Set(),
      ops: opsOf(op('a'), op('b'), op('c'), op('d')),
      records: recordsOf(...records),
      observed: observe([], { boots: new Map([['b0', { name: 'b0', status: 'running', nodes: { b: 'failed', d: 'succeeded' } }]]) }),
      now: NOW,
    });
    expect(a.restartBoots).toEqual(new Map([['lost', ['a', 'c']]]));
    expect(a.outcomes).toEqual([['b', { ok: false, error: FailureReason.bootFailed }]]);
    expect(a.released).toEqual(['b']);
    expect(a.writes).toMatchObject([{ name: 'd', phase: 'BOOTED', boot: { session: 'b0', finishedAt: NOW } }]);
  });
});

describe('phase: settle ended (settleEnded)', () => {
  it('records DONE only the released nodes whose op ended, with the reason, without the lock token', () => {
    const records = recordsOf(flying('a', 0, 'BOOTED'), flying('b', 1, 'BOOTING'), flying('c', 2, 'DRAINING'));
    const ops = [
      op('a', { state: 'ACTIVE', endedAt: NOW }),
      op('b', { state: 'ERROR', error: FailureReason.bootTimeout, endedAt: NOW }),
      op('c', { state: 'TODO' }),
    ];
    const s = settleEnded({ ops, released: ['a', 'b', 'c'], records, failures: new Map([[FailureReason.bootTimeout, ['b']]]), unhealthy: [] });
    expect(s.ended.map((r) => [r.name, r.status, r.phase, r.reason, r.lockToken])).toEqual([
      ['a', 'UPGRADED', 'DONE', undefined, undefined],
      ['b', 'FAILED', 'DONE', FailureReason.bootTimeout, undefined],
    ]);
    expect(s.messages).toEqual(['Window: 1 node(s) back in service: a', `Window: 1 node(s) failed with ${FailureReason.bootTimeout}: b`]);
    expect(settleEnded({ ops, released: ['b'], records, failures: new Map(), unhealthy: [] }).ended.map((r) => r.name)).toEqual(['b']);
  });

  it('names each node that failed its health check with the detail', () => {
    const s = settleEnded({
      ops: [],
      released: [],
      records: new Map(),
      failures: new Map([[FailureReason.healthCheckFailed, ['a']]]),
      unhealthy: [{ name: 'a', detail: 'exit 1: ERROR' }],
    });
    expect(s.messages).toEqual([`Window: 1 node(s) failed with ${FailureReason.healthCheckFailed}: a (exit 1: ERROR)`]);
  });
});

describe('phase: boot (decideBoots)', () => {
  it('starts one session for the quiet nodes, named by the count, then restarts lost sessions under their own names', () => {
    const records = recordsOf(
      flying('a', 0, 'DRAINING', { extra: { phaseTimes: { DRAINING: 5, QUIESCED: 6 } } }),
      flying('b', 1, 'QUIESCED'),
      flying('c', 2, 'BOOTING', { boot: { session: 'old', requestedAt: NOW - 400_000 } }),
    );
    const b = decideBoots({
      session: { upgradeId: RUN_ID, upgradeTemplateId: 'img' },
      toBoot: ['a', 'b'],
      restartBoots: new Map([['old', ['c']]]),
      bootCount: 2,
      records,
      now: NOW,
    });
    expect(b.bootCount).toBe(3);
    expect(b.actions).toEqual([
      { type: 'startBoot', name: `rollout-${RUN_ID}-boot-2`, template: 'img', limit: { nodes: ['a', 'b'] } },
      { type: 'startBoot', name: 'old', template: 'img', limit: { nodes: ['c'] } },
    ]);
    expect(b.writes.slice(0, 2).map((r) => r.phaseTimes)).toEqual([{ DRAINING: 5, QUIESCED: 6 }, { QUIESCED: NOW }]);
    // The restarted node: asked again now (its timeout counts from it), its request time kept (the bound its boot is judged after).
    expect(b.writes[2]).toMatchObject({ name: 'c', boot: { session: 'old', requestedAt: NOW - 400_000, retriedAt: NOW } });
  });

  it('starts no session and keeps the count when nothing is quiet', () => {
    const b = decideBoots({
      session: { upgradeId: RUN_ID, upgradeTemplateId: 'img' },
      toBoot: [],
      restartBoots: new Map(),
      bootCount: 2,
      records: new Map(),
      now: NOW,
    });
    expect(b).toEqual({ writes: [], actions: [], bootCount: 2 });
  });
});

describe('phase: recount (windowAfter)', () => {
  const decision = { start: [], admit: [], release: [], gated: [], wave: 0, finished: false, leftAlone: [], blocked: [] };
  const base = (ops: Operation[], records: NodeRecord[], more: Partial<Parameters<typeof windowAfter>[0]> = {}) =>
    windowAfter({
      session: { nodeCount: 6 },
      window: { ...initialWindowProgress(6), wave: 0 },
      state: { ops, wave: 0, approvedWaves: [], paused: false },
      decision,
      counts: { upgraded: 2, failed: 1 },
      view: { settled: [], dropped: [] },
      ended: [],
      records: recordsOf(...records),
      bootCount: 0,
      outside: undefined,
      now: NOW,
      ...more,
    });

  it('indexes the ops in TRANSITION by plan position and counts those without a slot as ahead, apart from the phases', () => {
    const w = base(
      [op('a', { holdsSlot: false }), op('b'), op('c', { state: 'ACTIVE' })],
      [flying('a', 3, 'DRAINING', { holdsSlot: false }), flying('b', 5, 'BOOTING'), flying('c', 1, 'DONE')],
    );
    expect(w.window).toMatchObject({ inFlight: [3, 5], ahead: 1, draining: 1, phases: { DRAINING: 1, BOOTING: 1 } });
    expect(w.counts).toEqual({ upgraded: 2, failed: 1 });
  });

  it('opens a wave with its start counts, and restarts the wave quota', () => {
    const ended: NodeRecord = { name: 'a', index: 0, status: 'UPGRADED', phase: 'DONE', op: { state: 'ACTIVE', wave: 1 } };
    const w = base([], [], {
      state: { ops: [], wave: 1, approvedWaves: [], paused: false },
      ended: [ended],
      window: { ...initialWindowProgress(6), wave: 0, waveEnded: 4 },
    });
    expect(w.counts).toEqual({ upgraded: 3, failed: 1 });
    expect(w.window).toMatchObject({ wave: 1, waveEnded: 1, waveStartCounts: { upgraded: 3, failed: 1 }, waveLastEndedAt: NOW });
  });

  it('keeps the nodes outside the plan that were down at the start, once', () => {
    const outside = wlmMap(wlmNode('x', 'DOWN'), wlmNode('y', 'IDLE'));
    expect(base([], [], { outside }).window.outsideDownAtStart).toEqual(['x']);
    expect(base([], [], { outside, window: { ...initialWindowProgress(6), wave: 0, outsideDownAtStart: [] } }).window.outsideDownAtStart).toEqual([]);
  });
});

describe('phase: end (decideWindowEnd) and wait (windowWait)', () => {
  const decision = { start: [], admit: [], release: [], gated: [], wave: 0, finished: false, leftAlone: [], blocked: [] };
  const window = initialWindowProgress(6);
  const end = (state: UpgradeSession['state'], inFlight: boolean, finished = false) =>
    decideWindowEnd({
      session: { state },
      progress: rolling(),
      decision: { ...decision, finished },
      window,
      counts: { upgraded: 0, failed: 0 },
      inFlight,
      halted: undefined,
      outsideTodo: [],
      records: new Map(),
      now: NOW,
    });

  it('rolls on while anything is in flight, whatever the state', () => {
    for (const state of ['UPDATING', 'STOPPING', 'DELETING'] as const) expect(end(state, true).progress.stage).toBe('ROLLING');
  });

  it('a finished run cleans up; a stopping run that finished anyway cleans up as finished, not stopped', () => {
    expect(end('UPDATING', false, true)).toMatchObject({
      progress: { stage: 'CLEANUP', window: { finishedAt: NOW } },
      message: 'Window: every node of the plan is done',
    });
    expect(end('STOPPING', false, true).progress.stop).toBeUndefined();
    expect(end('UPDATING', false).progress.stage).toBe('ROLLING');
  });

  it('waits: on at once when something moved, the poll interval otherwise, sooner when the decision changes by itself', () => {
    const session = windowSession();
    const next = rolling();
    expect(windowWait({ session, decision: {}, next, moved: true, inFlight: true, now: NOW }).waitSeconds).toBe(0);
    expect(windowWait({ session, decision: {}, next, moved: false, inFlight: true, now: NOW }).waitSeconds).toBe(30);
    expect(windowWait({ session, decision: { recheckAt: NOW + 4500 }, next, moved: false, inFlight: true, now: NOW }).waitSeconds).toBe(5);
    expect(windowWait({ session, decision: {}, next: { ...next, stage: 'CLEANUP' }, moved: false, inFlight: false, now: NOW }).waitSeconds).toBe(0);
  });

  it("waits for the site (site events' park) only with nodes in flight and no health check running, never past their first timeout", () => {
    const session = windowSession();
    const next = rolling();
    const record = (name: string, phase: NodeRecord['phase'], extra: Partial<NodeRecord> = {}): NodeRecord => ({
      name,
      index: 0,
      status: 'IN_PROGRESS',
      phase,
      ...extra,
    });
    const wait = (inFlightRecords: NodeRecord[], recheckAt?: number) =>
      windowWait({
        session,
        decision: recheckAt === undefined ? {} : { recheckAt },
        next,
        moved: false,
        inFlight: inFlightRecords.length > 0,
        now: NOW,
        inFlightRecords,
      });
    // Draining since 40 s ago: the quiesce timeout runs out in quiesceTimeoutSeconds - 40 s.
    const draining = record('d', 'DRAINING', { op: { state: 'ACTIVE', startedAt: NOW - 40_000 } });
    expect(wait([draining]).siteWait).toEqual({ recheckSeconds: session.quiesceTimeoutSeconds - 40, quiesce: true });
    // Booting: the boot timeout counts from the request (or its retry); the boot's progress may be the boot service's.
    const booting = record('b', 'BOOTING', { boot: { session: 's', requestedAt: NOW - 60_000 } });
    expect(wait([draining, booting]).siteWait).toEqual({
      recheckSeconds: Math.min(session.quiesceTimeoutSeconds - 40, session.bootTimeoutSeconds - 60),
      quiesce: true,
      afterBoot: true,
    });
    // The scheduler's own recheck sooner than any timeout.
    expect(wait([booting], NOW + 7_000).siteWait).toEqual({ recheckSeconds: 7, afterBoot: true });
    // Nothing in flight: nothing of the site to wait for.
    expect(wait([]).siteWait).toBeUndefined();
  });

  it("a node's health check in flight: a wait for a command's end (commandEnd), bounded by the check's timeout", () => {
    const session = windowSession({ healthCheck: { command: 'ssh {node} nhc', timeoutSeconds: 120 } });
    const checking = { ...todo('c', 0), status: 'IN_PROGRESS' as const, phase: 'CHECKING' as const, check: { id: 'x', startedAt: NOW - 20_000 } };
    const wait = windowWait({ session, decision: {}, next: rolling(), moved: false, inFlight: true, now: NOW, inFlightRecords: [checking] });
    expect(wait).toEqual({ waitSeconds: 30, siteWait: { recheckSeconds: 100, commandEnd: true } });
  });

  it('parks for the operator only when nothing is in flight and the run is not being deleted', () => {
    const wait = (state: UpgradeSession['state'], inFlight: boolean) =>
      windowWait({
        session: windowSession({}, { state }),
        decision: { wait: { kind: 'approval', wave: 1 } },
        next: rolling(),
        moved: false,
        inFlight,
        now: NOW,
      }).waitForOperator;
    expect(wait('UPDATING', false)).toBe(true);
    expect(wait('UPDATING', true)).toBeUndefined();
    expect(wait('DELETING', false)).toBeUndefined();
  });
});

describe('action order (orderWindowActions)', () => {
  it('puts the intent first, the started records before their drain, site changes before records, records before boots, locks last', () => {
    const session = windowSession();
    const actions = orderWindowActions({
      session,
      intent: { expected: rolling(), progress: rolling() },
      started: [todo('s', 0)],
      drain: ['s'],
      resume: ['r'],
      back: ['k'],
      failures: new Map([['why', ['f']]]),
      wlm: wlmMap(drainedByUs('k'), idle('f')),
      written: [todo('w', 1)],
      checks: { type: 'startHealthChecks', command: 'c {node}', timeoutSeconds: 1, records: [] },
      boots: [{ type: 'startBoot', name: 'b', template: 't', limit: { nodes: ['w'] } }],
      unlock: ['f'],
    });
    expect(typesOf(actions)).toEqual([
      'saveProgress',
      'recordNodes',
      'drain',
      'resume',
      'resume',
      'fail',
      'addToGroup',
      'recordNodes',
      'startHealthChecks',
      'startBoot',
      'releaseLocks',
    ]);
  });
});

describe('properties of one increment', () => {
  type Kind = 'todo' | 'draining' | 'quiesced' | 'booting' | 'booted' | 'ahead';
  const kindArb = fc.constantFrom<Kind>('todo', 'todo', 'draining', 'quiesced', 'booting', 'booted', 'ahead');
  const wlmArb = fc.constantFrom<Seen>('idle', 'busy', 'ours-idle', 'ours-busy', 'admin', 'back', 'down');
  const bootArb = fc.constantFrom<'missing' | 'booting' | 'succeeded' | 'failed'>('missing', 'booting', 'succeeded', 'failed');
  type Seen = 'idle' | 'busy' | 'ours-idle' | 'ours-busy' | 'admin' | 'back' | 'down';
  interface Case {
    nodes: { kind: Kind; wlm: Seen; boot: 'missing' | 'booting' | 'succeeded' | 'failed'; secondsAgo: number }[];
    maxUnavailable: number;
    drainAhead: number;
    state: UpgradeSession['state'];
    failed: number;
    maxFailed: number | undefined;
  }
  const nodeArb = fc.record({ kind: kindArb, wlm: wlmArb, boot: bootArb, secondsAgo: fc.integer({ min: 0, max: 500 }) });
  const caseArb: fc.Arbitrary<Case> = fc.record({
    nodes: fc.array(nodeArb, { minLength: 1, maxLength: 8 }),
    maxUnavailable: fc.integer({ min: 1, max: 4 }),
    drainAhead: fc.integer({ min: 0, max: 2 }),
    state: fc.constantFrom<UpgradeSession['state']>('UPDATING', 'UPDATING', 'STOPPING', 'DELETING'),
    failed: fc.integer({ min: 0, max: 2 }),
    maxFailed: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
  });

  /** A consistent increment input: at most maxUnavailable slot holders and drainAhead nodes ahead in flight, as the scheduler leaves them. */
  function build(c: Case) {
    const wlm: WlmNode[] = [];
    const inFlight: NodeRecord[] = [];
    const candidates: NodeRecord[] = [];
    const boots = new Map<string, BootSessionStatus>();
    let slots = 0;
    let ahead = 0;
    c.nodes.forEach((n, i) => {
      const name = `n${i}`;
      const site = {
        idle: idle(name),
        busy: busy(name),
        'ours-idle': drainedByUs(name),
        'ours-busy': drainedByUs(name, 'ALLOCATED'),
        admin: drainedByAdmin(name),
        back: backAfterBoot(name, NOW - 1000),
        down: wlmNode(name, 'DOWN', ['DRAIN'], { reason: OUR_DRAIN }),
      }[n.wlm];
      wlm.push(site);
      const kind = n.kind === 'ahead' ? (ahead < c.drainAhead ? 'ahead' : 'todo') : n.kind !== 'todo' && slots >= c.maxUnavailable ? 'todo' : n.kind;
      if (kind === 'todo') return void candidates.push(todo(name, i));
      if (kind === 'ahead') {
        ahead++;
        return void inFlight.push(flying(name, i, 'DRAINING', { holdsSlot: false, secondsAgo: n.secondsAgo }));
      }
      slots++;
      const phase = ({ draining: 'DRAINING', quiesced: 'QUIESCED', booting: 'BOOTING', booted: 'BOOTED' } as const)[kind];
      const boot = kind === 'booting' || kind === 'booted' ? { session: `b${i}`, requestedAt: NOW - n.secondsAgo * 1000 } : undefined;
      if (boot && n.boot !== 'missing') boots.set(boot.session, { name: boot.session, status: 'running', nodes: { [name]: n.boot } });
      inFlight.push(flying(name, i, phase, { secondsAgo: n.secondsAgo, ...(boot ? { boot } : {}) }));
    });
    const session = windowSession(
      { maxUnavailable: c.maxUnavailable, drainAhead: c.drainAhead, ...(c.maxFailed !== undefined ? { maxFailed: c.maxFailed } : {}) },
      { state: c.state, nodeCount: c.nodes.length },
    );
    const progress: Progress = { ...rolling({}, { upgraded: 0, failed: c.failed }), window: { ...initialWindowProgress(c.nodes.length), wave: 0 } };
    return { session, progress, view: view(inFlight, candidates), observed: observe(wlm, { boots, jobEnds: new Map() }) };
  }

  it('never holds more than maxUnavailable slots, nor more than drainAhead nodes ahead, after an increment', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { session, progress, view: v, observed } = build(c);
        const d = increment(session, progress, v, observed);
        const w = d.progress.window!;
        expect(w.inFlight!.length - w.ahead!).toBeLessThanOrEqual(c.maxUnavailable);
        expect(w.ahead!).toBeLessThanOrEqual(c.drainAhead);
      }),
      { numRuns: 150 },
    );
  });

  it('drains only nodes in the index saved before, and every node that leaves the index gives back its lock', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { session, progress, view: v, observed } = build(c);
        const d = increment(session, progress, v, observed);
        const position = new Map([...v.inFlight, ...v.candidates].map((r) => [r.name, r.index]));
        const intent = actionsOf(d.actions, 'saveProgress')[0]?.progress.window!.inFlight ?? v.inFlight.map((r) => r.index);
        for (const name of drained(d.actions)) expect(intent).toContain(position.get(name));
        // Locks are released last, after everything done to the node.
        if (unlocked(d.actions).length > 0) expect(d.actions.at(-1)!.type).toBe('releaseLocks');
        const after = new Set(d.progress.window!.inFlight);
        const unlockedNow = new Set(unlocked(d.actions));
        for (const record of v.inFlight) expect(after.has(record.index)).toBe(!unlockedNow.has(record.name));
        // Nothing starts while stopping or deleting.
        if (c.state !== 'UPDATING')
          expect(
            actionsOf(d.actions, 'recordNodes')
              .flatMap((a) => a.records)
              .filter((r) => r.phase === 'DRAINING'),
          ).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });
});
