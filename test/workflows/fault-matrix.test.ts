import type { SiteClients } from '../../adapters/site';
import { simulatedSiteClients } from '../../local/simulated-site-clients';
import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import type { ExecutionOutcome } from '../../local/local-step-functions';
import { buildDeploymentReport } from '../../control-plane/reports/deployment-report';
import { parseSiteDefinition, type SiteDefinitionInput } from '../../simulator';
import type { RunningSiteSimulator } from '../../simulator/http-server';
import { eventually, startTestRuntime } from '../support/embedded';
import { groupOf, QUICK_POLL, QUICK_TIMING } from '../support/deployment-sites';
import { interleavedRuns, invariantViolations, observeDeployment, observeMixedRuns, observeUpgrades, type NodeObservation } from '../support/fault-invariants';
import { EmbeddedRuntime as Runtime } from '../../local/embedded-runtime';
import { HELD_BY_ANOTHER_CONTROL_PLANE } from '../../core/site/node-claims';
import { ScontrolWorkloadManager, SsmTransport } from '../../adapters/site/commands';
import type { CommandTransport } from '../../ports/command-transport';
import { HEAD_NODE_INSTANCE_ID, siteProfileFor } from '../../simulator';
import { profileConnectors } from '../support/ssm-connectors';
import { CLOUD_NODES, buildCloudSite, environmentUpgradeRequest } from '../support/environments';
import { startSilentEndpoint } from '../support/silent-endpoint';
import { buildSite, nodeName, upgradeRequest } from '../support/sites';

/**
 * The fault matrix: each cell runs a workflow on the embedded engine against the simulated site
 * (virtual time, small fleets) with one kind of fault, and is judged by the same checker
 * (support/fault-invariants): no node lost, none drained or booted (prepared or deployed) twice,
 * each node's last recorded status what the site shows. Each cell also prints its figures
 * (simulated seconds to the end, retried errors); the fault matrix of docs/architecture.md quotes them.
 */

/** Boots and returns of 20 and 10 simulated seconds: two polls each, so a cell is a few dozen increments. */
const QUICK_SITE_TIMING = { bootSeconds: 20, returnSeconds: 10 };

/** A site of `count` nodes in `compute` with the matrix's quick timing. */
const matrixSite = (count: number, options: Omit<Parameters<typeof buildSite>[1] & object, 'timing'> = {}) =>
  buildSite(count, { ...options, timing: QUICK_SITE_TIMING });

/** Per request: a hung site call costs this much real time before the client gives up and the retry comes. */
const HANG_TIMEOUT_MS = 250;

interface CellFigures {
  cell: string;
  outcome: string;
  nodes: string;
  simulatedSeconds: number;
  errorsReported: number | undefined;
}
const figures: CellFigures[] = [];
afterAll(() => {
  const lines = figures.map((f) => `| ${f.cell} | ${f.outcome} | ${f.nodes} | ${f.simulatedSeconds} | ${f.errorsReported ?? '-'} |`);
  console.log(['| cell | outcome | nodes | simulated s | errors reported |', '|---|---|---|---|---|', ...lines].join('\n'));
});

let runtime: EmbeddedRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

/** The site's HTTP clients with a short timeout, so a hung request is given up quickly. */
const quickTimeoutClients = (simulator: RunningSiteSimulator): SiteClients => simulatedSiteClients(simulator, { timeoutMs: HANG_TIMEOUT_MS });

/** A site call that reached the site, then the handler died before it could record the outcome (its ASL Retry runs it again). */
function crashingAfter(site: SiteClients, call: string, crashes: string[]): SiteClients {
  const wrap = <T extends object>(service: string, client: T): T =>
    new Proxy(client, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function' || `${service}.${String(prop)}` !== call) return value;
        return async (...args: unknown[]) => {
          const result: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (crashes.length === 0) {
            crashes.push(call);
            throw new Error(`injected crash after ${call}`);
          }
          return result;
        };
      },
    });
  return {
    workloadManager: wrap('workloadManager', site.workloadManager),
    bootService: wrap('bootService', site.bootService),
    inventory: wrap('inventory', site.inventory),
    ...(site.provisioner ? { provisioner: wrap('provisioner', site.provisioner) } : {}),
  };
}

/** errorsReported: the session's messages of a failed increment, a lasting fault said once (a group deployment keeps none). */
function record(cell: string, outcome: ExecutionOutcome, counts: Record<string, number>, startedAt: number, errorsReported?: number): void {
  figures.push({
    cell,
    outcome: outcome.status,
    nodes: Object.entries(counts)
      .map(([status, n]) => `${n} ${status}`)
      .join(', '),
    simulatedSeconds: Math.round((runtime!.clock.now() - startedAt) / 1000),
    errorsReported,
  });
}

