import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SendTaskFailureCommand, SendTaskHeartbeatCommand, SendTaskSuccessCommand, SFNClient, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { LocalStepFunctions, type ExecutionOutcome } from '../../local/local-step-functions';
import { StepFunctionsEndpoint } from '../../local/sfn-endpoint';
import { VirtualClock } from '../../time/virtual-clock';
import type { HttpListener } from '../../api/http-listener';

/** A callback task in the two shapes the tests need: a plain timeout, and a heartbeat inside a longer timeout. */
const CALLBACK = (timers: Record<string, number>) => ({
  Type: 'Task',
  Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
  Parameters: { FunctionName: '${HandOutFunctionArn}', Payload: { 'token.$': '$$.Task.Token', 'fail.$': '$.fail' } },
  ...timers,
  ResultPath: '$.result',
  Catch: [
    { ErrorEquals: ['States.Timeout'], ResultPath: '$.error', Next: 'Timed Out' },
    { ErrorEquals: ['Rejected'], ResultPath: '$.error', Next: 'Rejected' },
  ],
  End: true,
});

const MACHINE = {
  StartAt: 'Pick',
  States: {
    Pick: {
      Type: 'Choice',
      Choices: [
        { Variable: '$.heartbeat', BooleanEquals: true, Next: 'Beat' },
        { Variable: '$.wait', IsPresent: true, Next: 'Wait On Path' },
      ],
      Default: 'Wait',
    },
    'Wait On Path': { ...CALLBACK({}), TimeoutSecondsPath: '$.wait.seconds', HeartbeatSecondsPath: '$.wait.heartbeat' },
    Wait: CALLBACK({ TimeoutSeconds: 600 }),
    Beat: CALLBACK({ TimeoutSeconds: 1000, HeartbeatSeconds: 100 }),
    'Timed Out': { Type: 'Pass', End: true },
    Rejected: { Type: 'Pass', End: true },
  },
};

