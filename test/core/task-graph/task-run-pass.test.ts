import {
  concludeTaskRunPass,
  decideTaskStarts,
  NO_START_LOCKS,
  ownDrainsToLift,
  planTaskGraph,
  settleTaskRunPass,
  startTaskRun,
  TIMEOUT_GRACE_SECONDS,
  validateTaskGraph,
  type StartLocks,
  type StoredSchedule,
  type TaskRunPassDecision,
  type TaskRunPassInput,
} from '../../../core/task-graph';

/** One pass decided without I/O (core/task-graph/task-run-pass.ts): its three phases, the locks each start wants granted. */

const RUN = '4170325b-9a92-42cf-aaa1-20e5ba288779';
const SETTINGS = { maxInTransition: 100, pollIntervalSeconds: 10, taskTimeoutSeconds: 3600 };

/** Nodes a and b of one `one_by_one` group: b's drain and reboot start only once a's ended ACTIVE. */
const plan = planTaskGraph(
  validateTaskGraph([
    { id: 'g', type: 'group', role: 'compute', parameters: { strategy: { type: 'one_by_one' } } },
    { id: 'drain', type: 'drain', groups: ['g'] },
    { id: 'reboot', type: 'reboot', groups: ['g'], requires: ['drain'], parameters: { template: 't', timeout: 100 } },
  ]),
  [
    { name: 'a', roles: ['compute'] },
    { name: 'b', roles: ['compute'] },
  ],
);

function inputOf(stored: StoredSchedule, extra: Partial<TaskRunPassInput> = {}): TaskRunPassInput {
  return { runId: RUN, settings: SETTINGS, plan, stored, windDown: undefined, lost: new Map(), answers: new Map(), gates: {}, now: 0, ...extra };
}

/** A whole pass, every lock a start wants granted (token 7) unless another run holds it. */
function pass(input: TaskRunPassInput, heldByOthers: ReadonlyMap<string, string> = new Map()): TaskRunPassDecision {
  const settled = settleTaskRunPass(input);
  let locks: StartLocks = NO_START_LOCKS;
  let starts = decideTaskStarts(settled, locks);
  while (starts.toLock.length > 0) {
    const held = new Map(starts.toLock.filter((node) => heldByOthers.has(node)).map((node) => [node, heldByOthers.get(node)!]));
    locks = {
      ...locks,
      taken: new Map([...locks.taken, ...starts.toLock.filter((node) => !held.has(node)).map((node) => [node, 7] as const)]),
      heldByOthers: new Map([...locks.heldByOthers, ...held]),
    };
    if (held.size === 0) break;
    starts = decideTaskStarts(settled, locks);
  }
  return concludeTaskRunPass(settled, starts, locks);
}

/** The stored schedule after a pass whose starts reached the site (execution `{ started: op }`). */
function storedAfter(decision: TaskRunPassDecision, before: StoredSchedule): StoredSchedule {
  const executions = new Map([...before.executions, ...decision.toStart.map((op) => [op, { started: op }] as const)]);
  return { state: decision.state, executions, results: before.results, lockTokens: decision.held };
}

const opened: StoredSchedule = { state: startTaskRun(plan), executions: new Map(), results: new Map(), lockTokens: new Map() };
const stateOf = (decision: TaskRunPassDecision, op: string) => decision.state.ops.find((o) => o.id === op)!;

describe('a pass of a task run', () => {
  it('starts the first task on the first node, under its lock, and looks again at the poll interval', () => {
    const decision = pass(inputOf(opened));

    expect(decision).toMatchObject({ toStart: ['a/drain'], status: 'RUNNING', over: false, idle: [], release: [], waitSeconds: 10 });
    expect([...decision.held]).toEqual([['a', 7]]);
    expect([...decision.fence]).toEqual([]);
  });

  it('records a task the site says ended, and checks the token of a node it held before the pass (fencing)', () => {
    const first = pass(inputOf(opened));

    const second = pass(inputOf(storedAfter(first, opened), { answers: new Map([['a/drain', { outcome: { result: 'ok' } }]]), now: 5000 }));

    expect(stateOf(second, 'a/drain').state).toBe('ACTIVE');
    expect(second.toStart).toEqual(['a/reboot']);
    expect([...second.fence]).toEqual([['a', 7]]);
  });

  it('ends a task the site still reports running past its timeout and the grace as `timeout`', () => {
    const started = storedAfter(pass(inputOf(opened)), opened);
    const drainTimeout = SETTINGS.taskTimeoutSeconds;

    const early = pass(inputOf(started, { now: (drainTimeout + TIMEOUT_GRACE_SECONDS) * 1000 - 1 }));
    const late = pass(inputOf(started, { now: (drainTimeout + TIMEOUT_GRACE_SECONDS) * 1000 }));

    expect(stateOf(early, 'a/drain').state).toBe('TRANSITION');
    expect(stateOf(late, 'a/drain')).toMatchObject({ state: 'ERROR', error: `timeout: no outcome ${drainTimeout + TIMEOUT_GRACE_SECONDS} s after it started` });
  });

  it('leaves a node whose lock was lost: its task in flight ends, its lock is dropped, and the run says to whom', () => {
    const started = storedAfter(pass(inputOf(opened)), opened);

    const decision = pass(inputOf(started, { lost: new Map([['a', 'other-run']]), now: 1000 }));

    expect(stateOf(decision, 'a/drain')).toMatchObject({ state: 'ERROR', error: 'lock lost to other-run' });
    expect(decision.messages).toEqual(['1 node(s) no longer ours (lock lost to run other-run): left alone: a']);
    expect(decision.held.has('a')).toBe(false);
  });

  it('waits for a node another run holds, saying for whom, and gives back no lock it took', () => {
    const decision = pass(inputOf(opened), new Map([['a', 'run-x']]));

    expect(decision.toStart).toEqual([]);
    expect(decision.status).toBe('RUNNING');
    expect(decision.messages).toEqual(['Waiting for nodes another run holds: a (locked by run run-x)']);
  });
});