/** Runs rolling upgrades to their end, checks the invariants over the ones given as finished, and records the figures. */
async function upgradeCell(cell: string, requests: Record<string, unknown>[]): Promise<string[]> {
  const startedAt = runtime!.clock.now();
  const runs = await Promise.all(requests.map((request) => runtime!.run('rollingUpgrade', request)));
  const outcomes = await Promise.all(runs.map((run) => run.outcome));
  for (const outcome of outcomes) expect(outcome.status).toBe('SUCCEEDED');
  const ids = runs.map((run) => run.id);
  await recordUpgrades(cell, ids, outcomes[0]!, startedAt);
  return ids;
}

/** A transient fault ridden out: every node of the sessions upgraded, none failed for it. */
async function expectAllUpgraded(ids: readonly string[]) {
  for (const id of ids)
    for (const node of await runtime!.store.listNodes(id)) expect({ name: node.name, status: node.status }).toEqual({ name: node.name, status: 'UPGRADED' });
}

async function recordUpgrades(cell: string, ids: readonly string[], outcome: ExecutionOutcome, startedAt: number) {
  const counts: Record<string, number> = {};
  let errorsReported = 0;
  for (const id of ids) {
    for (const node of await runtime!.store.listNodes(id)) counts[node.status] = (counts[node.status] ?? 0) + 1;
    errorsReported += (await runtime!.store.messages.list(id)).filter((m) => / failed - /.test(m)).length;
  }
  record(cell, outcome, counts, startedAt, errorsReported);
}

async function deploymentCell(
  cell: string,
  apiFaults: SiteDefinitionInput['apiFaults'],
  options: { hangs?: boolean; crashAfter?: string; crashes?: string[] } = {},
) {
  const nodes = ['a0', 'a1', 'b0', 'b1'].map((name, i) => ({ name, nid: i + 1 }));
  runtime = await startTestRuntime({
    site: parseSiteDefinition({ nodes, timing: QUICK_TIMING, apiFaults }),
    connectors: (simulator) => {
      const clients = options.hangs ? quickTimeoutClients(simulator) : simulatedSiteClients(simulator);
      return options.crashAfter ? crashingAfter(clients, options.crashAfter, options.crashes!) : clients;
    },
  });
  const startedAt = runtime.clock.now();
  const run = await runtime.run('groupDeployment', {
    strategy: { groups: [groupOf('a', ['a0', 'a1']), groupOf('b', ['b0', 'b1'], { depends_on: ['a'] })] },
    ...QUICK_POLL,
  });
  const outcome = await run.outcome;
  expect(outcome.status).toBe('SUCCEEDED');
  const report = await buildDeploymentReport(runtime.deployments, (await runtime.deployments.getDeployment(run.id))!);
  const counts: Record<string, number> = {};
  for (const stage of Object.values(report.nodes)) counts[stage] = (counts[stage] ?? 0) + 1;
  record(cell, outcome, counts, startedAt);
  return { violations: await observeDeployment(runtime, run.id), stages: Object.values(report.nodes) };
}

describe('the invariant checker', () => {
  const good: NodeObservation = {
    name: 'n0',
    recorded: 'UPGRADED',
    terminal: true,
    changes: { drained: 1, booted: 1 },
    allowed: 1,
    siteShows: 'IDLE',
    agrees: true,
  };
  const site = { now: 0, groups: {}, nodes: {}, violations: [], taskLog: [], changes: [] };

  it('finds nothing wrong in a node upgraded once, as the site shows', () => {
    expect(invariantViolations([good], site, new Map())).toEqual([]);
  });

  it.each([
    ['a lost node', { ...good, recorded: 'IN_PROGRESS', terminal: false }, /n0: lost \(recorded IN_PROGRESS\)/],
    ['a node booted twice', { ...good, changes: { drained: 1, booted: 2 } }, /n0: booted 2 times \(at most 1\)/],
    ['a record the site contradicts', { ...good, agrees: false, siteShows: 'DRAINED' }, /n0: recorded UPGRADED but the site shows DRAINED/],
  ])('reports %s', (_case, node, message) => {
    expect(invariantViolations([node], site, new Map())).toEqual([expect.stringMatching(message)]);
  });

  it('reports a safety breach the site saw and a lock left behind', () => {
    expect(invariantViolations([good], { ...site, violations: ['n0 rebooted by two sessions'] }, new Map([['n0', 'u1']]))).toEqual([
      'site: n0 rebooted by two sessions',
      'n0: still locked by u1',
    ]);
  });
});

describe('fault matrix: no fault (the baseline the figures compare with)', () => {
  it('upgrades every node once', async () => {
    runtime = await startTestRuntime({ site: matrixSite(4) });
    const ids = await upgradeCell('no fault (upgrade)', [upgradeRequest()]);
    expect(await observeUpgrades(runtime, ids)).toEqual([]);
    await expectAllUpgraded(ids);
  });

  it('deploys every node once', async () => {
    expect(await deploymentCell('no fault (deployment)', [])).toEqual({ violations: [], stages: ['DEPLOYED', 'DEPLOYED', 'DEPLOYED', 'DEPLOYED'] });
  });
});

