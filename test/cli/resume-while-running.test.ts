import { rolloutClient } from '../../control-plane/aws-client/rollout-client';
import type { ControlPlane } from '../../control-plane/control-plane';
import { executionRunsSession } from '../../core/session-control';
import { startServedControlPlane, type ServedControlPlane } from '../../local/serve';
import { runCliInProcess } from '../support/cli';
import { deploymentSite, groupOf, namedNodes, namesOf, QUICK_POLL } from '../support/deployment-sites';
import { buildSite, upgradeRequest } from '../support/sites';
import type { SiteDefinition } from '../../simulator';
import { until } from '../support/until';
import { drainRebootResumeGraph } from '../support/task-graph-runs';

/**
 * `rollout session resume` of a run that an execution still runs started a second execution over the
 * same nodes (a second control plane over them). It is refused now (SessionStillRunningError, exit 1,
 * nothing started), whatever the run's kind, and the live execution carries on alone: checked on the
 * engine's executions and on the simulated site's own log of who changed each node.
 */

// Every node runs a long job: an upgrade holds in QUIESCING, a task run's drain waits for the job.
const site = buildSite(4, { node: () => ({ roles: ['compute'], wlm: { state: 'ALLOCATED', busySeconds: 10_000_000 } }) });

const GRAPH = drainRebootResumeGraph('img-2');

describe('rollout session resume of a run an execution still runs: refused, no second execution', () => {
  let served: ServedControlPlane;
  let client: ControlPlane;
  const serve = async (definition: SiteDefinition) => {
    served = await startServedControlPlane({ site: { kind: 'simulated', definition } });
    client = rolloutClient({ endpoints: served.endpoints, localCredentials: true, pollMs: 10 });
  };
  afterEach(async () => {
    await client.close();
    await served.close();
  });

  /** The engine's running executions that work on the run (its own, a continue-as-new, a resume). */
  const executionsOf = (kind: 'upgrade' | 'deployment' | 'tasks', id: string) => {
    const arn = served.runtime.stateMachineArns[kind === 'upgrade' ? 'RollingUpgrade' : kind === 'deployment' ? 'GroupDeployment' : 'TaskGraph'];
    return served.runtime.engine.listExecutions(arn).filter((e) => e.status === 'RUNNING' && executionRunsSession(kind, id, e, e.input));
  };

  /** The runs the site's own log names as changing its nodes (a second control plane would show as a second run). */
  const runsOnTheSite = () => new Set((served.runtime.simulator.state().changes ?? []).flatMap((c) => (c.by === undefined ? [] : [c.by.slice(0, 8)])));

  const refusedOnce = async (kind: 'upgrade' | 'deployment' | 'tasks', id: string, state: string) => {
    const noun = kind === 'tasks' ? 'task run' : kind;
    const before = runsOnTheSite();
    const resumed = await runCliInProcess(['session', 'resume', id, '--endpoint', served.endpoints.stepFunctionsEndpoint]);
    expect(resumed.code).toBe(1);
    expect(resumed.stderr).toContain(`${noun} '${id}' is still running (${state}): an execution works on it, and a resume would start a second one`);
    expect(resumed.stderr).toContain(`rollout session stop '${id}'`);
    expect(executionsOf(kind, id)).toHaveLength(1);
    // The site saw no new run change its nodes, and no breach.
    expect([...runsOnTheSite()].filter((run) => !before.has(run))).toEqual([]);
    expect(served.runtime.simulator.state().violations).toEqual([]);
  };

  it('an upgrade (UPDATING): exit 1 naming its state and the stop command; one execution, no second run on the site', async () => {
    await serve(site);
    const upgrade = await client.run('rollingUpgrade', upgradeRequest({ upgradeStepSize: 2 }));
    await until(async () => (await client.progress(upgrade.id))?.kind === 'upgrade' && (await client.status(upgrade.id))?.state === 'UPDATING', 'upgrade open');
    await refusedOnce('upgrade', upgrade.id, 'UPDATING');
  });

  it('a task run (RUNNING): the same', async () => {
    await serve(site);
    const tasks = await client.run('taskGraph', { graph: GRAPH, maxInTransition: 2, pollIntervalSeconds: 10 });
    await until(async () => (await client.status(tasks.id))?.state === 'RUNNING', 'task run open');
    await refusedOnce('tasks', tasks.id, 'RUNNING');
  });

  it('a deployment (RUNNING): the same', async () => {
    // A prepare that takes long: the deployment runs its first group.
    const nodes = namedNodes('n', 2);
    await serve(deploymentSite(nodes, { prepareSeconds: 600_000, deploySeconds: 60 }));
    const deployment = await client.run('groupDeployment', { strategy: { groups: [groupOf('ga', namesOf(nodes))] }, ...QUICK_POLL });
    // Simulated time held while the resume is asked (a prepare, however long, would otherwise end at once on virtual time).
    await served.runtime.clock.busy(async () => {
      await until(
        async () => (await client.progress(deployment.id))?.kind === 'deployment' && (await client.status(deployment.id))?.state === 'RUNNING',
        'deployment running',
      );
      await refusedOnce('deployment', deployment.id, 'RUNNING');
    });
  });
});
