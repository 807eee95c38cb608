import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalStepFunctions, STALLED_ERROR } from '../../local/local-step-functions';
import { ClockStalledError, VirtualClock } from '../../time/virtual-clock';
import type { TimeSource } from '../../time/sim-clock';

const realTick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('VirtualClock', () => {
  it('jumps to the earliest sleeper once nothing runs, waking sleepers due together in the order they slept', async () => {
    const clock = new VirtualClock({ startAt: 1_000_000 });
    const woken: string[] = [];
    const sleepers = [
      clock.sleep(30).then(() => woken.push(`b@${clock.now()}`)),
      clock.sleep(10).then(() => woken.push(`a1@${clock.now()}`)),
      clock.sleep(10).then(() => woken.push(`a2@${clock.now()}`)),
    ];
    await Promise.all(sleepers);

    expect(woken).toEqual(['a1@1010000', 'a2@1010000', 'b@1030000']);
  });

  it('stands still while work runs, however long it takes in real time', async () => {
    const clock = new VirtualClock();
    let endWork!: () => void;
    const work = clock.busy(() => new Promise<void>((resolve) => (endWork = resolve)));
    let woke = false;
    void clock.sleep(5).then(() => (woke = true));
    for (let i = 0; i < 20; i++) await realTick();

    expect(woke).toBe(false);
    expect(clock.now()).toBe(clock.startAt);
    endWork();
    await work;
    await clock.settled();
    await clock.settled();
    expect(woke).toBe(true);
    expect(clock.now()).toBe(clock.startAt + 5000);
  });

  it('lets work started by a woken sleeper finish before moving on', async () => {
    const clock = new VirtualClock();
    const seen: number[] = [];
    // Two pollers: each wakes, does I/O-like work across event-loop turns, and sleeps again.
    const poller = async (every: number) => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(every);
        await clock.busy(async () => {
          for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
          seen.push(clock.now() - clock.startAt);
        });
      }
    };
    await Promise.all([poller(10), poller(15)]);

    expect(seen).toEqual([10_000, 15_000, 20_000, 30_000, 30_000, 45_000]);
  });

  it('lets settled() observers look once per instant, before the clock moves', async () => {
    const clock = new VirtualClock();
    void clock.sleep(60);
    await clock.settled();
    expect(clock.now()).toBe(clock.startAt);
    await clock.settled();
    expect(clock.now()).toBe(clock.startAt + 60_000);
  });

  it('rejects settled() once nothing sleeps and nothing runs, and tells stall listeners', async () => {
    const clock = new VirtualClock();
    let stalls = 0;
    clock.onStall(() => stalls++);
    await clock.settled();
    expect(stalls).toBe(0);
    await expect(clock.settled()).rejects.toBeInstanceOf(ClockStalledError);
    expect(stalls).toBe(1);
  });
});

describe('the embedded engine on virtual time', () => {
  it('ends executions that can never move again (nothing runs, nothing sleeps) with LocalEngine.Stalled instead of hanging', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'stall-'));
    const file = path.join(dir, 'stuck.asl.json');
    writeFileSync(
      file,
      JSON.stringify({
        StartAt: 'Ask',
        States: {
          Ask: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: '${AskFunctionArn}', Payload: {} }, End: true },
        },
      }),
    );
    const clock = new VirtualClock();
    // A time source that does not see the function run: as if it waited on something outside the simulation.
    const blind: TimeSource = Object.assign(Object.create(clock) as VirtualClock, { busy: <T>(work: () => Promise<T>) => work() });
    const ask = async () => {
      await clock.busy(async () => undefined); // some simulated work, then a wait nobody will end
      return new Promise(() => undefined);
    };
    const engine = new LocalStepFunctions({ functions: { Ask: ask }, time: blind });
    const arn = engine.register('stuck', { file, functions: ['Ask'], children: [] });

    const outcome = await engine.runToEnd(arn, {});

    expect(outcome).toMatchObject({ status: 'FAILED', error: STALLED_ERROR });
    expect(outcome.cause).toContain(':execution:stuck:');
  });
});
