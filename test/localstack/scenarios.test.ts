import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CreateScheduleCommand, DeleteScheduleCommand, GetScheduleCommand } from '@aws-sdk/client-scheduler';
import type { WorkflowName } from '../../contracts';
import type { StartedRun } from '../../control-plane/runtime';
import type { ControlPlane } from '../../control-plane/control-plane';
import { connectControlPlane, DEFAULT_STACK, stackAtEndpoint } from '../../cli/targets';
import { rolloutClient, type ClientConnection } from '../../control-plane/aws-client/rollout-client';
import { startServe, type RunningServe } from '../support/serve';
import { SCENARIO_SITE, scenarioSiteYaml } from './scenario-site';
import { until } from '../support/until';

interface ScenarioOptions {
  /** The prepare timeout of the deployment cancelled mid-run: its hung node holds the group in flight that long. */
  hangSeconds: number;
  /** Whether the control plane's scheduler fires schedules (LocalStack's does not). */
  schedulesFire: boolean;
}

/**
 * The end-to-end scenarios of issue 8, through the one client path (the ControlPlane over the SDK: the Step
 * Functions API and the store's DynamoDB reads). In `npm test` they run against a `rollout serve`
 * process; with LOCALSTACK_ENDPOINT set (after `cdklocal deploy`), against LocalStack too.
 */
