import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LocalStepFunctions } from '../../local/local-step-functions';
import { VirtualClock } from '../../time/virtual-clock';

/**
 * A Task without TimeoutSeconds has no timeout on AWS. The engine library's own default is 60 s of
 * wall time, which a child workflow against a real site outlives (a group's task graph). Fake timers
 * stand for the wall clock here.
 */
describe('Task timeouts on the embedded engine', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'task-timeouts-'));
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  });
  afterEach(async () => {
    jest.useRealTimers();
    await rm(dir, { recursive: true, force: true });
  });

  const machine = (timeout: Record<string, number>) => ({
    StartAt: 'Slow',
    States: {
      Slow: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke',
        Parameters: { FunctionName: '${SlowFunctionArn}', Payload: {} },
        ...timeout,
        OutputPath: '$.Payload',
        End: true,
      },
    },
  });

  const runFor = async (timeout: Record<string, number>, wallMs: number) => {
    const file = path.join(dir, 'slow.asl.json');
    await writeFile(file, JSON.stringify(machine(timeout)));
    let finish: (() => void) | undefined;
    const engine = new LocalStepFunctions({
      time: new VirtualClock(),
      functions: { Slow: () => new Promise((resolve) => (finish = () => resolve({ done: true }))) },
    });
    const arn = engine.register('Slow', { file, functions: ['Slow'], children: [] });
    const { outcome } = engine.start(arn, {});
    await jest.advanceTimersByTimeAsync(wallMs);
    finish?.();
    return outcome;
  };

  it('gives a Task without TimeoutSeconds none, as AWS does: it outlives the 60 s the engine library would give it', async () => {
    expect(await runFor({}, 120_000)).toMatchObject({ status: 'SUCCEEDED', output: { done: true } });
  });

  it('keeps a TimeoutSeconds that is given (States.Timeout past it)', async () => {
    expect(await runFor({ TimeoutSeconds: 30 }, 31_000)).toMatchObject({ status: 'FAILED', error: 'States.Timeout' });
  });
});
