import type { WallClock } from '../../time/wall-clock';
import { startServedControlPlane, type ServedControlPlane } from '../../local/serve';
import { rolloutClient } from '../../control-plane/aws-client/rollout-client';
import type { ControlPlane } from '../../control-plane/control-plane';
import type { VirtualClock } from '../../time/virtual-clock';
import { buildSite, upgradeRequest } from '../support/sites';

/** A wall clock moved by hand: schedules sleep on it, the control plane's own clock is left alone. */
class HandClock implements WallClock {
  private sleepers: { until: number; wake: () => void }[] = [];
  constructor(private ms: number) {}
  now(): number {
    return this.ms;
  }
  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      this.sleepers.push({ until: this.ms + ms, wake: resolve });
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }
  async set(iso: string): Promise<void> {
    this.ms = Date.parse(iso);
    const due = this.sleepers.filter((sleeper) => sleeper.until <= this.ms);
    this.sleepers = this.sleepers.filter((sleeper) => sleeper.until > this.ms);
    for (const sleeper of due) sleeper.wake();
    // The woken schedules fire (a StartExecution in this process) before the test looks.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('schedules on the embedded control plane, through @aws-sdk/client-scheduler', () => {
  let served: ServedControlPlane;
  let client: ControlPlane;
  // A Saturday.
  const wall = new HandClock(Date.parse('2030-01-05T12:00:00Z'));
  beforeAll(async () => {
    served = await startServedControlPlane({ site: { kind: 'simulated', definition: buildSite(4) }, scheduleClock: wall });
    client = rolloutClient({ endpoints: served.endpoints, localCredentials: true, pollMs: 5 });
  });
  afterAll(async () => {
    await client.close();
    await served.close();
  });

  it('fires on the wall clock, never early on virtual time: an at() on its date, a Mon-Fri cron once a weekday', async () => {
    const arn = await client.schedules.create({
      name: 'christmas-upgrade',
      workflow: 'rollingUpgrade',
      request: upgradeRequest({ upgradeStepSize: 2 }),
      scheduleExpression: 'at(2030-12-24T22:00:00)',
      timeZone: 'UTC',
      flexibleWindowMinutes: 15,
    });
    expect(arn).toMatch(/:schedule\/rollout\/christmas-upgrade$/);
    await client.schedules.create({
      name: 'weekdays',
      workflow: 'groupDeployment',
      request: { nodes: ['n001'] },
      scheduleExpression: 'cron(0 2 ? * MON-FRI *)',
      timeZone: 'UTC',
    });
    expect(await client.schedules.list()).toEqual([
      expect.objectContaining({ name: 'christmas-upgrade', workflow: 'rollingUpgrade', state: 'ENABLED' }),
      expect.objectContaining({ name: 'weekdays', workflow: 'groupDeployment', state: 'ENABLED' }),
    ]);
    const got = await client.schedules.get('christmas-upgrade');
    expect(got).toMatchObject({
      ScheduleExpression: 'at(2030-12-24T22:00:00)',
      FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 15 },
      Target: { Arn: served.endpoints.stateMachines.rollingUpgrade },
    });

    // Nothing else runs: virtual time has nothing to jump to, and whatever it does, no schedule fires.
    const clock = served.runtime.clock as VirtualClock;
    await clock.settled().catch(() => undefined);
    const other = await client.run('rollingUpgrade', upgradeRequest({ upgradeStepSize: 4 }));
    expect((await other.outcome).status).toBe('SUCCEEDED');
    expect(served.scheduler.firings).toEqual([]);

    // Monday 02:00 on the wall clock: the cron fires once; Tuesday's at Tuesday 02:00, not before.
    await wall.set('2030-01-07T01:59:59Z');
    expect(served.scheduler.firings).toEqual([]);
    await wall.set('2030-01-07T02:00:00Z');
    expect(served.scheduler.firings.map((firing) => firing.schedule)).toEqual(['rollout/weekdays']);
    await wall.set('2030-01-07T23:00:00Z');
    expect(served.scheduler.firings).toHaveLength(1);
    await wall.set('2030-01-08T02:00:00Z');
    expect(served.scheduler.firings.map((firing) => new Date(firing.at).toISOString())).toEqual(['2030-01-07T02:00:00.000Z', '2030-01-08T02:00:00.000Z']);

    // Christmas eve, with the weekday firings in between missed (the clock set forward): the at() fires, the missed ones are not caught up.
    await wall.set('2030-12-24T22:00:00Z');
    const christmas = served.scheduler.firings.filter((firing) => firing.schedule === 'rollout/christmas-upgrade');
    expect(christmas).toEqual([
      { schedule: 'rollout/christmas-upgrade', at: Date.parse('2030-12-24T22:00:00Z'), executionArn: expect.stringContaining(':christmas-upgrade-') },
    ]);
    expect(served.scheduler.firings).toHaveLength(3);
    const outcome = await client.follow(christmas[0]!.executionArn!);
    expect(outcome.status).toBe('SUCCEEDED');
    const upgrades = (await client.sessions()).filter((entry) => entry.kind === 'upgrade');
    expect(upgrades).toHaveLength(2);

    expect(await client.schedules.delete('christmas-upgrade')).toBe(true);
    expect(await client.schedules.delete('christmas-upgrade')).toBe(false);
    expect(await client.schedules.delete('weekdays')).toBe(true);
    expect(await client.schedules.list()).toEqual([]);
  });

  it('refuses a bad request at create time, naming the field, and stores nothing', async () => {
    await expect(
      client.schedules.create({ name: 'bad', workflow: 'rollingUpgrade', request: upgradeRequest({ upgradeStepSize: 0 }), scheduleExpression: 'rate(1 day)' }),
    ).rejects.toMatchObject({ name: 'InvalidInputError', message: expect.stringContaining('upgradeStepSize') });
    await expect(
      client.schedules.create({ name: 'bad', workflow: 'groupDeployment', request: { pollIntervalSeconds: 'soon' }, scheduleExpression: 'rate(1 day)' }),
    ).rejects.toMatchObject({
      message: expect.stringContaining('pollIntervalSeconds'),
    });
    await expect(
      client.schedules.create({ name: 'bad', workflow: 'groupDeployment', request: {}, scheduleExpression: 'cron(0 3 * * 1 *)' }),
    ).rejects.toMatchObject({
      message: expect.stringContaining('scheduleExpression: in cron(...), exactly one of day-of-month and day-of-week must be ?'),
    });
    await expect(
      client.schedules.create({ name: 'bad', workflow: 'groupDeployment', request: {}, scheduleExpression: 'rate(1 day)', timeZone: 'Mars/Olympus' }),
    ).rejects.toMatchObject({
      message: expect.stringContaining('scheduleExpressionTimezone'),
    });
    expect(await client.schedules.list()).toEqual([]);
  });

  it('the endpoint itself validates the request (a caller of the SDK that skips the client)', async () => {
    const { CreateScheduleCommand } = await import('@aws-sdk/client-scheduler');
    await expect(
      client.schedules.scheduler.send(
        new CreateScheduleCommand({
          Name: 'raw',
          GroupName: 'rollout',
          ScheduleExpression: 'rate(1 day)',
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: {
            Arn: served.endpoints.stateMachines.rollingUpgrade,
            RoleArn: served.endpoints.schedulerRoleArn!,
            Input: JSON.stringify(upgradeRequest({ upgradeTemplateId: '' })),
          },
        }),
      ),
    ).rejects.toMatchObject({ name: 'ValidationException', message: expect.stringContaining('upgradeTemplateId') });
    expect(await client.schedules.list()).toEqual([]);
  });
});
