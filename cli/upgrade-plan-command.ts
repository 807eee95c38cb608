import type { Command } from 'commander';
import { Option } from 'commander';
import { createSiteFromProfile } from '../adapters/site';
import { simulatedSiteClients } from '../local/simulated-site-clients';
import { parseUpgradeRequest } from '../core/rolling-upgrade/upgrade-request';
import { planUpgrade, type UpgradePlan } from '../core/rolling-upgrade/upgrade-plan';
import { readPlanSite } from '../lambdas/activities/rolling-upgrade/plan-site';
import { stepText } from '../core/rolling-upgrade/step-plan';
import type { Site } from '../ports/site';
import { SimClock, startSiteSimulator } from '../simulator';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';
import { numberOrRaw } from './option-values';
import { loadSiteSource, type SiteSourceOptions } from './site-source';
import { checkUpgradeGroups } from './upgrade-groups';
import { addUpgradeRequestOptions, requestFrom, type UpgradeRequestOptions } from './commands/upgrade';
import { formatDuration, formatOffset, simulatedInstant, type ShownInstant } from '../core/time-format';
import { namingFlags, UPGRADE_REQUEST_FLAGS } from './request-flags';

/**
 * `rollout plan upgrade`: the steps or waves an upgrade would take, node by node, on the site as it
 * is now (core/rolling-upgrade/upgrade-plan.ts: the workflow's scheduler run forward), read through
 * the same connectors the workflow uses: the built-in simulated site is started in-process for the
 * reads (`--site`), a profile's services are asked (`--site-config`). Nothing is changed.
 */

interface PlanUpgradeOptions extends UpgradeRequestOptions, SiteSourceOptions {
  serviceEstimate?: string;
  json?: boolean;
  format?: 'text' | 'json' | 'mermaid';
}

/** Seconds a node is out of service once quiet, on a real site, unless told (a reboot and a return to Slurm). */
const DEFAULT_SERVICE_SECONDS = 600;
/** Nodes listed per wave in the text plan (all of them with --json). */
const LISTED_PER_WAVE = 12;

export function registerPlanUpgradeCommand(plan: Command): void {
  addUpgradeRequestOptions(
    plan
      .command('upgrade')
      .description(
        "Show the steps (lock-step) or waves (window) a rolling upgrade would take on the site as it is now: node by node, each wave's estimated start and end from the running jobs' ends, and what holds each node back (busy, admin-drained, unavailable, rack caps, maintenance windows)",
      )
      .option('--site <file>', 'simulated site file (YAML or JSON)')
      .addOption(new Option('--site-config <file>', 'site connection profile: plan against the services it names').conflicts('site')),
  )
    .option(
      '--service-estimate <seconds>',
      `how long a node is out of service once drained and idle (its reboot and return); default: the site file's boot and return timing, or ${DEFAULT_SERVICE_SECONDS} s for a real site`,
    )
    .addOption(new Option('--json', 'print the plan as one JSON object (same as --format json)').conflicts('format'))
    .addOption(new Option('--format <format>', 'text, json, or mermaid (a Gantt chart of the waves)').choices(['text', 'json', 'mermaid']))
    .action(async (options: PlanUpgradeOptions) => {
      // The same flags as `rollout upgrade` in its errors (`--maintenance-window #1 (cron): ...`), exit 2.
      const request = await namingFlags(UPGRADE_REQUEST_FLAGS, async () => parseUpgradeRequest(requestFrom(options)));
      const source = await loadSiteSource(options);
      const { startingLabel, upgradingLabel, failedLabel } = request;
      await checkUpgradeGroups(source, { startingLabel, upgradingLabel, failedLabel }, false);
      const serviceSeconds =
        options.serviceEstimate !== undefined
          ? positiveSeconds(options.serviceEstimate)
          : source.kind === 'simulated'
            ? source.definition.timing.bootSeconds + source.definition.timing.returnSeconds
            : DEFAULT_SERVICE_SECONDS;
      const simulated = source.kind === 'simulated' || source.profile.simulatedTime !== undefined;
      const { site, now, close } = await connect(source);
      try {
        const members = await site.inventory.getGroupMembers(request.startingLabel);
        const view = await readPlanSite(site, members);
        const at = now();
        const time = (ms: number) => (simulated ? formatOffset((ms - at) / 1000) : iso(ms));
        const planned = planUpgrade({ request, plan: members, site: view, now: at, serviceSeconds, formatTime: time });
        const format = options.json ? 'json' : (options.format ?? 'text');
        if (format === 'json') process.stdout.write(`${JSON.stringify(planJson(planned, simulated), null, 2)}\n`);
        else if (format === 'mermaid') process.stdout.write(planMermaid(planned));
        else process.stdout.write(renderPlan(planned, request.startingLabel, time, simulated));
      } finally {
        await close();
      }
    });
}

function positiveSeconds(value: string): number {
  const seconds = numberOrRaw(value);
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 0)
    throw new CliError(`--service-estimate must be a whole number of seconds, got '${value}'`, ExitCode.invalidInput);
  return seconds;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** The site's clients and clock: the simulated site started in-process (its HTTP APIs, as the workflow reads them), or the profile's services. */
