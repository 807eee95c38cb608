import { StaleWriteError } from '../../../../core/errors';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../../local/local-dynamodb';
import { advanceTaskRun } from '../../../../lambdas/activities/task-graph/advance-task-run';
import { openTaskRun as openActivity, type TaskRunPointer } from '../../../../lambdas/activities/task-graph/open-task-run';
import { FakeExecutor, inventoryNodes, taskGraphDeps } from '../../../support/task-graph-activities';
import { EXAMPLE_GRAPH } from '../../../support/task-graph-runs';

const EXAMPLE_NODES = inventoryNodes({
  'node-1': ['primary-controller'],
  'node-4': ['controller'],
  'node-2': ['controller'],
  'node-3': ['controller'],
  'node-5': ['controller'],
  'node-6': ['cinder'],
  'node-7': ['network'],
  'node-8': ['compute'],
});

/** Open Task Run given a request or a resume (not a console control, which answers `{cancelRequested}` / `{stopRequested}`). */
const openTaskRun = async (...args: Parameters<typeof openActivity>) => (await openActivity(...args)) as TaskRunPointer;

// A table per test: a run left unfinished keeps its nodes' locks, which the next test's run would wait for.
let db: LocalDynamoDb;
beforeEach(async () => {
  db = await startLocalDynamoDb();
});
afterEach(() => db.close());

describe('Open Task Run', () => {
  it('plans the graph once: a retried first task finds the run it made', async () => {
    const deps = taskGraphDeps(db, EXAMPLE_NODES, new FakeExecutor());
    const first = await openTaskRun({ input: { graph: EXAMPLE_GRAPH }, executionId: 'open-twice' }, deps);
    const again = await openTaskRun({ input: { graph: EXAMPLE_GRAPH, maxInTransition: 7 }, executionId: 'open-twice' }, deps);
    expect(again).toEqual(first);
    expect((await deps.store.getRun(first.runId))?.settings.maxInTransition).toBe(100);
    expect(first).toMatchObject({ increment: 0, iteration: 0, done: false, child: false, status: 'RUNNING' });
  });

  it('refuses, naming each field, a bad graph, a selection that names no task of it, one that leaves nothing, and tasks the site cannot run', async () => {
    const deps = taskGraphDeps(db, EXAMPLE_NODES, new FakeExecutor({ unsupported: ['puppet'] }));
    const open = (input: unknown) => openTaskRun({ input, executionId: `bad-${JSON.stringify(input).length}` }, deps);
    await expect(open({ graph: '- {id: a, type: shell, role: "*", parameters: {cmd: x}, requires: [b]}' })).rejects.toThrow(
      "graph[0].requires[0]: unknown task or stage 'b'",
    );
    await expect(open({ graph: EXAMPLE_GRAPH, selection: { tasks: ['nope'] } })).rejects.toThrow("selection.tasks: unknown task 'nope'");
    await expect(open({ graph: EXAMPLE_GRAPH, selection: { nodes: ['node-9'] } })).rejects.toThrow("nodes: unknown node 'node-9'");
    await expect(open({ graph: EXAMPLE_GRAPH, maxInTransition: 0, pollIntervalSeconds: 'x' })).rejects.toThrow(
      /maxInTransition must be at least 1.*pollIntervalSeconds must be a number of seconds/,
    );
    await expect(open({ graph: '- {id: a, type: shell, role: [nobody], parameters: {cmd: x}}' })).rejects.toThrow(
      'selection: no task would run on any node: a (no node runs it)',
    );
    await expect(open({ graph: EXAMPLE_GRAPH })).rejects.toThrow('graph.tasks[6]: puppet task setup_services cannot run on this site: not on this fake site');
  });
});

describe('Advance Task Run', () => {
  it('is idempotent: a retried increment (the pointer the record moved past) starts nothing twice', async () => {
    const executor = new FakeExecutor({ pollsToEnd: 2 });
    const deps = taskGraphDeps(db, EXAMPLE_NODES, executor);
    const opened = await openTaskRun({ input: { graph: EXAMPLE_GRAPH }, executionId: 'retry' }, deps);
    const first = await advanceTaskRun(opened, deps);
    expect(executor.starts).toEqual(['node-1/setup_network']);
    expect(first).toMatchObject({ increment: 1, iteration: 1, waitSeconds: 10, done: false });
    const replayed = await advanceTaskRun(opened, deps);
    expect(executor.starts).toEqual(['node-1/setup_network']);
    expect(replayed).toMatchObject({ increment: 1, waitSeconds: 0 });
  });

  it('a pass whose record write failed after its chunks were stored is picked up by the retry: the task in flight is polled, not started again', async () => {
    const executor = new FakeExecutor({ pollsToEnd: 3 });
    const deps = taskGraphDeps(db, EXAMPLE_NODES, executor);
    const opened = await openTaskRun({ input: { graph: EXAMPLE_GRAPH }, executionId: 'crash' }, deps);
    const commit = deps.store.commitIncrement.bind(deps.store);
    deps.store.commitIncrement = async () => {
      throw new Error('the Lambda died here');
    };
    await expect(advanceTaskRun(opened, deps)).rejects.toThrow('the Lambda died here');
    deps.store.commitIncrement = commit;
    let pointer: TaskRunPointer = opened;
    for (let i = 0; i < 4; i++) pointer = await advanceTaskRun(pointer, deps);
    expect(executor.starts.filter((op) => op === 'node-1/setup_network')).toHaveLength(1);
    expect(executor.starts).toEqual(['node-1/setup_network', 'node-1/setup_services']);
  });

  it('runs the example to its end: each pass starts what the graph allows, and the run ends SUCCEEDED', async () => {
    const executor = new FakeExecutor();
    let now = 0;
    const deps = taskGraphDeps(db, EXAMPLE_NODES, executor, { now: () => now });
    let pointer = await openTaskRun({ input: { graph: EXAMPLE_GRAPH }, executionId: 'to-the-end' }, deps);
    const passes: string[][] = [];
    while (!pointer.done) {
      const before = executor.starts.length;
      pointer = await advanceTaskRun(pointer, deps);
      passes.push(executor.starts.slice(before).sort());
      now += pointer.waitSeconds * 1000;
    }
    expect(pointer.status).toBe('SUCCEEDED');
    expect(passes.filter((p) => p.length > 0)).toEqual([
      ['node-1/setup_network'],
      ['node-1/setup_services'],
      ['node-2/setup_network', 'node-4/setup_network'],
      ['node-2/setup_services', 'node-4/setup_services'],
      ['node-3/setup_network', 'node-5/setup_network'],
      ['node-3/setup_services', 'node-5/setup_services'],
      ['node-6/setup_network', 'node-7/setup_network'],
      ['node-6/setup_services', 'node-7/setup_services'],
      ['node-8/setup_network'],
      ['node-8/setup_services'],
    ]);
    const record = await deps.store.getRun(pointer.runId);
    expect(record).toMatchObject({ status: 'SUCCEEDED', counts: { ACTIVE: 16, TODO: 0, BLOCKED: 0, TRANSITION: 0, ERROR: 0 } });
    await expect(
      deps.store.commitIncrement(pointer.runId, 0, { schedule: record!.schedule, counts: record!.counts, status: 'RUNNING' }),
    ).rejects.toBeInstanceOf(StaleWriteError);
  });
});
