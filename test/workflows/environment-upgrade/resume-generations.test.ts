import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { eventually, startTestRuntime } from '../../support/embedded';
import { CLOUD_NODES, buildCloudSite, environmentUpgradeRequest } from '../../support/environments';

jest.setTimeout(300_000);

/**
 * A person's resume ({"resumeUpgradeId"} from the console) of an environment upgrade whose earlier
 * executions had continued as new: the resume's own continue-as-new took the name `<id>-g1` again, met
 * ExecutionAlreadyExists (the retry-safe catch took it for its own start) and ended the chain: the
 * session stayed UPDATING with no execution running it. A resume now starts its chain after the newest
 * generation stored on the session, as a rolling upgrade's and a task run's do.
 */
describe('an environment upgrade whose process died after it had continued as new', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('is resumed by a person and runs to its end: READY, every node moved into the seed and rebooted once, nothing left running', async () => {
    const rt = (runtime = await startTestRuntime({ site: buildCloudSite(), environmentUpgradeSettings: { iterationsPerExecution: 3 } }));
    const arn = rt.stateMachineArns.EnvironmentUpgrade;
    const run = await rt.startEnvironmentUpgrade({ environmentId: 5, request: environmentUpgradeRequest() });
    // The chain has continued as new at least once (its '-g1' name is taken) and is still in its controllers' phase.
    const running = await eventually(
      rt,
      async () => rt.engine.listExecutions(arn).find((e) => e.status === 'RUNNING' && e.name === `${run.id}-g1`),
      'the first continuation running',
    );
    await rt.clock.busy(async () => rt.engine.stop(running.executionArn, 'States.Aborted', 'the process died'));
    expect((await rt.environmentUpgrades.getUpgrade(run.id))?.session).toMatchObject({ state: 'UPDATING', completed: false });
    expect((await rt.environmentUpgrades.getUpgrade(run.id))?.session.generation).toBeGreaterThan(0);

    const resumed = rt.engine.start(arn, { resumeUpgradeId: run.id }, `${run.id}-resume-1`);
    expect(await rt.engine.follow(resumed.outcome)).toMatchObject({ status: 'SUCCEEDED' });
    expect((await rt.environmentUpgrades.getUpgrade(run.id))?.session).toMatchObject({ state: 'READY', completed: true, progress: { phase: 'COMPLETE' } });
    // The site's own record: each environment node rebooted exactly once (none twice by the resumed chain), the node outside untouched.
    const site = rt.siteState()!;
    for (const { name } of CLOUD_NODES) expect({ name, boots: site.nodes[name]!.bootCount }).toEqual({ name, boots: 1 });
    expect(site.nodes['other']!.bootCount).toBe(0);
    expect(site.violations).toEqual([]);
    expect((await rt.environments.getEnvironment(5))!.environment.nodes).toEqual([]);
    expect(rt.engine.listExecutions(arn).filter((e) => e.status === 'RUNNING')).toEqual([]);
  });
});