async function connect(
  source: Awaited<ReturnType<typeof loadSiteSource>>,
): Promise<{ site: Pick<Site, 'workloadManager' | 'inventory'>; now: () => number; close: () => Promise<void> }> {
  if (source.kind === 'profile') {
    const { site } = await createSiteFromProfile(source.profile, { baseDir: source.baseDir });
    return { site, now: () => Date.now(), close: async () => undefined };
  }
  // The simulator's clock stands still (a plan reads one instant): on a real clock, a second passing between two
  // reads (a loaded host) would move every estimate across a minute boundary.
  const clock = new SimClock({ timeScale: 1, realNow: () => 0 });
  const simulator = await startSiteSimulator({ site: source.definition, clock });
  // The clients the embedded runtime builds for the same site (a CSM-style site's names mapped, HSM ids checked as xnames only there).
  const site = simulatedSiteClients(simulator);
  return { site, now: () => clock.now(), close: () => simulator.close() };
}

/**
 * The JSON plan: instants as ISO dates on the wall clock; on simulated time, never dates, but seconds
 * from the plan's start (core/time-format.ts: `{"secondsFromStart": 5760, "timeBase": "simulated"}`).
 */
function planJson(plan: UpgradePlan, simulated: boolean): unknown {
  const shown = (ms: number): ShownInstant => (simulated ? simulatedInstant(ms, plan.startsAt) : iso(ms));
  return {
    mode: plan.mode,
    nodeCount: plan.nodeCount,
    cap: plan.cap,
    timeBase: simulated ? 'simulated' : 'wall-clock',
    startsAt: shown(plan.startsAt),
    endsAt: shown(plan.endsAt),
    estimatedSeconds: (plan.endsAt - plan.startsAt) / 1000,
    waves: plan.waves.map((w) => ({ ...w, startsAt: shown(w.startsAt), endsAt: shown(w.endsAt) })),
    nodes: Object.fromEntries(
      Object.entries(plan.nodes).map(([name, n]) => [
        name,
        { ...n, drainAt: shown(n.drainAt), outOfServiceAt: shown(n.outOfServiceAt), backAt: shown(n.backAt) },
      ]),
    ),
    leftAlone: plan.leftAlone,
    assumptions: plan.assumptions,
  };
}

function renderPlan(plan: UpgradePlan, label: string, time: (ms: number) => string, simulated: boolean): string {
  const unit = plan.mode === 'window' ? 'wave' : 'step';
  const lines = [
    `Upgrade plan for '${label}': ${plan.nodeCount} node(s) in ${plan.waves.length} ${unit}(s), mode ${plan.mode}, at most ${plan.cap} out of service at once`,
    `  estimated: ${formatDuration((plan.endsAt - plan.startsAt) / 1000)}, ending ${time(plan.endsAt)}${simulated ? ' (simulated time, from now)' : ''}`,
    '',
  ];
  for (const wave of plan.waves) {
    // Steps as everywhere (`step 1 of 8`); waves by their number, as `rollout session approve` counts them.
    const heading = plan.mode === 'window' ? `wave ${wave.wave}` : stepText(wave.wave - 1, plan.waves.length);
    lines.push(
      `  ${heading}: ${wave.nodes.length} node(s), starts ${time(wave.startsAt)}, ends ${time(wave.endsAt)}${wave.waits.length > 0 ? `; waits for ${wave.waits.join(', ')}` : ''}`,
    );
    for (const name of wave.nodes.slice(0, LISTED_PER_WAVE)) {
      const node = plan.nodes[name]!;
      const gates = node.gates.length > 0 ? `  [${node.gates.join('; ')}]` : '';
      lines.push(`    ${name}  drain ${time(node.drainAt)}, out ${time(node.outOfServiceAt)}, back ${time(node.backAt)}${gates}`);
    }
    if (wave.nodes.length > LISTED_PER_WAVE) lines.push(`    ... and ${wave.nodes.length - LISTED_PER_WAVE} more (--json lists them all)`);
  }
  const alone = Object.entries(plan.leftAlone);
  if (alone.length > 0) lines.push('', `  Left alone (never started): ${alone.map(([name, why]) => `${name} (${why})`).join(', ')}`);
  lines.push('', '  Assumptions:', ...plan.assumptions.map((a) => `    - ${a}`));
  return `${lines.join('\n')}\n`;
}

/** A Mermaid Gantt chart: a section per step or wave, a bar per node (drain to back), instants in seconds from now. */
function planMermaid(plan: UpgradePlan): string {
  const unit = plan.mode === 'window' ? 'Wave' : 'Step';
  const lines = ['gantt', `  title Upgrade plan: ${plan.nodeCount} node(s), at most ${plan.cap} out of service`, '  dateFormat X', '  axisFormat %H:%M'];
  const s = (ms: number) => Math.round((ms - plan.startsAt) / 1000);
  for (const wave of plan.waves) {
    lines.push(`  section ${unit} ${wave.wave}`);
    for (const name of wave.nodes) {
      const node = plan.nodes[name]!;
      lines.push(`    ${name} : ${name.replace(/[^A-Za-z0-9_]/g, '_')}, ${s(node.drainAt)}, ${Math.max(1, s(node.backAt))}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
