import { createApi } from '../../api';
import { defaultEnvironmentUpgradeSettings } from '../../lambdas/activities/environment-upgrade/dependencies';
import { failEnvironmentUpgrade } from '../../lambdas/activities/environment-upgrade/fail-environment-upgrade';
import { TABLE_ACTIONS, type TableAction } from '../../contracts';
import { inProcessListeners } from '../../engine/dynamodb-store/in-process-clients';
import type { EmbeddedRuntime } from '../../engine/embedded-runtime';
import { invokedFunction } from '../../engine/local-step-functions';
import { parseSiteDefinition } from '../../simulator';
import { groupOf, QUICK_POLL, QUICK_TIMING, runDeployment } from '../support/deployment-sites';
import { eventually, runUpgrade, startTestRuntime } from '../support/embedded';
import { buildCloudSite, ENVIRONMENT_NODE_NAMES, environmentUpgradeRequest, fuelEnvironments } from '../support/environments';
import { buildSite, upgradeRequest } from '../support/sites';
import { ssmConnectors } from '../support/ssm-connectors';
import { EXAMPLE_GRAPH, exampleSite } from '../support/task-graph-runs';

/**
 * The least-privilege grants (contracts/table-access.ts) hold the functions to what they do: every
 * DynamoDB call a function makes in these runs (lockstep, window, a cancel, failures, group
 * deployments over HTTP and over SSM, the REST API) is one the stack grants it. The calls are
 * attributed to the function the engine is running (invokedFunction) when they are made.
 */
const calls = new Map<string, Set<string>>();

function recordCalls(runtime: EmbeddedRuntime): void {
  const record = (commandName: string) => {
    const fn = invokedFunction.getStore();
    if (fn) calls.set(fn, (calls.get(fn) ?? new Set()).add(commandName.replace(/Command$/, '')));
  };
  // The embedded store's in-process clients run no middleware: they report each command to their listeners.
  const listeners = inProcessListeners(runtime.dynamoDb.rawClient);
  if (listeners) {
    listeners.add((commandName) => record(commandName));
    return;
  }
  runtime.dynamoDb.rawClient.middlewareStack.add(
    (next, context) => (args) => {
      record(context.commandName ?? '');
      return next(args);
    },
    { step: 'initialize' },
  );
}

async function withRuntime(options: Parameters<typeof startTestRuntime>[0], work: (runtime: EmbeddedRuntime) => Promise<void>): Promise<void> {
  const runtime = await startTestRuntime(options);
  recordCalls(runtime);
  try {
    await work(runtime);
  } finally {
    await runtime.close();
  }
}

const failingNodes = (i: number) => (i === 1 ? { faults: { boot: 'fail' as const } } : i === 2 ? { faults: { returnToService: 'never' as const } } : i === 0 ? { wlm: { state: 'ALLOCATED' as const, busySeconds: 30 } } : {});

