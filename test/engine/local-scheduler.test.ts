import { startServedControlPlane, type ServedControlPlane } from '../../engine/serve';
import { RolloutClient } from '../../engine/client/rollout-client';
import type { VirtualClock } from '../../engine/virtual-clock';
import { buildSite, upgradeRequest } from '../support/sites';

/** ISO local time of `ms` for an at(...) expression in UTC. */
const atUtc = (ms: number) => `at(${new Date(ms).toISOString().slice(0, 19)})`;

describe('schedules on the embedded control plane, through @aws-sdk/client-scheduler', () => {
  let served: ServedControlPlane;
  let client: RolloutClient;
  beforeAll(async () => {
    served = await startServedControlPlane({ site: { kind: 'simulated', definition: buildSite(4) } });
    client = new RolloutClient({ endpoints: served.endpoints, localCredentials: true, pollMs: 5 });
  });
  afterAll(async () => {
    await client.close();
    await served.close();
  });

  it('a one-time schedule fires on virtual time and starts an upgrade that completes', async () => {
    const fireAt = served.runtime.now() + 3_600_000;
    const arn = await client.schedules.create({
      name: 'nightly-upgrade',
      workflow: 'rollingUpgrade',
      request: upgradeRequest({ upgradeStepSize: 2 }),
      scheduleExpression: atUtc(fireAt),
      timeZone: 'UTC',
      flexibleWindowMinutes: 15,
    });
    expect(arn).toMatch(/:schedule\/rollout\/nightly-upgrade$/);
    expect(await client.schedules.list()).toEqual([expect.objectContaining({ name: 'nightly-upgrade', workflow: 'rollingUpgrade', state: 'ENABLED' })]);
    const got = await client.schedules.get('nightly-upgrade');
    expect(got).toMatchObject({ ScheduleExpression: atUtc(fireAt), FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 15 }, Target: { Arn: served.endpoints.stateMachines.rollingUpgrade } });

    // Nothing else runs: virtual time jumps to the firing.
    const clock = served.runtime.clock as VirtualClock;
    while (served.scheduler.firings.length === 0) await clock.settled();
    const [firing] = served.scheduler.firings;
    expect(firing).toMatchObject({ schedule: 'rollout/nightly-upgrade', at: fireAt, executionArn: expect.stringContaining(':nightly-upgrade-') });
    const outcome = await client.follow(firing!.executionArn!);
    expect(outcome.status).toBe('SUCCEEDED');
    const upgrades = (await client.sessions()).filter((entry) => entry.kind === 'upgrade');
    expect(upgrades).toHaveLength(1);
    expect(await client.session(upgrades[0]!.id)).toMatchObject({ kind: 'upgrade', report: { completed: true, counts: { UPGRADED: 4 } } });

    expect(await client.schedules.delete('nightly-upgrade')).toBe(true);
    expect(await client.schedules.delete('nightly-upgrade')).toBe(false);
    expect(await client.schedules.list()).toEqual([]);
  });

  it('refuses a bad request at create time, naming the field, and stores nothing', async () => {
    await expect(
      client.schedules.create({ name: 'bad', workflow: 'rollingUpgrade', request: upgradeRequest({ upgradeStepSize: 0 }), scheduleExpression: 'rate(1 day)' }),
    ).rejects.toMatchObject({ name: 'InvalidInputError', message: expect.stringContaining('upgradeStepSize') });
    await expect(client.schedules.create({ name: 'bad', workflow: 'groupDeployment', request: { pollIntervalSeconds: 'soon' }, scheduleExpression: 'rate(1 day)' })).rejects.toMatchObject({
      message: expect.stringContaining('pollIntervalSeconds'),
    });
    await expect(client.schedules.create({ name: 'bad', workflow: 'groupDeployment', request: {}, scheduleExpression: 'cron(0 3 * * 1 *)' })).rejects.toMatchObject({
      message: expect.stringContaining('scheduleExpression: in cron(...), exactly one of day-of-month and day-of-week must be ?'),
    });
    await expect(client.schedules.create({ name: 'bad', workflow: 'groupDeployment', request: {}, scheduleExpression: 'rate(1 day)', timeZone: 'Mars/Olympus' })).rejects.toMatchObject({
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
          Target: { Arn: served.endpoints.stateMachines.rollingUpgrade, RoleArn: served.endpoints.schedulerRoleArn!, Input: JSON.stringify(upgradeRequest({ upgradeTemplateId: '' })) },
        }),
      ),
    ).rejects.toMatchObject({ name: 'ValidationException', message: expect.stringContaining('upgradeTemplateId') });
    expect(await client.schedules.list()).toEqual([]);
  });
});