describe('fault matrix: site API errors (5xx) per service', () => {
  // Boot service: retried past the nodes' own reboot, the boot request time saved before the failure is kept, so they count as back.
  it.each([
    [
      'workload manager',
      [
        { service: 'workload-manager', method: 'GET', status: 503, count: 3, afterCalls: 2 },
        { service: 'workload-manager', method: 'POST', status: 502, count: 2, afterCalls: 1 },
      ],
    ],
    [
      'boot service',
      [
        { service: 'boot-service', method: 'POST', status: 503, count: 2 },
        { service: 'boot-service', method: 'GET', status: 500, count: 3, afterCalls: 1 },
      ],
    ],
    [
      'inventory',
      [
        { service: 'inventory', method: 'POST', status: 503, count: 2 },
        { service: 'inventory', method: 'DELETE', status: 503, count: 2 },
        { service: 'inventory', method: 'GET', status: 500, count: 2, afterCalls: 3 },
      ],
    ],
  ] as const)('%s: its reads and writes answer 5xx for a while; the errors are reported, every node upgraded once', async (service, apiFaults) => {
    runtime = await startTestRuntime({ site: matrixSite(4, { apiFaults: [...apiFaults] }) });
    const ids = await upgradeCell(`${service} 5xx`, [upgradeRequest()]);
    expect(await observeUpgrades(runtime, ids)).toEqual([]);
    await expectAllUpgraded(ids);
    expect((await runtime.store.messages.list(ids[0]!)).filter((m) => / failed - /.test(m))).toContainEqual(expect.stringContaining('answered 5'));
  });

  it('inventory: a member DELETE answers 404 while the member stays; the node is not rebooted by the next step', async () => {
    runtime = await startTestRuntime({
      site: matrixSite(4, { apiFaults: [{ service: 'inventory', method: 'DELETE', path: '/groups/upgrading/', status: 404, count: 1 }] }),
    });
    const ids = await upgradeCell('inventory DELETE 404, member stays', [upgradeRequest()]);
    expect(await observeUpgrades(runtime, ids)).toEqual([]);
    await expectAllUpgraded(ids);
    for (let i = 0; i < 4; i++) expect(runtime.simulator.state().nodes[nodeName(i)]!.bootCount).toBe(1);
  });

  it('provisioner: starting and polling actions answer 503/500; each node prepared and deployed once', async () => {
    const cell = await deploymentCell('provisioner 5xx', [
      { service: 'provisioner', method: 'POST', status: 503, count: 3 },
      { service: 'provisioner', method: 'GET', status: 500, count: 2, afterCalls: 1 },
    ]);
    expect(cell).toEqual({ violations: [], stages: ['DEPLOYED', 'DEPLOYED', 'DEPLOYED', 'DEPLOYED'] });
  });
});

describe('fault matrix: site API calls that hang (the client times out)', () => {
  const hangs = (service: 'workload-manager' | 'boot-service' | 'inventory', method: 'GET' | 'POST' | 'DELETE', afterCalls = 0) => ({
    service,
    method,
    hang: true as const,
    count: 2,
    afterCalls,
  });

  it.each([
    ['workload manager', [hangs('workload-manager', 'GET', 2), hangs('workload-manager', 'POST', 1)]],
    ['boot service', [hangs('boot-service', 'POST'), hangs('boot-service', 'GET', 1)]],
    ['inventory', [hangs('inventory', 'GET', 3), hangs('inventory', 'POST'), hangs('inventory', 'DELETE')]],
  ] as const)('%s: hung calls are given up and retried; every node upgraded once', async (service, apiFaults) => {
    runtime = await startTestRuntime({ site: matrixSite(4, { apiFaults: [...apiFaults] }), connectors: quickTimeoutClients });
    const ids = await upgradeCell(`${service} hangs`, [upgradeRequest()]);
    expect(await observeUpgrades(runtime, ids)).toEqual([]);
    await expectAllUpgraded(ids);
    expect((await runtime.store.messages.list(ids[0]!)).some((m) => m.includes(`timed out after ${HANG_TIMEOUT_MS} ms`))).toBe(true);
  });

  it('provisioner: hung action starts and polls are given up and retried; each node prepared and deployed once', async () => {
    const cell = await deploymentCell(
      'provisioner hangs',
      [
        { service: 'provisioner', method: 'POST', hang: true, count: 2 },
        { service: 'provisioner', method: 'GET', hang: true, count: 2, afterCalls: 1 },
      ],
      { hangs: true },
    );
    expect(cell).toEqual({ violations: [], stages: ['DEPLOYED', 'DEPLOYED', 'DEPLOYED', 'DEPLOYED'] });
  });
});

