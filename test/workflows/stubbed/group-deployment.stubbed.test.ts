import { activityError, maxOverlap, StubbedWorkflows, type Stub, type StubCall } from '../../support/stubbed-workflows';

/** Seconds a stubbed batch takes: its Check Batch reports it done after one wait. */
const BATCH_SECONDS = 60;

/**
 * Stubs of a deployment whose groups each run a prepare and a deploy phase of `batches` batches of
 * one node; Pick Ready Groups hands out the groups in `waves`, then reports done.
 */
function deployment(options: { waves: string[][]; maxParallelGroups: number; batches?: number; maxConcurrency?: number; finish?: Stub }): Record<string, Stub> {
  const waves = [...options.waves];
  const batches = options.batches ?? 1;
  return {
    StartDeployment: () => ({ deploymentId: 'd1', maxParallelGroups: options.maxParallelGroups }),
    PickReadyGroups: () => {
      const ready = waves.shift();
      return ready ? { deploymentId: 'd1', maxParallelGroups: options.maxParallelGroups, ready, done: false } : { deploymentId: 'd1', done: true };
    },
    PlanPhase: (p) => ({ ...p, skip: false, pages: [{ first: 0, last: batches - 1 }], maxConcurrency: options.maxConcurrency ?? batches }),
    StartBatch: (p) => ({ ...p, done: false, waitSeconds: BATCH_SECONDS }),
    CheckBatch: (p) => ({ ...p, done: true }),
    EvaluatePhase: (p) => ({ ...p, next: p.phase === 'PREPARE' ? 'DEPLOY' : 'DONE' }),
    FinishDeployment: options.finish ?? (() => ({ status: 'SUCCEEDED' })),
  };
}

/** Groups `ok` and `broken` at once; broken's child execution breaks (its Plan Phase cannot find the deployment). */
function withBrokenGroup(): Record<string, Stub> {
  const stubs = deployment({ waves: [['ok', 'broken']], maxParallelGroups: 2 });
  const plan = stubs.PlanPhase!;
  return {
    ...stubs,
    PlanPhase: (p, call) => {
      if (p.group === 'broken') throw activityError('DeploymentNotFoundError', 'no such deployment');
      return plan(p, call);
    },
  };
}

/** [first call, last call] of each key's calls: a group's or a batch's time in flight. */
function spans(calls: readonly StubCall[], key: (call: StubCall) => string): { from: number; to: number }[] {
  const byKey = new Map<string, { from: number; to: number }>();
  for (const call of calls) {
    const span = byKey.get(key(call));
    byKey.set(key(call), span ? { from: span.from, to: call.at } : { from: call.at, to: call.at });
  }
  return [...byKey.values()];
}