function scenarios(connect: () => Promise<{ client: ControlPlane; endpoints: ClientConnection['endpoints'] }>, options: ScenarioOptions) {
  let client: ControlPlane;
  let endpoints: ClientConnection['endpoints'];
  beforeAll(async () => {
    ({ client, endpoints } = await connect());
  });
  afterAll(() => client.close());

  const upgrade = (overrides: Record<string, unknown>) => ({
    upgradingLabel: 'upgrading',
    failedLabel: 'failed',
    upgradeStepSize: 2,
    upgradeTemplateId: 'img-2',
    workloadManagerType: 'slurm',
    pollIntervalSeconds: 10,
    ...overrides,
  });

  it('an upgrade with a failure completes and reports the failed node', async () => {
    const run = await client.run('rollingUpgrade', upgrade({ startingLabel: 'compute', wlmReturnTimeoutSeconds: 300 }));
    expect((await run.outcome).status).toBe('SUCCEEDED');
    const found = await client.session(run.id);
    if (found?.kind !== 'upgrade') throw new Error(`no upgrade ${run.id}`);
    expect(found.report).toMatchObject({ completed: true, state: 'READY', counts: { UPGRADED: 3, FAILED: 1 } });
    expect(found.report.nodes[SCENARIO_SITE.neverReturns]).toMatchObject({ status: 'FAILED' });
    expect((await client.sessions()).map((entry) => entry.id)).toContain(run.id);
  });

  /** An upgrade of the held nodes, seen draining behind the long job. */
  async function heldUpgrade() {
    const run = await client.run('rollingUpgrade', upgrade({ startingLabel: 'held' }));
    await until(async () => {
      const progress = await client.progress(run.id);
      return progress?.kind === 'upgrade' && progress.stage === 'QUIESCING';
    }, `upgrade ${run.id} QUIESCING`);
    return run;
  }

  async function expectDeleted(run: StartedRun) {
    expect((await run.outcome).status).toBe('SUCCEEDED');
    const found = await client.session(run.id);
    if (found?.kind !== 'upgrade') throw new Error(`no upgrade ${run.id}`);
    expect(found.report).toMatchObject({ completed: false, state: 'DELETED', counts: { FAILED: 0, UPGRADED: 0 } });
    expect(found.report.messages).toContain('Upgrade Session Deleted');
  }

  /** StartExecution as the Step Functions console does it: the state machine's ARN, a fresh name, the input as text. */
  async function startFromConsole(workflow: WorkflowName, input: Record<string, unknown>) {
    return (await client.run(workflow, input)).outcome;
  }

  it('a cancel applies the CRUS deletion rules and the workflow cleans up', async () => {
    const run = await heldUpgrade();
    expect(await client.cancel(run.id)).toMatchObject({ id: run.id, state: 'DELETING', running: true });
    await expectDeleted(run);
  });

  it('from the console: StartExecution with {"cancelUpgradeId"} writes the cancel request and ends; the upgrade is DELETED', async () => {
    const run = await heldUpgrade();
    const request = await startFromConsole('rollingUpgrade', { cancelUpgradeId: run.id });
    expect(request).toMatchObject({ status: 'SUCCEEDED', output: { cancelRequested: { id: run.id, kind: 'upgrade', state: 'DELETING' } } });
    await expectDeleted(run);
  });

  it('from the console: StartExecution with {"cancelDeploymentId"} writes the cancel request and ends; the deployment ends CANCELLED', async () => {
    const [first, second] = SCENARIO_SITE.slow;
    const strategy = {
      groups: [{ name: 'slow', critical: true, depends_on: [], selectors: [{ node_names: [first, second] }], strategy: { type: 'one_by_one' } }],
    };
    const run = await client.run('groupDeployment', { strategy, pollIntervalSeconds: 10, prepareTimeoutSeconds: options.hangSeconds });
    await until(async () => (await client.session(run.id)) !== undefined, `deployment ${run.id} stored`);

    const request = await startFromConsole('groupDeployment', { cancelDeploymentId: run.id });
    expect(request).toMatchObject({ status: 'SUCCEEDED', output: { cancelRequested: { id: run.id, kind: 'deployment', state: 'CANCELLING' } } });
    expect(await run.outcome).toMatchObject({ status: 'SUCCEEDED', output: { status: 'CANCELLED' } });
    const found = await client.session(run.id);
    if (found?.kind !== 'deployment') throw new Error(`no deployment ${run.id}`);
    // Whether the hung prepare had started when the request landed, nothing started after it and nothing deployed.
    expect(found.report.status).toBe('CANCELLED');
    expect(found.report.nodes[second]).toBe('NOT_STARTED');
    expect(['NOT_STARTED', 'FAILED']).toContain(found.report.nodes[first]);
    expect(found.report.groups['slow']!.stage).toBe('NOT_STARTED');
    // An id that names nothing: the execution fails, saying so.
    expect(await startFromConsole('groupDeployment', { cancelDeploymentId: 'no-such-deployment' })).toMatchObject({
      status: 'FAILED',
      error: 'DeploymentNotFoundError',
    });
  });

  it('a deployment with a critical failure fails the run, with the failed group and node', async () => {
    const run = await client.run('groupDeployment', { nodes: [...SCENARIO_SITE.deploy], pollIntervalSeconds: 10 });
    const outcome = await run.outcome;
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'CriticalGroupFailed' });
    const found = await client.session(run.id);
    if (found?.kind !== 'deployment') throw new Error(`no deployment ${run.id}`);
    expect(found.report).toMatchObject({ status: 'FAILED', criticalGroupsFailed: true, failedCriticalGroups: ['default'] });
    expect(found.report.nodes[SCENARIO_SITE.deployFails]).toBe('FAILED');
    expect((await client.sessions()).filter((entry) => entry.kind === 'deployment').map((entry) => entry.id)).toContain(run.id);
  });

  if (!options.schedulesFire) {
    it("a schedule is created in the stack's group with its role and stored request (not fired: LocalStack's EventBridge Scheduler stores schedules but never fires them; the firing is tested against rollout serve)", async () => {
      const { schedules } = client;
      const request = upgrade({ startingLabel: 'scheduled' });
      await schedules.create({
        name: 'stored-upgrade',
        workflow: 'rollingUpgrade',
        request,
        scheduleExpression: 'cron(0 2 ? * SUN *)',
        timeZone: 'Europe/Paris',
        flexibleWindowMinutes: 30,
      });
      try {
        const stored = await schedules.get('stored-upgrade');
        expect(stored).toMatchObject({
          GroupName: endpoints.scheduleGroup,
          ScheduleExpression: 'cron(0 2 ? * SUN *)',
          ScheduleExpressionTimezone: 'Europe/Paris',
          Target: { Arn: endpoints.stateMachines.rollingUpgrade, RoleArn: endpoints.schedulerRoleArn },
        });
        expect(JSON.parse(stored!.Target!.Input!)).toEqual(request);
        expect((await schedules.list()).map((entry) => entry.name)).toContain('stored-upgrade');
      } finally {
        await schedules.delete('stored-upgrade');
      }
    });
    return;
  }

  it('a schedule firing starts an upgrade with its stored request, which completes', async () => {
    const { schedules } = client;
    const group = endpoints.scheduleGroup!;
    // The schedules' clock (the wall clock, on `rollout serve` as on AWS): a disabled probe's creation date.
    await schedules.scheduler.send(
      new CreateScheduleCommand({
        Name: 'clock-probe',
        GroupName: group,
        State: 'DISABLED',
        ScheduleExpression: 'rate(1 day)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: {
          Arn: endpoints.stateMachines.rollingUpgrade,
          RoleArn: endpoints.schedulerRoleArn!,
          Input: JSON.stringify(upgrade({ startingLabel: 'scheduled' })),
        },
      }),
    );
    const now = (await schedules.scheduler.send(new GetScheduleCommand({ Name: 'clock-probe', GroupName: group }))).CreationDate!.getTime();
    await schedules.scheduler.send(new DeleteScheduleCommand({ Name: 'clock-probe', GroupName: group }));
    const before = new Set((await client.executions('rollingUpgrade')).map((execution) => execution.executionArn));

    // A few seconds ahead (at() takes seconds), rounded up to a whole second.
    const fireAt = Math.ceil((now + 3_000) / 1000) * 1000;
    await schedules.create({
      name: 'scheduled-upgrade',
      workflow: 'rollingUpgrade',
      request: upgrade({ startingLabel: 'scheduled' }),
      scheduleExpression: `at(${new Date(fireAt).toISOString().slice(0, 19)})`,
      timeZone: 'UTC',
      deleteAfterCompletion: true,
    });
    let started: string | undefined;
    while (!started) {
      started = (await client.executions('rollingUpgrade')).find((execution) => !before.has(execution.executionArn))?.executionArn;
      if (!started) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const outcome = await client.follow(started);
    expect(outcome.status).toBe('SUCCEEDED');
    const upgradeId = (outcome.output as { upgradeId?: string } | undefined)?.upgradeId;
    const found = upgradeId ? await client.session(upgradeId) : undefined;
    if (found?.kind !== 'upgrade') throw new Error(`no upgrade for ${started}`);
    expect(found.report).toMatchObject({ completed: true, startingLabel: 'scheduled', counts: { UPGRADED: SCENARIO_SITE.scheduled.length } });
    // One-time and deleted after completion.
    expect((await schedules.list()).map((entry) => entry.name)).not.toContain('scheduled-upgrade');
  });
}

