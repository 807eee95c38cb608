import { AsyncLocalStorage } from 'node:async_hooks';
import { createApi } from '../../api';
import { defaultEnvironmentUpgradeSettings } from '../../lambdas/activities/environment-upgrade/dependencies';
import { failEnvironmentUpgrade } from '../../lambdas/activities/environment-upgrade/fail-environment-upgrade';
import { SITE_SERVICES, TABLE_ACTIONS, tableGrants, type FunctionName, type TableAction, type TableUser } from '../../contracts';
import { inProcessListeners } from '../../local/dynamodb-store/in-process-clients';
import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { invokedFunction, type LocalFunction } from '../../local/local-step-functions';
import { SiteServiceError } from '../../core/errors';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { sessionKey } from '../../adapters/dynamodb/table-design';
import { parseSiteDefinition, siteProfileFor } from '../../simulator';
import { groupOf, QUICK_POLL, QUICK_TIMING, runDeployment } from '../support/deployment-sites';
import { eventually, runUpgrade, startTestRuntime } from '../support/embedded';
import { buildCloudSite, ENVIRONMENT_NODE_NAMES, environmentUpgradeRequest, fuelEnvironments } from '../support/environments';
import { buildSite, upgradeRequest } from '../support/sites';
import { profileConnectors, siteEventConnectors, ssmConnectors } from '../support/ssm-connectors';
import { SIMULATED_RELAY } from '../../local/simulated-trigger-relay';
import { commandEndsHandler, type CommandEndOutcome } from '../../lambdas/entrypoints/command-ends';
import { runWhenDue } from '../../local/in-process-relay';
import { EXAMPLE_GRAPH, exampleSite } from '../support/task-graph-runs';

/**
 * The least-privilege grants (contracts/table-access.ts) hold the functions to what they do: every
 * DynamoDB call a function makes in these runs (lockstep, window, a cancel, failures, group
 * deployments over HTTP and over SSM, the REST API) is one the stack grants it. The calls are
 * attributed to the function the engine is running (invokedFunction) when they are made.
 */
const calls = new Map<string, Set<string>>();
/** Per function, each call's action and the leading keys it names (`index:<partition>` for a Query of the index). */
const keyed = new Map<string, Map<string, { action: string; keys: string[] }>>();

type AttributeMap = Record<string, { S?: string } | string>;
/** A value as the document client gives it (plain) or marshalled ({S}). */
const text = (value: { S?: string } | string | undefined) => (typeof value === 'string' ? value : value?.S);
/** The partition key values a call names (IAM's dynamodb:LeadingKeys), or the index partition it queries. */
function leadingKeys(action: string, input: Record<string, unknown>): string[] {
  const pk = (item: unknown) => text((item as AttributeMap | undefined)?.['pk']) ?? '?';
  const perTable = (requests: unknown) => Object.values((requests ?? {}) as Record<string, unknown>);
  switch (action) {
    case 'GetItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return [pk(input['Key'])];
    case 'PutItem':
      return [pk(input['Item'])];
    case 'BatchGetItem':
      return perTable(input['RequestItems']).flatMap((request) => ((request as { Keys: unknown[] }).Keys ?? []).map(pk));
    case 'BatchWriteItem':
      return perTable(input['RequestItems']).flatMap((writes) =>
        (writes as { PutRequest?: { Item: unknown }; DeleteRequest?: { Key: unknown } }[]).map((w) => pk(w.PutRequest?.Item ?? w.DeleteRequest?.Key)),
      );
    case 'Query': {
      const condition = String(input['KeyConditionExpression'] ?? '');
      const placeholder = /^\s*(\w+)\s*=\s*(:\w+)/.exec(condition);
      const value = placeholder ? text((input['ExpressionAttributeValues'] as AttributeMap)[placeholder[2]!]) : undefined;
      return [input['IndexName'] ? `index:${value}` : (value ?? '?')];
    }
    default:
      return ['?'];
  }
}

