import { randomStream, type Random } from '../../simulator/seeded-random';
import type { SiteDefinitionInput } from '../../simulator';

/**
 * A scenario: one rolling upgrade drawn from a seed (the workflow's controls, the connectors, the
 * site's nodes, jobs and faults, and what an operator does at which moment). The same seed draws the
 * same scenario on every host: `npm run scenarios -- --seed S --count 1` replays it.
 */

/** How the workflows reach the simulated site: slurmrestd + BOS + HSM over HTTP, or scontrol + `scontrol reboot` + the Slurm inventory over SSM. */
export type ScenarioConnectors = 'http' | 'ssm';

export interface ScenarioNode {
  name: string;
  rack: string;
  /** In the starting group: part of the request. Outside: in a group of its own, never to be touched. */
  inRequest: boolean;
  /** Seconds left on its job at the start (Infinity: a job that never ends); absent: idle. */
  busySeconds?: number;
  /** Seconds to the job's time limit (what Slurm reports as its end), at least busySeconds. */
  timeLimitSeconds?: number;
  /** Drained by an admin before the run, with this reason. */
  adminDrain?: string;
  bootFault?: 'fail' | 'hang';
  neverReturns?: boolean;
  healthCheckFails?: boolean;
}

export type OperatorActionKind =
  /** `rollout session stop` (the embedded CLI's first Ctrl-C is the same request). */
  | 'stop'
  /** `rollout session cancel --yes`. */
  | 'cancel'
  /** The process dies (kill -9): the execution ends without a word. */
  | 'kill'
  /** An admin drains a node of the request with a reason of their own. */
  | 'admin-drain'
  /** `systemctl restart slurmctld` (SSM connectors: the head node's controller). */
  | 'restart-slurmctld'
  /** `scontrol reconfigure`. */
  | 'reconfigure'
  /** The site relay dies (site events): no firing is delivered from then on. */
  | 'kill-relay'
  /** The site relay is back: it delivers the firings from then on (those while it was dead are lost). */
  | 'restart-relay'
  /** The next `count` firings are lost (slurmctld never ran the relay: TriggerManagerModel.faults.loseFirings). */
  | 'lose-firings'
  /** The relay's program fails at every firing from then on (slurmctld only logs it: faults.failProgram). */
  | 'fail-relay-program'
  /** The relay's program runs again. */
  | 'fix-relay-program';

export interface OperatorAction {
  kind: OperatorActionKind;
  /** Simulated seconds after the run's start (taken at the first instant the run waits at or after it). */
  atSeconds: number;
  /** admin-drain: the node and its reason. */
  node?: string;
  reason?: string;
  /** stop, kill: `rollout session resume` afterwards. */
  resume?: boolean;
  /** stop, cancel, kill: taken at the first instant at or after atSeconds that the workflow is parked for the site's events. */
  whileParked?: boolean;
  /** lose-firings: how many. */
  count?: number;
}

/**
 * The site's triggers armed (issue 29): the session sets them at its start, its waits for nodes are resumed by
 * their firings through the relay (in process), a backstop poll behind them. The relay's faults are operator
 * actions at their moments (kill-relay, restart-relay, lose-firings, fail-relay-program, fix-relay-program).
 */
export interface ScenarioSiteEvents {
  /** The profile's siteEvents.backstopSeconds; absent: the default (10 polls). */
  backstopSeconds?: number;
  /** Each firing the relay delivered is delivered again (a spool retried after a lost answer), with this probability, afterSeconds later. */
  deliveredTwice?: { share: number; afterSeconds: number };
}

export interface UpgradeScenario {
  seed: number;
  workflow: 'rolling-upgrade';
  connectors: ScenarioConnectors;
  slurmVersion: string;
  nodes: ScenarioNode[];
  timing: { bootSeconds: number; returnSeconds: number };
  /** Jobs keep arriving on nodes in service. */
  workload?: NonNullable<SiteDefinitionInput['workload']>;
  apiFaults: NonNullable<SiteDefinitionInput['apiFaults']>;
  request: Record<string, unknown>;
  operator: OperatorAction[];
  /** The site's triggers armed; absent: every wait is a poll. */
  siteEvents?: ScenarioSiteEvents;
}

export type Scenario = UpgradeScenario;