describe('group deployment workflow with stubbed activities, on virtual time', () => {
  let flows: StubbedWorkflows;
  beforeAll(() => {
    flows = new StubbedWorkflows();
  });

  it.each([1, 2, 3])('runs exactly maxParallelGroups = %i groups at once, each as a child execution', async (maxParallelGroups) => {
    const groups = ['a', 'b', 'c', 'd', 'e'];
    flows.use(deployment({ waves: [groups], maxParallelGroups }));

    const outcome = await flows.run('groupDeployment', { strategy: 'any' });

    expect(outcome.status).toBe('SUCCEEDED');
    const groupCalls = flows.calls.filter((c) => ['PlanPhase', 'EvaluatePhase'].includes(c.fn));
    expect(maxOverlap(spans(groupCalls, (c) => c.payload.group as string))).toBe(maxParallelGroups);
    // A group is two phases of one batch each; groups run in waves of maxParallelGroups.
    expect(flows.elapsedSeconds()).toBe(Math.ceil(groups.length / maxParallelGroups) * 2 * BATCH_SECONDS);
    expect(flows.executionsOf('DeployGroup')).toHaveLength(5);
    // One page of batches per phase and group.
    expect(flows.executionsOf('RunNodeBatches')).toHaveLength(10);
    expect(flows.callsOf('FinishDeployment')).toHaveLength(1);
  });

  it('runs exactly the strategy amount of batches at once: 50 of 60, then the other 10', async () => {
    flows.use(deployment({ waves: [['g']], maxParallelGroups: 1, batches: 60, maxConcurrency: 50 }));

    const outcome = await flows.run('groupDeployment', {});

    expect(outcome.status).toBe('SUCCEEDED');
    for (const phase of ['PREPARE', 'DEPLOY']) {
      const batchCalls = flows.calls.filter((c) => ['StartBatch', 'CheckBatch'].includes(c.fn) && c.payload.phase === phase);
      const batchSpans = spans(batchCalls, (c) => String(c.payload.batch));
      expect(batchSpans).toHaveLength(60);
      expect(maxOverlap(batchSpans)).toBe(50);
      expect(batchCalls.filter((c) => c.fn === 'StartBatch').map((c) => c.at)).toEqual([
        ...Array<number>(50).fill(batchSpans[0]!.from),
        ...Array<number>(10).fill(batchSpans[0]!.from + BATCH_SECONDS),
      ]);
    }
    expect(flows.elapsedSeconds()).toBe(4 * BATCH_SECONDS);
  });

  it('hands a group whose child execution breaks to Fail Group, and the other groups go on', async () => {
    flows.use({ ...withBrokenGroup(), FailGroup: () => ({}) });

    const outcome = await flows.run('groupDeployment', {});

    expect(outcome.status).toBe('SUCCEEDED');
    expect(flows.callsOf('FailGroup').map((c) => c.payload)).toEqual([
      {
        deploymentId: 'd1',
        group: 'broken',
        error: expect.objectContaining({ Error: 'States.TaskFailed', Cause: expect.stringContaining('DeploymentNotFoundError') }),
      },
    ]);
    expect(flows.callsOf('EvaluatePhase').map((c) => c.payload.group)).toEqual(['ok', 'ok']);
  });

  it('fails the run with CriticalGroupFailed when Finish Deployment reports a failed critical group', async () => {
    flows.use(
      deployment({
        waves: [['a']],
        maxParallelGroups: 1,
        finish: () => ({ status: 'FAILED', cause: "critical group 'a' failed" }),
      }),
    );

    const outcome = await flows.run('groupDeployment', {});

    expect(outcome).toMatchObject({ status: 'FAILED', error: 'CriticalGroupFailed', cause: "critical group 'a' failed" });
  });

  /** The Fail states an execution entered, in order (a Map iteration's included). */
  const failStatesOf = (executionArn: string) =>
    (flows.engine.execution(executionArn)?.history ?? []).filter((e) => e.type === 'FailStateEntered').map((e) => e.stateName);
  const siteDown = () => {
    throw activityError('SiteServiceError', 'deployment store: UpdateItem answered 500');
  };

  it.each([
    ['Pick Ready Groups', 'PickReadyGroups'],
    ['Finish Deployment', 'FinishDeployment'],
  ])('ends at Deployment Failed when %s keeps failing: its retries run out, Record Failure marks the deployment FAILED with the error', async (_state, fn) => {
    flows.use({
      ...deployment({ waves: [['a']], maxParallelGroups: 1 }),
      [fn]: siteDown,
      FailDeployment: (p) => ({ deploymentId: p.deploymentId, status: 'FAILED' }),
    });

    const outcome = await flows.run('groupDeployment', {});

    expect(outcome).toMatchObject({ status: 'FAILED', error: 'SiteServiceError' });
    expect(outcome.cause).toContain('UpdateItem answered 500');
    // The first attempt and the 12 retries of the site-error rule (States.TaskFailed's).
    expect(flows.callsOf(fn)).toHaveLength(13);
    expect(flows.callsOf('FailDeployment').map((c) => c.payload)).toEqual([
      { deploymentId: 'd1', error: { Error: 'SiteServiceError', Cause: expect.stringContaining('UpdateItem answered 500') } },
    ]);
    expect(failStatesOf(outcome.executionArn)).toEqual(['Deployment Failed']);
  });

  it('ends at Deployment Failed when Fail Group keeps failing: the iteration ends at Group Failure Not Recorded, the Map fails, and Record Failure records that error', async () => {
    flows.use({ ...withBrokenGroup(), FailGroup: siteDown, FailDeployment: (p) => ({ deploymentId: p.deploymentId, status: 'FAILED' }) });

    const outcome = await flows.run('groupDeployment', {});

    expect(outcome).toMatchObject({ status: 'FAILED', error: 'SiteServiceError' });
    expect(outcome.cause).toContain('UpdateItem answered 500');
    expect(flows.callsOf('FailGroup')).toHaveLength(13);
    expect(flows.callsOf('FailDeployment').map((c) => c.payload)).toEqual([
      { deploymentId: 'd1', error: { Error: 'SiteServiceError', Cause: expect.stringContaining('UpdateItem answered 500') } },
    ]);
    expect(flows.callsOf('FinishDeployment')).toEqual([]);
    expect(failStatesOf(outcome.executionArn)).toEqual(['Group Failure Not Recorded', 'Deployment Failed']);
  });

  it('ends at Failure Not Recorded, with the original error, when Record Failure fails too', async () => {
    flows.use({
      ...deployment({ waves: [['a']], maxParallelGroups: 1 }),
      FinishDeployment: () => {
        throw activityError('DeploymentRunNotFinishedError', "groups not finished: 'a'");
      },
      FailDeployment: siteDown,
    });

    const outcome = await flows.run('groupDeployment', {});

    expect(outcome).toMatchObject({ status: 'FAILED', error: 'DeploymentRunNotFinishedError' });
    expect(outcome.cause).toContain("groups not finished: 'a'");
    // Record Failure retries a site error 6 times, then gives up.
    expect(flows.callsOf('FailDeployment')).toHaveLength(7);
    expect(failStatesOf(outcome.executionArn)).toEqual(['Failure Not Recorded']);
  });

  it('fails at Invalid Strategy on InvalidInputError before any group is picked', async () => {
    flows.use({
      ...deployment({ waves: [['a']], maxParallelGroups: 1 }),
      StartDeployment: () => {
        throw activityError('InvalidInputError', "groups[0].strategy.amount: must be at least 1 (group 'a')");
      },
    });

    const outcome = await flows.run('groupDeployment', {});

    expect(outcome).toMatchObject({ status: 'FAILED', error: 'InvalidInputError' });
    expect(outcome.cause).toContain("group 'a'");
    expect(flows.calls.map((c) => c.fn)).toEqual(['StartDeployment']);
  });
});