function recordCalls(runtime: EmbeddedRuntime): void {
  const record = (commandName: string, input: Record<string, unknown>) => {
    const fn = invokedFunction.getStore();
    if (!fn) return;
    const action = commandName.replace(/Command$/, '');
    calls.set(fn, (calls.get(fn) ?? new Set()).add(action));
    const keys = [...new Set(leadingKeys(action, input))].sort();
    const seen = keyed.get(fn) ?? new Map<string, { action: string; keys: string[] }>();
    seen.set(`${action} ${keys.join(' ')}`, { action, keys });
    keyed.set(fn, seen);
  };
  // The embedded store's in-process clients run no middleware: they report each command to their listeners.
  const listeners = inProcessListeners(runtime.dynamoDb.rawClient);
  if (listeners) {
    listeners.add((commandName, _output, input) => record(commandName, input));
    return;
  }
  runtime.dynamoDb.rawClient.middlewareStack.add(
    (next, context) => (args) => {
      record(context.commandName ?? '', args.input as Record<string, unknown>);
      return next(args);
    },
    { step: 'initialize' },
  );
}

/** Per function, the site services it called (each port method call, attributed as the DynamoDB calls are; a connector's own calls to another port, such as a command-driven one's to its transport, count as its own). */
const services = new Map<string, Set<string>>();
const insideService = new AsyncLocalStorage<true>();

function recordServices(runtime: EmbeddedRuntime): void {
  const site = runtime.site as unknown as Record<string, Record<string, unknown> | undefined>;
  for (const service of ['workloadManager', 'bootService', 'inventory', 'provisioner', 'commands']) {
    const port = site[service];
    if (!port) continue;
    const methods = new Set<string>();
    for (let proto: object | null = port; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
      for (const name of Object.getOwnPropertyNames(proto)) if (name !== 'constructor' && typeof port[name] === 'function') methods.add(name);
    }
    for (const method of methods) {
      const original = port[method] as (...args: unknown[]) => unknown;
      port[method] = function (this: unknown, ...args: unknown[]) {
        const fn = invokedFunction.getStore();
        if (fn && !insideService.getStore()) services.set(fn, (services.get(fn) ?? new Set()).add(service));
        return insideService.run(true, () => original.apply(this, args));
      };
    }
  }
}

async function withRuntime(options: Parameters<typeof startTestRuntime>[0], work: (runtime: EmbeddedRuntime) => Promise<void>): Promise<void> {
  const runtime = await startTestRuntime(options);
  recordCalls(runtime);
  recordServices(runtime);
  try {
    await work(runtime);
  } finally {
    await runtime.close();
  }
}

/** The site's events on (scontrol's Slurm triggers), and SSM's notifications of the head node's commands (its transport's commandNotifications). */
const commandNotifyingConnectors = profileConnectors((urls) => {
  const profile = siteProfileFor(urls, 'ssm', 1);
  const transport = profile.transport?.type === 'ssm' ? { ...profile.transport, commandNotifications: true } : profile.transport;
  return { ...profile, ...(transport ? { transport } : {}), workloadManager: { type: 'scontrol', siteEvents: { relay: SIMULATED_RELAY } } };
});

/**
 * The simulated head node's SSM notifications, each handed to the stack's target (commandEndsHandler, the Comment read
 * from the head node as GetCommandInvocation answers it on AWS) as the function CommandEnds, at its time on the
 * runtime's clock. Returns what each came to.
 */