/** Reasons an admin gives a drain: plain, with Slurm-like colons, one that begins with our prefix but names no run (issue 26 item 4), non-ASCII. */
export const ADMIN_REASONS = [
  'bad DIMM slot 3',
  'hw: fan : replaced',
  'rolling-upgrade',
  'rolling-upgrade maintenance by bob',
  'ticket #4521 – ünïcode',
  'rollout-task check later',
  'Not responding',
] as const;

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const int = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const chance = (random: Random, p: number) => random() < p;

/** The scenario of `seed`. */
export function generateScenario(seed: number): Scenario {
  const random = randomStream(seed, 'scenario');
  // Over SSM every Slurm call is a command through the AWS SDK to the head node: ten times the real time of HTTP, so a quarter of the draws.
  const connectors: ScenarioConnectors = chance(random, 0.75) ? 'http' : 'ssm';
  // slurmrestd on 22.05 cannot update nodes: the HTTP connectors need 24.11 or later.
  const slurmVersion = connectors === 'http' ? pick(random, ['24.11.5', '26.05.0']) : pick(random, ['22.05.8', '24.11.5', '26.05.0']);
  const count = int(random, 3, 10);
  const outside = int(random, 0, 2);
  const racks = int(random, 1, 3);
  const mode = chance(random, 0.4) ? 'lockstep' : 'window';
  const pollIntervalSeconds = pick(random, [10, 30, 60]);
  const quiesceTimeoutSeconds = pick(random, [1800, 3600]);
  const timing = { bootSeconds: int(random, 20, 120), returnSeconds: int(random, 5, 30) };
  const bootTimeoutSeconds = timing.bootSeconds + int(random, 120, 600);
  const wlmReturnTimeoutSeconds = timing.returnSeconds + int(random, 120, 600);
  const healthCheck = chance(random, 0.1);

  const nodes: ScenarioNode[] = [];
  for (let i = 0; i < count + outside; i++) {
    const node: ScenarioNode = { name: `n${String(i).padStart(2, '0')}`, rack: `r${i % racks}`, inRequest: i < count };
    if (chance(random, 0.35)) {
      const neverEnds = chance(random, 0.08);
      // Most jobs end within the quiesce timeout; some outlast it (a failure of the site's making).
      node.busySeconds = neverEnds ? Infinity : chance(random, 0.1) ? quiesceTimeoutSeconds + int(random, 60, 600) : int(random, 20, 1500);
      // Jobs that end before their limit (Slurm reports only the limit), or run to it.
      if (!neverEnds && chance(random, 0.5)) node.timeLimitSeconds = Math.round(node.busySeconds * (1.2 + random() * 2));
    }
    if (chance(random, 0.12)) node.adminDrain = pick(random, ADMIN_REASONS);
    if (chance(random, 0.08)) node.bootFault = chance(random, 0.7) ? 'fail' : 'hang';
    else if (chance(random, 0.06)) node.neverReturns = true;
    if (healthCheck && chance(random, 0.3)) node.healthCheckFails = true;
    nodes.push(node);
  }

  const request: Record<string, unknown> = {
    startingLabel: 'compute',
    upgradingLabel: 'upgrading',
    failedLabel: 'failed',
    upgradeStepSize: int(random, 1, 4),
    upgradeTemplateId: 'img-2',
    workloadManagerType: 'slurm',
    pollIntervalSeconds,
    quiesceTimeoutSeconds,
    bootTimeoutSeconds,
    wlmReturnTimeoutSeconds,
    mode,
  };
  if (healthCheck) request.healthCheck = { command: 'ssh {node} nhc' };
  if (chance(random, 0.25)) request.maxFailed = chance(random, 0.5) ? int(random, 0, 2) : pick(random, ['20%', '50%']);
  let neverOpens = false;
  if (mode === 'window') {
    request.maxUnavailable = chance(random, 0.75) ? int(random, 1, 4) : pick(random, ['25%', '50%']);
    request.order = pick(random, ['plan', 'idle-first']);
    if (chance(random, 0.3)) request.maxUnavailablePerRack = int(random, 1, 2);
    if (chance(random, 0.3)) request.drainAhead = int(random, 1, 3);
    if (chance(random, 0.15)) request.reserveSlots = true;
    if (chance(random, 0.3)) {
      request.batches = chance(random, 0.5) ? [1] : [1, '25%'];
      if (chance(random, 0.5)) request.bakeSeconds = int(random, 30, 300);
    }
    if (chance(random, 0.08)) request.maintenanceWindows = [{ cron: pick(random, ['*/20 * * * *', '30 */2 * * *']), durationMinutes: int(random, 5, 15) }];
    else if (chance(random, 0.02)) {
      request.maintenanceWindows = [{ cron: '0 0 30 2 *', durationMinutes: 60 }];
      // The run is ended after 3 simulated hours of silence: fewer polls to get there.
      request.pollIntervalSeconds = 60;
      neverOpens = true;
    }
  }

  const apiFaults: UpgradeScenario['apiFaults'] = [];
  if (chance(random, 0.3)) {
    const services = connectors === 'http' ? (['workload-manager', 'boot-service', 'inventory'] as const) : (['ssm'] as const);
    for (let k = int(random, 1, 2); k > 0; k--) {
      apiFaults.push({ service: pick(random, services), status: pick(random, [500, 503]), count: int(random, 1, 3), afterCalls: int(random, 0, 30) });
    }
  }

  const operator: OperatorAction[] = [];
  const inRequest = nodes.filter((n) => n.inRequest);
  if (chance(random, 0.5)) {
    const kind = pick(random, ['stop', 'stop', 'cancel', 'kill'] as const);
    operator.push({ kind, atSeconds: int(random, 0, 1500), ...(kind === 'cancel' ? {} : { resume: chance(random, 0.85) }) });
  }
  if (chance(random, 0.15))
    operator.push({ kind: 'admin-drain', atSeconds: int(random, 0, 1200), node: pick(random, inRequest).name, reason: pick(random, ADMIN_REASONS) });
  if (connectors === 'ssm' && chance(random, 0.15))
    operator.push({ kind: pick(random, ['restart-slurmctld', 'reconfigure'] as const), atSeconds: int(random, 0, 1200) });
  const siteEvents = drawSiteEvents(seed, operator, neverOpens);
  operator.sort((a, b) => a.atSeconds - b.atSeconds);

  return {
    seed,
    workflow: 'rolling-upgrade',
    connectors,
    slurmVersion,
    nodes,
    timing,
    // Jobs that keep arriving are simulated up to the instant the clock jumps to: not with a window that never opens, whose wait jumps it far ahead.
    ...(chance(random, 0.25) && !neverOpens
      ? { workload: { utilisation: 0.3 + random() * 0.4, jobSeconds: { median: 300, sigma: 1, max: 2400 }, seed, endFraction: { min: 0.3, max: 1 } } }
      : {}),
    apiFaults,
    request,
    operator,
    ...(siteEvents ? { siteEvents } : {}),
  };
}