describe('end-to-end scenarios through the client, against `rollout serve`', () => {
  let dir: string;
  let serve: RunningServe;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-scenarios-'));
    const site = path.join(dir, 'site.yaml');
    await writeFile(site, scenarioSiteYaml());
    serve = await startServe(['--site', site]);
  });
  afterAll(async () => {
    await serve?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  // Virtual time: a day-long hang is a few hundred polls.
  scenarios(async () => ({ client: await connectControlPlane({ kind: 'endpoint', url: serve.endpoints.stepFunctionsEndpoint }), endpoints: serve.endpoints }), {
    hangSeconds: 86_400,
    schedulesFire: true,
  });
});

const LOCALSTACK_ENDPOINT = process.env.LOCALSTACK_ENDPOINT;
/**
 * Against LocalStack after `cdklocal deploy -c siteProfile=...` of the scenario site (a `rollout
 * simulate` the Lambdas reach: .github/workflows/ci.yml): `--endpoint` on LocalStack reads the
 * stack's outputs through its CloudFormation, as the CLI does. Its Wait states take real seconds
 * (the CI job runs jest with a long --testTimeout); the site's durations and the phase timeouts run
 * on the simulator's scaled clock, which the profile names.
 */
const localStack = LOCALSTACK_ENDPOINT ? describe : describe.skip;
localStack(
  LOCALSTACK_ENDPOINT
    ? `end-to-end scenarios through the client, against LocalStack at ${LOCALSTACK_ENDPOINT}`
    : 'end-to-end scenarios against LocalStack: skipped, LOCALSTACK_ENDPOINT is not set (run them after a cdklocal deploy)',
  () => {
    scenarios(
      async () => {
        const endpoints = await stackAtEndpoint(LOCALSTACK_ENDPOINT!, process.env.ROLLOUT_STACK ?? DEFAULT_STACK);
        return { client: rolloutClient({ endpoints, localCredentials: true }), endpoints };
      },
      {
        hangSeconds: 60,
        schedulesFire: false,
      },
    );
  },
);