describe('a stop', () => {
  /** Node a's drain ended, its reboot in flight when the stop came. */
  function rebootInFlight(): StoredSchedule {
    const first = pass(inputOf(opened));
    const drained = storedAfter(first, opened);
    const second = pass(inputOf(drained, { answers: new Map([['a/drain', { outcome: { result: 'ok' } }]]), now: 5000 }));
    return storedAfter(second, drained);
  }

  it('lets the task in flight finish and starts nothing', () => {
    const decision = pass(inputOf(rebootInFlight(), { windDown: 'stop', now: 6000 }));

    expect(decision).toMatchObject({ toStart: [], status: 'STOPPING', over: false });
  });

  it('whose task in flight then fails ends STOPPED (seed 26177): the failure recorded on its node, the node never started left as it was', () => {
    // Act: the reboot fails while the run is stopping; what is left (b) is blocked behind the failure.
    const decision = pass(
      inputOf(rebootInFlight(), { windDown: 'stop', answers: new Map([['a/reboot', { outcome: { result: 'failed', detail: 'boot hung' } }]]), now: 9000 }),
    );

    // Assess
    expect(decision).toMatchObject({ status: 'STOPPED', over: true, toStart: [], waitSeconds: 0, release: ['a'] });
    expect(stateOf(decision, 'a/reboot')).toMatchObject({ state: 'ERROR', error: 'failed: boot hung' });
    expect(stateOf(decision, 'b/drain').state).toBe('BLOCKED');
    // The finish is not recorded: a resume judges the run (then FAILED, nothing left that could run).
    expect(decision.state.finishedAt).toBeUndefined();
    expect(stateOf(decision, 'b/drain').blockedBy).toBeUndefined();
  });

  it('of a run whose last task then succeeds ends STOPPED too; the resume ends it SUCCEEDED', () => {
    // Prepare: one node, its drain in flight.
    const single = planTaskGraph(validateTaskGraph([{ id: 'drain', type: 'drain', role: '*' }]), [{ name: 'a', roles: ['compute'] }]);
    const fresh: StoredSchedule = { ...opened, state: startTaskRun(single) };
    const started = storedAfter(pass({ ...inputOf(fresh), plan: single }), fresh);

    // Act
    const stopped = pass({
      ...inputOf(started, { windDown: 'stop', answers: new Map([['a/drain', { outcome: { result: 'ok' } }]]), now: 1000 }),
      plan: single,
    });
    const resumed = pass({ ...inputOf(storedAfter(stopped, started), { now: 2000 }), plan: single });

    // Assess
    expect(stopped).toMatchObject({ status: 'STOPPED', over: true });
    expect(resumed).toMatchObject({ status: 'SUCCEEDED', over: true, toStart: [] });
  });

  it('whose failure left nothing that can run: the resume ends the run FAILED', () => {
    const stopped = pass(inputOf(rebootInFlight(), { windDown: 'stop', answers: new Map([['a/reboot', { outcome: { result: 'failed' } }]]), now: 9000 }));

    const resumed = pass(inputOf({ state: stopped.state, executions: new Map(), results: new Map(), lockTokens: stopped.held }, { now: 10_000 }));

    expect(resumed).toMatchObject({ status: 'FAILED', over: true, toStart: [] });
    expect(stateOf(resumed, 'b/drain').blockedBy).toEqual(['a/reboot']);
  });
});

describe('a cancel', () => {
  it('halts the run; once nothing is in flight it ends CANCELLED, naming the nodes whose drain ran', () => {
    const first = pass(inputOf(opened));

    const decision = pass(
      inputOf(storedAfter(first, opened), { windDown: 'cancel', answers: new Map([['a/drain', { outcome: { result: 'ok' } }]]), now: 1000 }),
    );

    expect(decision).toMatchObject({ status: 'CANCELLED', over: true, toStart: [], liftDrainsOf: ['a'], release: ['a'] });
  });

  it('lifts only the drains whose Slurm reason still names the run', () => {
    const wlm = new Map([
      ['a', { reason: `rollout-task ${RUN} task=drain`, flags: ['DRAIN'] }],
      ['b', { reason: 'hw: fan replaced', flags: ['DRAIN'] }],
      ['c', { reason: `rollout-task ${RUN} task=drain`, flags: [] }],
    ]);

    expect(ownDrainsToLift(RUN, ['a', 'b', 'c'], wlm)).toEqual({ nodes: ['a'], message: "Cancelled: the run's drain lifted on a" });
    expect(ownDrainsToLift(RUN, ['b'], wlm).message).toBe('Cancelled: no node is left drained by the run');
  });
});