function deliverCommandEnds(runtime: EmbeddedRuntime): CommandEndOutcome[] {
  const headNode = runtime.simulator.simulator.headNode;
  const notifications = headNode.ssmNotifications;
  const target = commandEndsHandler({
    commentOf: async (commandId) => headNode.list(commandId)[0]?.comment,
    siteEvents: runtime.siteEvents,
    controlPlane: runtime,
    now: () => runtime.clock.now(),
  });
  const outcomes: CommandEndOutcome[] = [];
  const stopped = new AbortController();
  runtime.closeAlso(async () => stopped.abort());
  runWhenDue(notifications.onScheduled.bind(notifications), () => notifications.catchUp(), runtime.clock, stopped.signal);
  notifications.onNotification((notification) => {
    void runtime.clock.busy(async () => outcomes.push(await invokedFunction.run('CommandEnds', () => target(notification))));
  });
  return outcomes;
}

const failingNodes = (i: number) =>
  i === 1
    ? { faults: { boot: 'fail' as const } }
    : i === 2
      ? { faults: { returnToService: 'never' as const } }
      : i === 0
        ? { wlm: { state: 'ALLOCATED' as const, busySeconds: 30 } }
        : {};

describe('every DynamoDB call a function makes is one the stack grants it', () => {
  beforeAll(async () => {
    // Lockstep over SSM: slurm-reboot keeps its records in the table.
    await withRuntime({ site: buildSite(2), connectors: ssmConnectors }, async (runtime) => {
      await runUpgrade(runtime, upgradeRequest());
    });
    // Lockstep and mode window with a busy node, a failed boot and a node that never returns.
    await withRuntime({ site: buildSite(4, { node: failingNodes }) }, async (runtime) => {
      await runUpgrade(runtime, upgradeRequest({ wlmReturnTimeoutSeconds: 60 }));
      await runUpgrade(
        runtime,
        upgradeRequest({ startingLabel: 'failed', failedLabel: 'compute', mode: 'window', maxUnavailable: 2, wlmReturnTimeoutSeconds: 60 }),
      );
    });
    // The site's events: triggers set over SSM, each wait parked (AwaitOperator) until a firing wakes it; then an
    // execution that fails (its session's record removed under it) clears them (ReleaseSiteTriggers).
    await withRuntime(
      { site: buildSite(2, { node: (i) => (i === 0 ? { wlm: { state: 'ALLOCATED', busySeconds: 60 } } : {}) }), connectors: siteEventConnectors() },
      async (runtime) => {
        await runUpgrade(runtime, upgradeRequest());
      },
    );
    await withRuntime(
      { site: buildSite(2, { node: (i) => (i === 0 ? { wlm: { state: 'ALLOCATED', busySeconds: 60 } } : {}) }), connectors: siteEventConnectors() },
      async (runtime) => {
        const run = await runtime.run('rollingUpgrade', upgradeRequest());
        await eventually(runtime, async () => ((await runtime.store.getSession(run.id))?.siteWaitToken ? true : undefined), 'a wait parked for the site');
        await runtime.clock.busy(async () => {
          await runtime.dynamoDb.client.send(new DeleteCommand({ TableName: runtime.dynamoDb.tableName, Key: sessionKey(run.id) }));
          await runtime.wakeForSiteEvent(run.id);
        });
        expect((await run.outcome).status).toBe('FAILED');
      },
    );
    // SSM's notifications of the health checks' ends (issue 29, item 3): each taken by the stack's target
    // (lambdas/entrypoints/command-ends.ts, in process, as the function CommandEnds), which records the command
    // event and wakes the session parked for its check.
    await withRuntime({ site: buildSite(2, { timing: { healthCheckSeconds: 100 } }), connectors: commandNotifyingConnectors }, async (runtime) => {
      const taken = deliverCommandEnds(runtime);
      const run = await runUpgrade(
        runtime,
        upgradeRequest({ pollIntervalSeconds: 30, healthCheck: { command: 'ssh -o BatchMode=yes {node} /usr/sbin/nhc', timeoutSeconds: 300 } }),
      );
      expect(run.outcome.status).toBe('SUCCEEDED');
      expect(taken.filter((outcome) => outcome.taken && outcome.recorded)).toHaveLength(2);
      expect(taken.some((outcome) => outcome.taken && outcome.woke)).toBe(true);
    });
    // A window that waits for its operator's approval after its first batch (AwaitOperator parks it on a task token).
    await withRuntime({ site: buildSite(4) }, async (runtime) => {
      const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 2, batches: [2, 2], pauseAfterBatches: [1] }));
      await eventually(
        runtime,
        async () => ((await runtime.store.getSession(run.id))?.progress.window?.awaitingApproval === 1 ? true : undefined),
        'the wait for batch 2',
      );
      await runtime.clock.busy(() => runtime.gate(run.id, 'approve'));
      expect((await run.outcome).status).toBe('SUCCEEDED');
    });
    // A lockstep session cancelled through the REST API while it waits for a busy node; the API reads, cancels and clones.
    const busyFirst = (i: number) => (i === 0 ? { wlm: { state: 'ALLOCATED' as const, busySeconds: 100_000 } } : failingNodes(i));
    const withEnvironments = buildSite(4, { node: busyFirst });
    const environmentNodes = ENVIRONMENT_NODE_NAMES.map((name, i) => ({ name, nid: 100 + i }));
    await withRuntime(
      { site: parseSiteDefinition({ ...withEnvironments, nodes: [...withEnvironments.nodes, ...environmentNodes], ...fuelEnvironments() }) },
      async (runtime) => {
        const busy = await runtime.run('rollingUpgrade', upgradeRequest());
        await eventually(runtime, async () => ((await runtime.store.getSession(busy.id))?.progress.stage === 'QUIESCING' ? true : undefined), 'QUIESCING');
        const api = createApi({
          controlPlane: runtime,
          environments: runtime.environments,
          environmentUpgrades: runtime.environmentUpgrades,
          runStarts: runtime.runStarts,
          siteEvents: runtime.siteEvents,
          site: runtime.site,
        });
        await invokedFunction.run('Api', () =>
          runtime.clock.busy(async () => {
            await api({ method: 'GET', path: '/sessions' });
            // A site relay's firing, delivered twice (a conditional PutItem each), then the list (a Query).
            const firing = JSON.stringify({ id: 'up-1', event: 'up', nodes: 'x[0-1]', firedAt: '2026-11-29T01:00:00Z' });
            expect((await api({ method: 'POST', path: '/site-events', body: firing, contentType: 'application/json' })).status).toBe(201);
            expect((await api({ method: 'POST', path: '/site-events', body: firing, contentType: 'application/json' })).status).toBe(200);
            await api({ method: 'GET', path: '/site-events' });
            await api({ method: 'GET', path: `/sessions/${busy.id}` });
            expect((await api({ method: 'DELETE', path: `/sessions/${busy.id}` })).status).toBe(200);
            expect(
              (
                await api({
                  method: 'POST',
                  path: '/environments/1/upgrade/clone',
                  body: JSON.stringify({ name: 'prod-8.0', release_id: 2 }),
                  contentType: 'application/json',
                })
              ).status,
            ).toBe(200);
            // A clone that cannot be made: its claim is released (DeleteItem).
            expect(
              (
                await api({
                  method: 'POST',
                  path: '/environments/2/upgrade/clone',
                  body: JSON.stringify({ name: 'legacy-8.0', release_id: 2 }),
                  contentType: 'application/json',
                })
              ).status,
            ).toBe(409);
            await api({ method: 'GET', path: '/deployments' });
          }),
        );
        expect((await busy.outcome).status).toBe('SUCCEEDED');
        // Then the ended session is removed (DeleteItem, BatchWriteItem), an environment deleted, and runs the site would
        // refuse are started through an API that does not check the site: their first states record the refusal on the run start.
        const blind = createApi({
          controlPlane: runtime,
          environments: runtime.environments,
          environmentUpgrades: runtime.environmentUpgrades,
          runStarts: runtime.runStarts,
        });
        const json = 'application/json';
        const refusedRuns = await invokedFunction.run('Api', () =>
          runtime.clock.busy(async () => {
            expect((await api({ method: 'DELETE', path: `/sessions/${busy.id}` })).body).toMatchObject({ removed: true });
            expect((await api({ method: 'DELETE', path: '/environments/3' })).status).toBe(200);
            const session = await blind({
              method: 'POST',
              path: '/sessions',
              body: JSON.stringify(upgradeRequest({ upgradeTemplateId: 'no-such-image' })),
              contentType: json,
            });
            const deployment = await blind({ method: 'POST', path: '/deployments', body: JSON.stringify({ nodes: ['no-such-node'] }), contentType: json });
            const taskRun = await blind({
              method: 'POST',
              path: '/task-runs',
              body: JSON.stringify({ graph: EXAMPLE_GRAPH, selection: { nodes: ['no-such-node'] } }),
              contentType: json,
            });
            expect([session.status, deployment.status, taskRun.status]).toEqual([201, 201, 201]);
            return [(session.body as { id: string }).id, (deployment.body as { id: string }).id, (taskRun.body as { id: string }).id] as const;
          }),
        );
        await eventually(
          runtime,
          async () => {
            const starts = await Promise.all(refusedRuns.map((id) => runtime.runStarts.get(id)));
            return starts.every((start) => start?.refused) ? true : undefined;
          },
          'the refusals',
        );
        await invokedFunction.run('Api', () => runtime.clock.busy(() => api({ method: 'DELETE', path: `/sessions/${refusedRuns[0]}` })));
      },
    );
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
      const api = createApi({
        controlPlane: runtime,
        environments: runtime.environments,
        environmentUpgrades: runtime.environmentUpgrades,
        runStarts: runtime.runStarts,
        site: runtime.site,
      });
      const created = await invokedFunction.run('Api', () =>
        runtime.clock.busy(() =>
          api({ method: 'POST', path: '/environments/5/upgrade', body: JSON.stringify(environmentUpgradeRequest()), contentType: 'application/json' }),
        ),
      );
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
      const deps = {
        upgrades: runtime.environmentUpgrades,
        environments: runtime.environments,
        sessions: runtime.store,
        site: runtime.site,
        clock: runtime.clock,
        settings: defaultEnvironmentUpgradeSettings,
      };
      const executionId = 'arn:aws:states:local:000000000000:execution:EnvironmentUpgrade:table-access';
      await invokedFunction.run('FailEnvironmentUpgrade', () =>
        failEnvironmentUpgrade({ state: { environmentId: 5, error: { Error: 'Error', Cause: 'a bug' } }, executionId }, deps),
      );
    });
    // A deployment whose Finish Deployment keeps failing: Record Failure (FailDeployment) marks it FAILED.
    const brokenFinish = (name: string, fn: LocalFunction): LocalFunction =>
      name === 'FinishDeployment' ? () => Promise.reject(new SiteServiceError('provisioner', 'answered 500', 500)) : fn;
    await withRuntime({ site: parseSiteDefinition({ nodes, timing: QUICK_TIMING }), wrapFunction: brokenFinish }, async (runtime) => {
      const run = await runDeployment(runtime, { strategy: { groups }, ...QUICK_POLL });
      expect([run.outcome.error, run.record?.status]).toEqual(['SiteServiceError', 'FAILED']);
    });
    // A task graph as a group's deploy phase (OpenTaskRun, AdvanceTaskRun; EvaluatePhase reads the task run),
    // and a deployment cancelled from the console ({cancelDeploymentId}: Start Deployment writes the request).
    await withRuntime({ site: exampleSite() }, async (runtime) => {
      const strategy = {
        groups: [groupOf('control-plane', ['node-1', 'node-4']), groupOf('workers', ['node-6', 'node-7'], { depends_on: ['control-plane'] })],
      };
      expect((await runDeployment(runtime, { strategy, taskGraph: { graph: EXAMPLE_GRAPH }, pollIntervalSeconds: 10 })).outcome.status).toBe('SUCCEEDED');
      const running = await runtime.run('groupDeployment', { strategy, ...QUICK_POLL });
      await eventually(runtime, async () => ((await runtime.deployments.getDeployment(running.id)) ? true : undefined), 'the deployment started');
      const cancel = await runtime.clock.busy(() => runtime.run('groupDeployment', { cancelDeploymentId: running.id }));
      expect((await cancel.outcome).status).toBe('SUCCEEDED');
      expect((await running.outcome).output).toMatchObject({ status: 'CANCELLED' });
    });
  }, 300_000);

  it('covers every function (the runs reach each of them), and the paths that write outside their own partition', () => {
    expect([...calls.keys()].sort()).toEqual(Object.keys(TABLE_ACTIONS).sort());
    const made = (fn: string) => [...(keyed.get(fn)?.keys() ?? [])].map((call) => call.replace(/#\S*/g, '#*'));
    // The API removes an ended session (its item, then the rest in batches) and refused run starts, and deletes environments.
    expect(made('Api')).toEqual(expect.arrayContaining(['BatchWriteItem SESSION#*', 'DeleteItem SESSION#*', 'DeleteItem RUN#*', 'DeleteItem ENVIRONMENTS']));
    // A first state that refuses records it on the run start.
    expect(made('OpenSession')).toContain('PutItem RUN#*');
    expect(made('StartDeployment')).toContain('PutItem RUN#*');
    expect(made('OpenTaskRun')).toContain('PutItem RUN#*');
  });

  it.each(Object.keys(TABLE_ACTIONS))('%s', (name) => {
    const granted = new Set<string>(TABLE_ACTIONS[name as keyof typeof TABLE_ACTIONS] as readonly TableAction[]);
    expect([...(calls.get(name) ?? [])].filter((action) => !granted.has(action))).toEqual([]);
  });

  /** IAM's ForAllValues:StringLike on dynamodb:LeadingKeys: every key the call names matches one of the patterns. */
  const allowedBy = (patterns: readonly string[], keys: readonly string[]) =>
    keys.every((key) => patterns.some((pattern) => (pattern.endsWith('*') ? key.startsWith(pattern.slice(0, -1)) : key === pattern)));

  it.each(Object.keys(TABLE_ACTIONS))('%s: each call is on partitions one of its grants names (locks: read and conditional update only)', (name) => {
    const grants = tableGrants(name as TableUser);
    const refused = [...(keyed.get(name)?.values() ?? [])].filter(({ action, keys }) => {
      if (keys.every((key) => key.startsWith('index:'))) return !(action === 'Query' && grants.indexQuery);
      return !grants.table.some((grant) => grant.actions.includes(action as TableAction) && allowedBy(grant.partitions, keys));
    });
    expect(refused).toEqual([]);
  });

  it('no function may put over or delete a lock; the API function may touch none', () => {
    for (const name of Object.keys(TABLE_ACTIONS)) {
      for (const grant of tableGrants(name as TableUser).table) {
        if (grant.partitions.includes('LOCK#*'))
          expect({ name, actions: grant.actions.filter((a) => ['PutItem', 'DeleteItem', 'BatchWriteItem'].includes(a)) }).toEqual({ name, actions: [] });
      }
    }
    expect(tableGrants('Api').table.flatMap((grant) => grant.partitions)).not.toContain('LOCK#*');
  });

  it.each(Object.keys(SITE_SERVICES))('%s: calls only the site services the stack grants it the secrets and targets of', (name) => {
    const granted = new Set<string>(SITE_SERVICES[name as FunctionName | 'Api']);
    expect([...(services.get(name) ?? [])].filter((service) => !granted.has(service))).toEqual([]);
  });

  it('no call is a Scan', () => {
    expect([...calls.values()].some((actions) => actions.has('Scan'))).toBe(false);
  });
});