describe('fault matrix: nodes in trouble', () => {
  it.each([
    ['boot fails', { boot: 'fail' as const }, {}, 'upgrading-boot-session-failed'],
    ['boot hangs', { boot: 'hang' as const }, { bootTimeoutSeconds: 60 }, 'upgrading-time-out-booting'],
    ['node never returns', { returnToService: 'never' as const }, { wlmReturnTimeoutSeconds: 60 }, 'upgrading-time-out-wlm-waiting'],
  ])('%s: the node is failed (site and record agree), the others upgraded', async (cell, faults, request, reason) => {
    runtime = await startTestRuntime({ site: matrixSite(4, { node: (i) => (i === 1 ? { faults } : {}) }) });
    const ids = await upgradeCell(cell, [upgradeRequest(request)]);
    expect(await observeUpgrades(runtime, ids)).toEqual([]);
    const nodes = await runtime.store.listNodes(ids[0]!);
    expect(nodes.filter((n) => n.status === 'FAILED')).toEqual([expect.objectContaining({ name: nodeName(1), reason })]);
  });
});

describe('fault matrix: a handler that dies between a site call and its store write', () => {
  // The call reached the site; the handler died before recording it; its ASL Retry runs the increment again.
  it.each([
    ['workloadManager.drainNodes', {}],
    ['bootService.createSession', {}],
    ['inventory.addGroupMembers', {}],
    ['inventory.removeGroupMembers', {}],
    ['workloadManager.resumeNodes', {}],
    ['workloadManager.failNodes', { faults: { boot: 'fail' as const } }],
  ])('after %s: the retried increment changes no node twice', async (call, node) => {
    const crashes: string[] = [];
    runtime = await startTestRuntime({
      site: matrixSite(4, { node: (i) => (i === 1 ? node : {}) }),
      connectors: (simulator) => crashingAfter(simulatedSiteClients(simulator), call, crashes),
    });
    const ids = await upgradeCell(`crash after ${call}`, [upgradeRequest()]);
    expect(crashes).toEqual([call]);
    expect(await observeUpgrades(runtime, ids)).toEqual([]);
    expect((await runtime.store.listNodes(ids[0]!)).filter((n) => n.status === 'FAILED').map((n) => n.name)).toEqual('faults' in node ? [nodeName(1)] : []);
  });

  it('after provisioner.startAction: the retried batch submits no node twice', async () => {
    const crashes: string[] = [];
    const cell = await deploymentCell('crash after provisioner.startAction', [], { crashAfter: 'provisioner.startAction', crashes });
    expect(crashes).toEqual(['provisioner.startAction']);
    expect(cell).toEqual({ violations: [], stages: ['DEPLOYED', 'DEPLOYED', 'DEPLOYED', 'DEPLOYED'] });
  });
});

describe("fault matrix: mode window (nodes in flight on their own, the annealer's scheduler)", () => {
  const windowRequest = upgradeRequest({ mode: 'window', maxUnavailable: 2 });

  it('boot service 5xx: every node upgraded once', async () => {
    runtime = await startTestRuntime({
      site: matrixSite(4, {
        apiFaults: [
          { service: 'boot-service', method: 'POST', status: 503, count: 2 },
          { service: 'boot-service', method: 'GET', status: 500, count: 3, afterCalls: 1 },
        ],
      }),
    });
    const ids = await upgradeCell('window: boot service 5xx', [windowRequest]);
    expect(await observeUpgrades(runtime, ids)).toEqual([]);
    await expectAllUpgraded(ids);
  });

  it.each(['workloadManager.drainNodes', 'bootService.createSession', 'workloadManager.resumeNodes'])(
    'a crash after %s: the retried increment changes no node twice',
    async (call) => {
      const crashes: string[] = [];
      runtime = await startTestRuntime({ site: matrixSite(4), connectors: (simulator) => crashingAfter(simulatedSiteClients(simulator), call, crashes) });
      const ids = await upgradeCell(`window: crash after ${call}`, [windowRequest]);
      expect(crashes).toEqual([call]);
      expect(await observeUpgrades(runtime, ids)).toEqual([]);
      await expectAllUpgraded(ids);
    },
  );
});