describe('callback tasks (.waitForTaskToken) on the embedded engine, through @aws-sdk/client-sfn', () => {
  let dir: string;
  let clock: VirtualClock;
  let engine: LocalStepFunctions;
  let listener: HttpListener;
  let sfn: SFNClient;
  let arn: string;
  /** Tokens the function was given, in order; each test waits for the next. */
  let handedOut: { token: string; fail: boolean }[];
  let nextToken: () => Promise<string>;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'task-tokens-'));
    const file = path.join(dir, 'callback.asl.json');
    await writeFile(file, JSON.stringify(MACHINE));
    clock = new VirtualClock();
    handedOut = [];
    let wake: (() => void) | undefined;
    nextToken = async () => {
      while (handedOut.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      return handedOut.shift()!.token;
    };
    engine = new LocalStepFunctions({
      time: clock,
      functions: {
        HandOut: async (payload) => {
          const { token, fail } = payload as { token: string; fail: boolean };
          if (fail) throw Object.assign(new Error('no worker'), { name: 'HandOutFailed' });
          handedOut.push({ token, fail });
          wake?.();
          return { handedOut: true };
        },
      },
    });
    arn = engine.register('Callback', { file, functions: ['HandOut'], children: [] });
    listener = await new StepFunctionsEndpoint(engine).listen();
    sfn = new SFNClient({ endpoint: listener.url, region: 'local', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  });
  afterEach(async () => {
    sfn.destroy();
    await listener.close();
    await rm(dir, { recursive: true, force: true });
  });

  const start = (input: Record<string, unknown> = {}) => engine.start(arn, { fail: false, heartbeat: false, ...input });
  /** An API call lands at the simulated instant it is made: time stands still while it is under way. */
  const send = <T>(call: () => Promise<T>) => clock.busy(call);
  const elapsed = (from: number) => (clock.now() - from) / 1000;

  it('SendTaskSuccess ends the task with its output; the token then answers TaskDoesNotExist, as an unknown one does', async () => {
    const begun = clock.now();
    const run = start();
    const token = await nextToken();
    await send(() => sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: JSON.stringify({ approved: 2 }) })));
    const outcome = await run.outcome;
    expect(outcome).toMatchObject({ status: 'SUCCEEDED', output: { result: { approved: 2 } } });
    expect(elapsed(begun)).toBe(0);
    await expect(sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' }))).rejects.toMatchObject({ name: 'TaskDoesNotExist' });
    await expect(sfn.send(new SendTaskSuccessCommand({ taskToken: 'never-issued', output: '{}' }))).rejects.toMatchObject({ name: 'TaskDoesNotExist' });
  });

  it('SendTaskFailure fails the task with its error and cause (Catch matches the error); bad output is InvalidOutput', async () => {
    const run = start();
    const token = await nextToken();
    await expect(send(() => sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: 'not json' })))).rejects.toMatchObject({ name: 'InvalidOutput' });
    await send(() => sfn.send(new SendTaskFailureCommand({ taskToken: token, error: 'Rejected', cause: 'the operator said no' })));
    expect(await run.outcome).toMatchObject({ status: 'SUCCEEDED', output: { error: { Error: 'Rejected', Cause: 'the operator said no' } } });
  });

  it('times out on virtual time after TimeoutSeconds (States.Timeout); the token then answers TaskTimedOut', async () => {
    const begun = clock.now();
    const run = start();
    const token = await nextToken();
    const outcome: ExecutionOutcome = await run.outcome;
    expect(outcome).toMatchObject({ status: 'SUCCEEDED', output: { error: { Error: 'States.Timeout' } } });
    expect(elapsed(begun)).toBe(600);
    await expect(sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' }))).rejects.toMatchObject({ name: 'TaskTimedOut' });
  });

  it('TimeoutSecondsPath and HeartbeatSecondsPath are read from the state input at each run (a timeout of 45 s with a 40 s heartbeat; then 75 s, woken at 30 s, then timed out at 75 s)', async () => {
    let begun = clock.now();
    const timedOut = start({ wait: { seconds: 45, heartbeat: 40 } });
    await nextToken();
    expect(await timedOut.outcome).toMatchObject({ output: { error: { Error: 'States.Timeout', Cause: expect.stringContaining('heartbeat') } } });
    expect(elapsed(begun)).toBe(40);
    begun = clock.now();
    const longer = start({ wait: { seconds: 75, heartbeat: 1000 } });
    const token = await nextToken();
    await clock.sleep(30);
    await send(() => sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: JSON.stringify({ woke: true }) })));
    expect(await longer.outcome).toMatchObject({ status: 'SUCCEEDED', output: { result: { woke: true } } });
    expect(elapsed(begun)).toBe(30);
    begun = clock.now();
    const ended = start({ wait: { seconds: 75, heartbeat: 1000 } });
    await nextToken();
    expect(await ended.outcome).toMatchObject({ output: { error: { Error: 'States.Timeout' } } });
    expect(elapsed(begun)).toBe(75);
  });

  it('a TimeoutSecondsPath whose value is not a positive whole number fails the task with States.Runtime, as Step Functions does', async () => {
    const outcome = await start({ wait: { seconds: 0, heartbeat: 10 } }).outcome;
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'States.Runtime' });
    expect(engine.tokens.waiting).toBe(0);
  });

  it('HeartbeatSeconds: each SendTaskHeartbeat restarts the heartbeat clock; without one the task times out', async () => {
    const begun = clock.now();
    const run = start({ heartbeat: true });
    const token = await nextToken();
    for (let beat = 0; beat < 3; beat++) {
      await clock.sleep(90);
      await send(() => sfn.send(new SendTaskHeartbeatCommand({ taskToken: token })));
    }
    const outcome = await run.outcome;
    expect(outcome).toMatchObject({ output: { error: { Error: 'States.Timeout', Cause: expect.stringContaining('heartbeat') } } });
    // Three heartbeats 90 s apart, then 100 s of silence.
    expect(elapsed(begun)).toBe(3 * 90 + 100);
    await expect(sfn.send(new SendTaskHeartbeatCommand({ taskToken: token }))).rejects.toMatchObject({ name: 'TaskTimedOut' });
  });

  it('a stopped execution closes its task: the token answers TaskTimedOut', async () => {
    const run = start();
    const token = await nextToken();
    await send(() => sfn.send(new StopExecutionCommand({ executionArn: run.executionArn })));
    expect(await run.outcome).toMatchObject({ status: 'ABORTED' });
    await expect(sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' }))).rejects.toMatchObject({ name: 'TaskTimedOut' });
    expect(engine.tokens.waiting).toBe(0);
  });

  it('a function that fails fails the task at once, as on AWS; no token is left waiting', async () => {
    const begun = clock.now();
    const outcome = await start({ fail: true }).outcome;
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'HandOutFailed' });
    expect(elapsed(begun)).toBe(0);
    expect(engine.tokens.waiting).toBe(0);
  });
});