/**
 * The site-events dimension of a seed, from a stream of its own (the rest of the scenario is drawn as before it
 * existed): about a third of the upgrades arm the site's triggers, some with a backstop of their own; the relay
 * killed (and some brought back), firings lost, its program failing for a while, firings delivered twice; and,
 * where the scenario's operator does nothing else, a stop, cancel or kill while the workflow is parked for the site.
 * Adds its actions to `operator`.
 */
function drawSiteEvents(seed: number, operator: OperatorAction[], neverOpens: boolean): ScenarioSiteEvents | undefined {
  const random = randomStream(seed, 'site-events');
  if (neverOpens || !chance(random, 0.35)) return undefined;
  const siteEvents: ScenarioSiteEvents = {};
  if (chance(random, 0.5)) siteEvents.backstopSeconds = pick(random, [60, 120, 300]);
  if (chance(random, 0.4)) siteEvents.deliveredTwice = { share: pick(random, [0.3, 1]), afterSeconds: pick(random, [0, 0, 5, 60]) };
  if (chance(random, 0.3)) {
    const at = int(random, 0, 1500);
    operator.push({ kind: 'kill-relay', atSeconds: at });
    if (chance(random, 0.6)) operator.push({ kind: 'restart-relay', atSeconds: at + int(random, 60, 1200) });
  }
  if (chance(random, 0.2)) operator.push({ kind: 'lose-firings', atSeconds: int(random, 0, 1500), count: int(random, 1, 5) });
  if (chance(random, 0.15)) {
    const at = int(random, 0, 1500);
    operator.push({ kind: 'fail-relay-program', atSeconds: at });
    if (chance(random, 0.7)) operator.push({ kind: 'fix-relay-program', atSeconds: at + int(random, 60, 900) });
  }
  const ends = operator.some((a) => a.kind === 'stop' || a.kind === 'cancel' || a.kind === 'kill');
  if (!ends && chance(random, 0.4)) {
    const kind = pick(random, ['stop', 'stop', 'cancel', 'kill'] as const);
    operator.push({ kind, atSeconds: int(random, 0, 1500), whileParked: true, ...(kind === 'cancel' ? {} : { resume: chance(random, 0.85) }) });
  }
  return siteEvents;
}