describe('fault matrix: sessions', () => {
  it('a session dies mid-step and its leases run out: a second session takes its nodes over and upgrades each once', async () => {
    runtime = await startTestRuntime({
      site: matrixSite(4, { node: (i) => (i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 300 } } : {}) }),
      settings: { lockLeaseSeconds: 300 },
    });
    const startedAt = runtime.clock.now();
    const dead = await runtime.run('rollingUpgrade', upgradeRequest());
    await eventually(runtime, async () => ((await runtime!.store.getSession(dead.id))?.progress.stage === 'QUIESCING' ? true : undefined), 'step 0 QUIESCING');
    const rt = runtime;
    await rt.clock.busy(async () => rt.engine.stop(dead.executionArn));
    expect((await dead.outcome).status).toBe('ABORTED');

    // Polls a minute apart: the wait for the lease to run out is five polls, not thirty.
    const taker = await runtime.run('rollingUpgrade', upgradeRequest({ pollIntervalSeconds: 60 }));
    const outcome = await taker.outcome;
    expect(outcome.status).toBe('SUCCEEDED');
    expect(await runtime.store.messages.list(taker.id)).toContainEqual(expect.stringContaining(`waits for nodes locked by session ${dead.id}`));
    await recordUpgrades('lease expiry, takeover', [taker.id], outcome, startedAt);
    // The dead session drained step 0; the taker drains those nodes again, with its own claim (the site then names
    // the session at work on them), and boots each once.
    expect(await observeUpgrades(runtime, [dead.id, taker.id])).toEqual([]);
    const nodes = runtime.simulator.state().nodes;
    expect([0, 1, 2, 3].map((i) => [nodes[nodeName(i)]!.drainCount, nodes[nodeName(i)]!.bootCount])).toEqual([
      [2, 1],
      [2, 1],
      [1, 1],
      [1, 1],
    ]);
  });

  it('two sessions over overlapping nodes: never both on a node, each shared node upgraded once per session', async () => {
    const a = [0, 1, 2, 3].map(nodeName);
    const b = [3, 2, 4, 5].map(nodeName);
    runtime = await startTestRuntime({
      site: matrixSite(6, {
        groups: { a, b, upA: [], upB: [], failA: [], failB: [] },
        node: (i) => (i === 2 ? { wlm: { state: 'ALLOCATED', busySeconds: 300 } } : {}),
      }),
    });
    const common = { upgradeStepSize: 2, pollIntervalSeconds: 60 };
    const ids = await upgradeCell('two overlapping sessions', [
      upgradeRequest({ ...common, startingLabel: 'a', upgradingLabel: 'upA', failedLabel: 'failA' }),
      upgradeRequest({ ...common, startingLabel: 'b', upgradingLabel: 'upB', failedLabel: 'failB' }),
    ]);
    expect(await observeUpgrades(runtime, ids)).toEqual([]);
    for (const name of [2, 3].map(nodeName)) expect(runtime.simulator.state().nodes[name]!.bootCount).toBe(2);
  });
});