describe('every DynamoDB call a function makes is one the stack grants it', () => {
  beforeAll(async () => {
    // Lockstep over SSM: slurm-reboot keeps its records in the table.
    await withRuntime({ site: buildSite(2), connectors: ssmConnectors }, async (runtime) => {
      await runUpgrade(runtime, upgradeRequest());
    });
    // Lockstep and mode window with a busy node, a failed boot and a node that never returns.
    await withRuntime({ site: buildSite(4, { node: failingNodes }) }, async (runtime) => {
      await runUpgrade(runtime, upgradeRequest({ wlmReturnTimeoutSeconds: 60 }));
      await runUpgrade(runtime, upgradeRequest({ startingLabel: 'failed', failedLabel: 'compute', mode: 'window', maxUnavailable: 2, wlmReturnTimeoutSeconds: 60 }));
    });
    // A window that waits for its operator's approval after its first batch (AwaitOperator parks it on a task token).
    await withRuntime({ site: buildSite(4) }, async (runtime) => {
      const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 2, batches: [2, 2], pauseAfterBatches: [1] }));
      await eventually(runtime, async () => ((await runtime.store.getSession(run.id))?.progress.window?.awaitingApproval === 1 ? true : undefined), 'the wait for batch 2');
      await runtime.clock.busy(() => runtime.gate(run.id, 'approve'));
      expect((await run.outcome).status).toBe('SUCCEEDED');
    });
    // A lockstep session cancelled through the REST API while it waits for a busy node; the API reads, cancels and clones.
    const busyFirst = (i: number) => (i === 0 ? { wlm: { state: 'ALLOCATED' as const, busySeconds: 100_000 } } : failingNodes(i));
    const withEnvironments = buildSite(4, { node: busyFirst });
    const environmentNodes = ENVIRONMENT_NODE_NAMES.map((name, i) => ({ name, nid: 100 + i }));
    await withRuntime({ site: parseSiteDefinition({ ...withEnvironments, nodes: [...withEnvironments.nodes, ...environmentNodes], ...fuelEnvironments() }) }, async (runtime) => {
      const busy = await runtime.run('rollingUpgrade', upgradeRequest());
      await eventually(runtime, async () => ((await runtime.store.getSession(busy.id))?.progress.stage === 'QUIESCING' ? true : undefined), 'QUIESCING');
      const api = createApi({ controlPlane: runtime, environments: runtime.environments, environmentUpgrades: runtime.environmentUpgrades, runStarts: runtime.runStarts, site: runtime.site });
      await invokedFunction.run('Api', () =>
        runtime.clock.busy(async () => {
          await api({ method: 'GET', path: '/sessions' });
          await api({ method: 'GET', path: `/sessions/${busy.id}` });
          expect((await api({ method: 'DELETE', path: `/sessions/${busy.id}` })).status).toBe(200);
          expect((await api({ method: 'POST', path: '/environments/1/upgrade/clone', body: JSON.stringify({ name: 'prod-8.0', release_id: 2 }) })).status).toBe(200);
          // A clone that cannot be made: its claim is released (DeleteItem).
          expect((await api({ method: 'POST', path: '/environments/2/upgrade/clone', body: JSON.stringify({ name: 'legacy-8.0', release_id: 2 }) })).status).toBe(409);
          await api({ method: 'GET', path: '/deployments' });
        }),
      );
      expect((await busy.outcome).status).toBe('SUCCEEDED');
    });
    // Group deployments: over SSM (the command provisioner's records), and over HTTP with a group whose actions cannot be polled (Fail Group).
    const nodes = ['a-n', 'b-n', 'c-n'].map((name, i) => ({ name, nid: i + 1 }));
    const groups = [groupOf('a', ['a-n']), groupOf('b', ['b-n'], { depends_on: ['a'] }), groupOf('c', ['c-n'])];
    await withRuntime({ site: parseSiteDefinition({ nodes, timing: QUICK_TIMING }), connectors: ssmConnectors }, async (runtime) => {
      await runDeployment(runtime, { strategy: { groups }, ...QUICK_POLL });
    });
    const apiFaults = [{ service: 'provisioner' as const, method: 'GET' as const, path: '-a-prepare-', status: 500, count: 1000 }];
    await withRuntime({ site: parseSiteDefinition({ nodes, timing: QUICK_TIMING, apiFaults }) }, async (runtime) => {
      const run = await runDeployment(runtime, { strategy: { groups }, ...QUICK_POLL });
      expect(run.report!.groups['a']!.stage).toBe('FAILED');
    });
    // A side-by-side environment upgrade started through the REST API (its six functions, and the rolling upgrade it
    // starts), whose controllers' upgrade fails (a controller does not boot): Fail Environment Upgrade records it.
    await withRuntime({ site: buildCloudSite((name) => (name === 'ctl-2' ? { faults: { boot: 'fail' } } : {})) }, async (runtime) => {
      const api = createApi({ controlPlane: runtime, environments: runtime.environments, environmentUpgrades: runtime.environmentUpgrades, runStarts: runtime.runStarts, site: runtime.site });
      const created = await invokedFunction.run('Api', () => runtime.clock.busy(() => api({ method: 'POST', path: '/environments/5/upgrade', body: JSON.stringify(environmentUpgradeRequest()) })));
      expect(created.status).toBe(201);
      const { id } = created.body as { id: string };
      await eventually(
        runtime,
        async () => {
          const got = await invokedFunction.run('Api', () => api({ method: 'GET', path: `/sessions/${id}` }));
          const phase = (got.body as { progress?: { phase?: string } }).progress?.phase;
          return phase === 'COMPLETE' || phase === 'FAILED' ? phase : undefined;
        },
        'the environment upgrade to end',
      );
      // An error no phase absorbs reaches Record Failure (none of the runs above has one): its function, as the state calls it.
      const deps = { upgrades: runtime.environmentUpgrades, environments: runtime.environments, sessions: runtime.store, site: runtime.site, clock: runtime.clock, settings: defaultEnvironmentUpgradeSettings };
      const executionId = 'arn:aws:states:local:000000000000:execution:EnvironmentUpgrade:table-access';
      await invokedFunction.run('FailEnvironmentUpgrade', () => failEnvironmentUpgrade({ state: { environmentId: 5, error: { Error: 'Error', Cause: 'a bug' } }, executionId }, deps));
    });
    // A task graph as a group's deploy phase (OpenTaskRun, AdvanceTaskRun; EvaluatePhase reads the task run),
    // and a deployment cancelled from the console ({cancelDeploymentId}: Start Deployment writes the request).
    await withRuntime({ site: exampleSite() }, async (runtime) => {
      const strategy = { groups: [groupOf('control-plane', ['node-1', 'node-4']), groupOf('workers', ['node-6', 'node-7'], { depends_on: ['control-plane'] })] };
      expect((await runDeployment(runtime, { strategy, taskGraph: { graph: EXAMPLE_GRAPH }, pollIntervalSeconds: 10 })).outcome.status).toBe('SUCCEEDED');
      const running = await runtime.run('groupDeployment', { strategy, ...QUICK_POLL });
      await eventually(runtime, async () => ((await runtime.deployments.getDeployment(running.id)) ? true : undefined), 'the deployment started');
      const cancel = await runtime.clock.busy(() => runtime.run('groupDeployment', { cancelDeploymentId: running.id }));
      expect((await cancel.outcome).status).toBe('SUCCEEDED');
      expect((await running.outcome).output).toMatchObject({ status: 'CANCELLED' });
    });
  }, 300_000);

  it('covers every function (the runs reach each of them)', () => {
    expect([...calls.keys()].sort()).toEqual(Object.keys(TABLE_ACTIONS).sort());
  });

  it.each(Object.keys(TABLE_ACTIONS))('%s', (name) => {
    const granted = new Set<string>(TABLE_ACTIONS[name as keyof typeof TABLE_ACTIONS] as readonly TableAction[]);
    expect([...(calls.get(name) ?? [])].filter((action) => !granted.has(action))).toEqual([]);
  });

  it('no call is a Scan', () => {
    expect([...calls.values()].some((actions) => actions.has('Scan'))).toBe(false);
  });
});