/** The simulated site of a scenario. */
export function scenarioSite(scenario: Scenario): SiteDefinitionInput {
  const requestNodes = scenario.nodes.filter((n) => n.inRequest).map((n) => n.name);
  const others = scenario.nodes.filter((n) => !n.inRequest).map((n) => n.name);
  return {
    nodes: scenario.nodes.map((n, i) => {
      const busy = n.busySeconds !== undefined;
      const state = n.adminDrain !== undefined ? (busy ? 'DRAINING' : 'DRAINED') : busy ? 'ALLOCATED' : 'IDLE';
      return {
        name: n.name,
        nid: i + 1,
        rack: n.rack,
        wlm: {
          state,
          ...(busy && Number.isFinite(n.busySeconds) ? { busySeconds: n.busySeconds } : {}),
          ...(n.timeLimitSeconds !== undefined ? { timeLimitSeconds: n.timeLimitSeconds } : {}),
          ...(n.adminDrain !== undefined ? { reason: n.adminDrain } : {}),
        },
        faults: {
          ...(n.bootFault ? { boot: n.bootFault } : {}),
          ...(n.neverReturns ? { returnToService: 'never' as const } : {}),
          ...(n.healthCheckFails ? { healthCheck: 'fail' as const } : {}),
        },
      };
    }),
    groups: { compute: requestNodes, upgrading: [], failed: [], ...(others.length > 0 ? { other: others } : {}) },
    bootTemplates: ['img-1', 'img-2'],
    timing: scenario.timing,
    apiFaults: scenario.apiFaults,
    ...(scenario.workload ? { workload: scenario.workload } : {}),
    slurm: { version: scenario.slurmVersion },
  };
}

/** One line that says what the scenario is, for a report. */
export function describeScenario(scenario: Scenario): string {
  const r = scenario.request;
  const controls = [
    'mode',
    'upgradeStepSize',
    'maxUnavailable',
    'order',
    'maxUnavailablePerRack',
    'drainAhead',
    'reserveSlots',
    'batches',
    'bakeSeconds',
    'maxFailed',
    'maintenanceWindows',
    'healthCheck',
  ]
    .filter((k) => r[k] !== undefined && !(r.mode === 'window' && k === 'upgradeStepSize'))
    .map((k) => `${k}=${JSON.stringify(r[k])}`);
  const site = scenario.nodes
    .filter((n) => n.busySeconds !== undefined || n.adminDrain !== undefined || n.bootFault || n.neverReturns || n.healthCheckFails || !n.inRequest)
    .map(
      (n) =>
        `${n.name}${n.inRequest ? '' : '(outside)'}:` +
        [
          n.busySeconds !== undefined ? `busy ${n.busySeconds}${n.timeLimitSeconds ? `/${n.timeLimitSeconds}` : ''}` : '',
          n.adminDrain !== undefined ? `admin '${n.adminDrain}'` : '',
          n.bootFault ? `boot ${n.bootFault}` : '',
          n.neverReturns ? 'never returns' : '',
          n.healthCheckFails ? 'nhc fails' : '',
        ]
          .filter(Boolean)
          .join(','),
    );
  const operator = scenario.operator.map(
    (a) =>
      `${a.kind}@${a.atSeconds}s${a.whileParked ? '(parked)' : ''}${a.count !== undefined ? ` x${a.count}` : ''}${a.node ? ` ${a.node} '${a.reason}'` : ''}${a.resume ? '+resume' : ''}`,
  );
  const events = scenario.siteEvents;
  return [
    `seed ${scenario.seed}: ${scenario.connectors} Slurm ${scenario.slurmVersion}, ${scenario.nodes.filter((n) => n.inRequest).length} nodes`,
    controls.join(' '),
    site.length ? `site ${site.join(' ')}` : '',
    events
      ? `site triggers armed (backstop ${events.backstopSeconds ?? 'default'}${events.deliveredTwice ? `, ${events.deliveredTwice.share * 100}% delivered twice +${events.deliveredTwice.afterSeconds}s` : ''})`
      : '',
    scenario.workload ? 'jobs keep arriving' : '',
    scenario.apiFaults.length ? `api faults ${scenario.apiFaults.map((f) => `${f.service}:${f.status}x${f.count}@${f.afterCalls}`).join(',')}` : '',
    operator.length ? `operator ${operator.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}