describe('fault matrix: runs of other workflows, and of another control plane, over the same nodes', () => {
  /** Every node of role compute drained, rebooted into img-2 and resumed (Fuel tasks over the site's services). */
  const REBOOT_GRAPH = {
    tasks: [
      { id: 'drain', type: 'drain', role: ['compute'] },
      { id: 'reboot', type: 'reboot', role: ['compute'], requires: ['drain'], parameters: { template: 'img-2' } },
      { id: 'resume', type: 'resume', role: ['compute'], requires: ['reboot'] },
    ],
  };
  /** Compute nodes with the matrix's quick boots, and provisioner actions of 30 s. */
  const computeSite = (count: number) =>
    buildSite(count, { node: () => ({ roles: ['compute'] }), timing: { ...QUICK_SITE_TIMING, prepareSeconds: 30, deploySeconds: 30 } });

  it('an upgrade, a deployment and a drain/reboot/resume task graph started together: one run at a time on each node, the others wait naming the holder', async () => {
    runtime = await startTestRuntime({ site: computeSite(4) });
    const startedAt = runtime.clock.now();
    const names = [0, 1, 2, 3].map(nodeName);
    const [upgrade, deployment, tasks] = await Promise.all([
      runtime.run('rollingUpgrade', upgradeRequest()),
      runtime.run('groupDeployment', { strategy: { groups: [groupOf('all', names)] }, ...QUICK_POLL }),
      runtime.run('taskGraph', { graph: REBOOT_GRAPH, pollIntervalSeconds: 10 }),
    ]);
    const outcomes = await Promise.all([upgrade.outcome, deployment.outcome, tasks.outcome]);
    expect(outcomes.map((o) => o.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(await observeMixedRuns(runtime, { upgrades: [upgrade.id], deployments: [deployment.id], taskRuns: [tasks.id] })).toEqual([]);
    // Every node changed by all three, one after the other.
    for (const name of names)
      expect(
        new Set(
          runtime.simulator
            .state()
            .changes.filter((c) => c.node === name)
            .map((c) => c.by?.slice(0, 8)),
        ).size,
      ).toBe(3);
    // Whoever waited said for whom.
    const said = [
      ...(await runtime.store.messages.list(upgrade.id)),
      ...(await runtime.deployments.messages.list(deployment.id)),
      ...(await runtime.taskRuns.messages.list(tasks.id)),
    ];
    expect(said.filter((m) => /locked by (run|session) [0-9a-f-]{36}/.test(m)).length).toBeGreaterThan(0);
    record('other workflows on the same nodes', outcomes[0]!, { 'upgraded+deployed+tasks': 4 }, startedAt);
  });

  it("an environment upgrade and a task graph rebooting the same nodes: the environment upgrade's rolling upgrades and the task run take turns on each node", async () => {
    runtime = await startTestRuntime({ site: buildCloudSite((name) => (CLOUD_NODES.some((n) => n.name === name) ? { roles: ['compute'] } : {})) });
    const startedAt = runtime.clock.now();
    const [environment, tasks] = await Promise.all([
      runtime.startEnvironmentUpgrade({ environmentId: 5, request: environmentUpgradeRequest() }),
      runtime.run('taskGraph', { graph: REBOOT_GRAPH, pollIntervalSeconds: 10 }),
    ]);
    const outcomes = await Promise.all([environment.outcome, tasks.outcome]);
    expect(outcomes.map((o) => o.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    const upgrade = (await runtime.environmentUpgrades.getUpgrade(environment.id))!.session;
    expect(upgrade).toMatchObject({ state: 'READY', completed: true });
    const children = [upgrade.progress.controllers?.upgradeId, upgrade.progress.nodes?.upgradeId].filter((id): id is string => id !== undefined);
    expect(children).toHaveLength(2);
    expect(await observeMixedRuns(runtime, { upgrades: children, taskRuns: [tasks.id] })).toEqual([]);
    for (const { name } of CLOUD_NODES) expect({ name, booted: runtime.simulator.state().nodes[name]!.bootCount }).toEqual({ name, booted: 2 });
    record('environment upgrade and task graph on the same nodes', outcomes[0]!, { 'upgraded+tasks': CLOUD_NODES.length }, startedAt);
  });

  it('two control planes (two stores) upgrade the same nodes at once: never both on a node; a node the other claims is left alone (held-by-another-control-plane)', async () => {
    runtime = await startTestRuntime({ site: computeSite(4) });
    const site = runtime.simulator;
    const other = await Runtime.start({ connectedSite: { connect: async () => ({ site: simulatedSiteClients(site) }), clock: runtime.clock } });
    try {
      const startedAt = runtime.clock.now();
      const [a, b] = await Promise.all([runtime.run('rollingUpgrade', upgradeRequest()), other.run('rollingUpgrade', upgradeRequest())]);
      const outcomes = await Promise.all([a.outcome, b.outcome]);
      expect(outcomes.map((o) => o.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
      const recordsA = await runtime.store.listNodes(a.id);
      const recordsB = await other.store.listNodes(b.id);
      const state = site.state();
      let leftAlone = 0;
      for (const name of [0, 1, 2, 3].map(nodeName)) {
        const mine = [recordsA.find((r) => r.name === name), recordsB.find((r) => r.name === name)];
        const upgradedBy = mine.filter((r) => r?.status === 'UPGRADED').length;
        leftAlone += mine.filter((r) => r?.reason === HELD_BY_ANOTHER_CONTROL_PLANE).length;
        // Upgraded by one of them at least; booted once by each that upgraded it (one after the other: the
        // second found it back in service, unclaimed); every other record of it says why it was left alone.
        expect({
          name,
          upgradedBy: upgradedBy > 0,
          booted: state.nodes[name]!.bootCount,
          others: mine.filter((r) => r && r.status !== 'UPGRADED' && r.reason !== HELD_BY_ANOTHER_CONTROL_PLANE),
        }).toEqual({
          name,
          upgradedBy: true,
          booted: upgradedBy,
          others: [],
        });
        expect(state.nodes[name]!.wlmState).toBe('IDLE');
      }
      // Both started on step 0 at one instant: one of them found the other's claim and left those nodes alone.
      expect(leftAlone).toBeGreaterThan(0);
      expect(interleavedRuns(state.changes)).toEqual([]);
      expect(state.violations).toEqual([]);
      const said = [...(await runtime.store.messages.list(a.id)), ...(await other.store.messages.list(b.id))];
      expect(said).toContainEqual(expect.stringContaining(`left alone, ${HELD_BY_ANOTHER_CONTROL_PLANE}`));
      expect(await runtime.store.locks.getLockOwners([0, 1, 2, 3].map(nodeName))).toEqual(new Map());
      expect(await other.store.locks.getLockOwners([0, 1, 2, 3].map(nodeName))).toEqual(new Map());
      figures.push({
        cell: 'two control planes, one site',
        outcome: 'SUCCEEDED',
        nodes: `${recordsA.filter((r) => r.status === 'UPGRADED').length} + ${recordsB.filter((r) => r.status === 'UPGRADED').length} upgraded`,
        simulatedSeconds: Math.round((runtime.clock.now() - startedAt) / 1000),
        errorsReported: undefined,
      });
    } finally {
      await other.close();
    }
  });

  it('a task run whose execution dies mid-reboot (kill -9) is resumed: no node rebooted twice, none left drained', async () => {
    runtime = await startTestRuntime({ site: computeSite(4) });
    const startedAt = runtime.clock.now();
    const dead = await runtime.run('taskGraph', { graph: REBOOT_GRAPH, pollIntervalSeconds: 10 });
    const rt = runtime;
    await eventually(rt, async () => (Object.values(rt.simulator.state().nodes).some((n) => n.bootCount > 0) ? true : undefined), 'a reboot under way');
    await rt.clock.busy(async () => rt.engine.stop(dead.executionArn));
    expect((await dead.outcome).status).toBe('ABORTED');
    const resumed = await runtime.run('taskGraph', { resumeRunId: dead.id });
    const outcome = await resumed.outcome;
    expect(outcome.status).toBe('SUCCEEDED');
    expect(await observeMixedRuns(runtime, { taskRuns: [dead.id] })).toEqual([]);
    for (const node of Object.values(runtime.simulator.state().nodes)) expect([node.bootCount, node.drainCount, node.wlmState]).toEqual([1, 1, 'IDLE']);
    record('task run killed mid-reboot, resumed', outcome, { 'tasks done': 4 }, startedAt);
  });

  it('a task run cancelled mid-run starts no task after it, lets its reboots finish and lifts its own drains', async () => {
    runtime = await startTestRuntime({ site: computeSite(4) });
    const startedAt = runtime.clock.now();
    const run = await runtime.run('taskGraph', { graph: REBOOT_GRAPH, pollIntervalSeconds: 10, maxInTransition: 2 });
    const rt = runtime;
    await eventually(rt, async () => (Object.values(rt.simulator.state().nodes).some((n) => n.bootCount > 0) ? true : undefined), 'a reboot under way');
    expect(await rt.clock.busy(() => rt.cancel(run.id))).toMatchObject({ kind: 'tasks', state: 'CANCELLING' });
    const outcome = await run.outcome;
    expect(outcome.status).toBe('SUCCEEDED');
    const view = (await runtime.taskRun(run.id))!;
    expect(view.status).toBe('CANCELLED');
    const state = runtime.simulator.state();
    // The nodes it had started kept going to the end of their reboot; none is left drained; the others were never touched.
    for (const [name, node] of Object.entries(state.nodes)) {
      // Not drained (a node it rebooted may still be on its way back: DOWN* until slurmd registers).
      expect({ name, drained: /DRAIN/.test(node.wlmState), reason: node.wlmReason }).toEqual({ name, drained: false, reason: undefined });
      expect(node.bootCount).toBeLessThanOrEqual(1);
    }
    expect(Object.values(state.nodes).filter((n) => n.drainCount === 0).length).toBeGreaterThan(0);
    expect(interleavedRuns(state.changes)).toEqual([]);
    expect(await runtime.store.locks.getLockOwners(Object.keys(state.nodes))).toEqual(new Map());
    expect(await runtime.taskRuns.messages.list(run.id)).toContainEqual(expect.stringMatching(/^Cancelled: /));
    record('task run cancelled mid-reboot', outcome, { CANCELLED: 1 }, startedAt);
  });
});

describe('fault matrix: SSM calls that get no answer (the client gives up at its timeout and says so)', () => {
  /** The site a `rollout simulate --transport ssm` profile drives (scontrol, slurm-reboot, the slurm inventory over SSM), each SSM call given up after 250 ms. */
  const quickSsm = profileConnectors((urls) => {
    const profile = siteProfileFor(urls, 'ssm', 1);
    return { ...profile, transport: { ...(profile.transport as object), requestTimeoutSeconds: HANG_TIMEOUT_MS / 1000 } } as typeof profile;
  });

  it('SendCommand and GetCommandInvocation get no answer (×2 each): the stalled call is given up, said at once, and retried; every node upgraded once', async () => {
    runtime = await startTestRuntime({
      site: matrixSite(4, {
        apiFaults: [
          { service: 'ssm', method: 'POST', path: 'GetCommandInvocation', hang: true, count: 2, afterCalls: 6 },
          { service: 'ssm', method: 'POST', path: 'SendCommand', hang: true, count: 2, afterCalls: 10 },
        ],
      }),
      connectors: quickSsm,
    });
    const ids = await upgradeCell('SSM hangs', [upgradeRequest()]);
    expect(await observeUpgrades(runtime, ids)).toEqual([]);
    await expectAllUpgraded(ids);
    const said = await runtime.store.messages.list(ids[0]!);
    expect(said).toContainEqual(
      expect.stringMatching(/failed - .*SSM (GetCommandInvocation|SendCommand) .* timed out after 250 ms: the SSM endpoint did not answer/),
    );
  });

  it('a cancel asked for while an SSM call stalls is acted on at once after the call is given up, not after a backoff', async () => {
    const silent = await startSilentEndpoint();
    const stalled: string[] = [];
    let cancelDuringStall: (() => Promise<void>) | undefined;
    try {
      runtime = await startTestRuntime({
        // A job on n001 keeps step 0 quiescing for a while: the cancel comes then.
        site: matrixSite(4, { node: (i) => (i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 60 } } : {}) }),
        connectors: (simulator) => {
          const ssm = (endpoint: string) =>
            new SsmTransport({
              instanceIds: [HEAD_NODE_INSTANCE_ID],
              region: 'local',
              endpoint,
              credentials: { accessKeyId: 's', secretAccessKey: 's' },
              pollIntervalMs: 2,
              maxPollIntervalMs: 10,
              requestTimeoutMs: HANG_TIMEOUT_MS,
            });
          const site = ssm(simulator.urls.ssm);
          const dead = ssm(silent.url);
          // The first scontrol call once a cancel is armed goes to an SSM endpoint that never answers; the cancel is asked for as it stalls.
          const transport: CommandTransport = {
            run: async (script, options) => {
              const arm = cancelDuringStall;
              if (!arm || stalled.length > 0) return site.run(script, options);
              stalled.push(script);
              const call = dead.run(script, options);
              await arm();
              return call;
            },
            start: (script, options) => site.start(script, options),
            poll: (id) => site.poll(id),
            findStarted: (tag, since) => site.findStarted(tag, since),
          };
          // On the site's clock, as the product's connectors build it: on the system clock its compact listing, reused for
          // 500 ms, was reused across ~50 polls of virtual time, and the cancel came after the job had ended.
          return { ...simulatedSiteClients(simulator), workloadManager: new ScontrolWorkloadManager({ transport, clock: simulator.simulator.clock }) };
        },
      });
      const startedAt = runtime.clock.now();
      const run = await runtime.run('rollingUpgrade', upgradeRequest());
      const rt = runtime;
      await eventually(rt, async () => ((await rt.store.getSession(run.id))?.progress.stage === 'QUIESCING' ? true : undefined), 'step 0 QUIESCING');
      let cancelledAt = 0;
      cancelDuringStall = async () => {
        cancelledAt = rt.clock.now();
        await rt.store.requestCancel(run.id);
      };
      const cancelling = await eventually(
        rt,
        async () => {
          const session = await rt.store.getSession(run.id);
          return session?.progress.stage === 'CANCELLING' || session?.progress.stage === 'CLEANUP' || session?.progress.stage === 'COMPLETE'
            ? rt.clock.now()
            : undefined;
        },
        'the cancel acted on',
      );
      const outcome = await run.outcome;
      expect(outcome.status).toBe('SUCCEEDED');
      expect(stalled).toHaveLength(1);
      expect((await runtime.store.getSession(run.id))?.state).toBe('DELETED');
      // Said at once, and the cancel acted on at the same simulated instant (no backoff after the stalled call).
      expect(await runtime.store.messages.list(run.id)).toContainEqual(
        expect.stringMatching(/failed - .*SSM (SendCommand|GetCommandInvocation) .* timed out after 250 ms: the SSM endpoint did not answer/),
      );
      expect(cancelling - cancelledAt).toBe(0);
      // The CRUS deletion rules for a cancel during a step (resume-step): the step's nodes, not booting yet, get their
      // drain lifted and stay NOT_STARTED; the rest of the plan is not touched. None booted, none left locked.
      const records = await runtime.store.listNodes(run.id);
      const state = runtime.simulator.state();
      expect(records.map((r) => [r.name, r.status])).toEqual([
        [nodeName(0), 'NOT_STARTED'],
        [nodeName(1), 'NOT_STARTED'],
      ]);
      expect([0, 1, 2, 3].map((i) => [state.nodes[nodeName(i)]!.wlmState, state.nodes[nodeName(i)]!.bootCount])).toEqual([
        ['IDLE', 0],
        ['ALLOCATED', 0],
        ['IDLE', 0],
        ['IDLE', 0],
      ]);
      expect(interleavedRuns(state.changes)).toEqual([]);
      expect(await runtime.store.locks.getLockOwners([0, 1, 2, 3].map(nodeName))).toEqual(new Map());
      record(
        'SSM call stalls, cancel meanwhile',
        outcome,
        { cancelled: 1 },
        startedAt,
        (await runtime.store.messages.list(run.id)).filter((m) => / failed - /.test(m)).length,
      );
    } finally {
      await silent.close();
    }
  });
});
