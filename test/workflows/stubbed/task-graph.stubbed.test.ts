import { HISTORY_EVENT_QUOTA, HISTORY_EVENTS } from '../../../core/history-events';
import { StubbedWorkflows, activityError, type Stub } from '../../support/stubbed-workflows';

const { task: TASK, simpleState: SIMPLE, execution: EXECUTION } = HISTORY_EVENTS;
const ITERATIONS = 1000;
/** One execution at most: Open Task Run and Control Only, then per pass Check Run, Wait For Tasks, Advance Task Run, then Check Run and its end (Count Generation and Continue As New, or the outcome). */
const PER_EXECUTION = EXECUTION + TASK + SIMPLE + ITERATIONS * (SIMPLE + SIMPLE + TASK) + SIMPLE + SIMPLE + TASK + SIMPLE;

/**
 * Stubs of a run that needs `passes` increments (10,000 nodes with two tasks one at a time: 20,000),
 * each waiting 10 s, as Open Task Run and Advance Task Run would answer; `child` marks a group's deploy phase.
 */
function taskRun(passes: number, options: { child?: boolean; status?: 'SUCCEEDED' | 'FAILED' } = {}): Record<string, Stub> {
  let increment = 0;
  const pointer = (iteration: number, generation: number) => ({
    runId: 'r1',
    increment,
    iteration,
    iterationLimit: ITERATIONS,
    waitSeconds: 10,
    done: increment >= passes,
    status: increment >= passes ? (options.status ?? 'SUCCEEDED') : 'RUNNING',
    child: options.child ?? false,
    generation,
  });
  return {
    OpenTaskRun: (p) => {
      const input = p.input as { generation?: number };
      return pointer(0, input.generation ?? 0);
    },
    AdvanceTaskRun: (p) => {
      increment++;
      return pointer((p.iteration as number) + 1, p.generation as number);
    },
  };
}

describe('task-graph workflow with stubbed activities, on virtual time', () => {
  let flows: StubbedWorkflows;
  beforeAll(() => {
    flows = new StubbedWorkflows();
  });

  it('a run of any length: 1,000 passes per execution (9,020 events, far inside 25,000), then continue-as-new; the payload a pointer', async () => {
    // 10,000 nodes with two tasks one at a time would take 20,000 passes: 20 such executions (npm run bench -- --only=tasks runs it).
    flows.use(taskRun(3000));
    const outcome = await flows.run('taskGraph', { graph: 'stubbed' });
    expect(outcome.status).toBe('SUCCEEDED');
    const figures = flows.figuresOf('TaskGraph');
    // 3,000 passes at 1,000 per execution: 3 executions chained by continue-as-new (the last sees the run done).
    expect(figures).toHaveLength(3);
    expect(figures.slice(0, -1).map((f) => f.historyEvents)).toEqual([9020, 9020]);
    expect(PER_EXECUTION).toBeLessThan(HISTORY_EVENT_QUOTA / 2);
    for (const f of figures) {
      expect(f.historyEvents).toBeLessThanOrEqual(PER_EXECUTION);
      expect(f.largestPayloadBytes).toBeLessThan(1024);
    }
    expect(flows.callsOf('AdvanceTaskRun')).toHaveLength(3000);
    expect(flows.elapsedSeconds()).toBe(3000 * 10);
  });

  it("a group's deploy phase hands back at its budget instead of continuing as new; a failed standalone run fails with TaskRunFailed", async () => {
    flows.use(taskRun(2500, { child: true }));
    const child = await flows.run('taskGraph', { deploymentId: 'd1', group: 'g' });
    expect(child).toMatchObject({ status: 'SUCCEEDED', output: { done: false, iteration: ITERATIONS } });
    expect(flows.figuresOf('TaskGraph')).toHaveLength(1);

    flows.use(taskRun(3, { status: 'FAILED' }));
    expect(await flows.run('taskGraph', { graph: 'stubbed' })).toMatchObject({ status: 'FAILED', error: 'TaskRunFailed' });
    flows.use(taskRun(3, { child: true, status: 'FAILED' }));
    expect(await flows.run('taskGraph', { deploymentId: 'd1', group: 'g' })).toMatchObject({ status: 'SUCCEEDED', output: { done: true, status: 'FAILED' } });
  });

  it('invalid input fails at once with InvalidInputError; an increment that keeps failing fails the run with its error, after the retries', async () => {
    flows.use({
      OpenTaskRun: () => {
        throw activityError('InvalidInputError', 'Invalid task run request: graph: required');
      },
    });
    expect(await flows.run('taskGraph', {})).toMatchObject({ status: 'FAILED', error: 'InvalidInputError' });
    flows.use({
      ...taskRun(5),
      AdvanceTaskRun: () => {
        throw activityError('TaskRunNotFoundError', 'gone');
      },
    });
    const broken = await flows.run('taskGraph', { graph: 'stubbed' });
    expect(broken).toMatchObject({ status: 'FAILED', error: 'TaskRunNotFoundError' });
    // Lambda and site errors are retried, any task failure too (12 attempts with backoff), then the run stops.
    expect(flows.callsOf('AdvanceTaskRun')).toHaveLength(13);
  });
});
