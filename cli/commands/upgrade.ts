import { Option, type Command } from 'commander';
import {
  parseUpgradeRequest,
  UPGRADE_APPROVALS,
  UPGRADE_MODES,
  UPGRADE_ORDERS,
  WORKLOAD_MANAGER_TYPES,
  type UpgradeRequestInput,
} from '../../core/rolling-upgrade/upgrade-request';
import { offerValues } from '../command-spec';
import { DEFAULT_TIME_SCALE } from '../../local/open-runtime';
import { addTargetOptions } from '../control-plane-target';
import { addLiveOption } from '../live-display';
import { numberOrRaw } from '../option-values';
import { showSessionProgress } from '../progress';
import { renderSessionSummary } from '../summary';
import { sessionReportJson } from '../../control-plane/reports/session-report';
import { namingFlags, UPGRADE_REQUEST_FLAGS } from '../request-flags';
import { checkUpgradeGroups } from '../upgrade-groups';
import { runTargetOf, runWorkflow, type RunOptions, type WorkflowRun } from '../run-workflow';

/** The options that make the upgrade request. */
export interface UpgradeRequestOptions {
  startingLabel: string;
  upgradingLabel: string;
  failedLabel: string;
  stepSize: string;
  template: string;
  wlm: string;
  quiesceTimeout?: string;
  bootTimeout?: string;
  wlmTimeout?: string;
  pollInterval?: string;
  mode?: string;
  maxUnavailable?: string;
  drainAhead?: string;
  order?: string;
  maxUnavailablePerRack?: string;
  batches?: string;
  pauseAfterBatches?: string;
  approval?: string;
  maxFailed?: string;
  haltOnOutsideFailures?: boolean;
  reserveSlots?: boolean;
  bakeSeconds?: string;
  healthCheck?: string;
  healthCheckTimeout?: string;
  maintenanceWindow?: string[];
}

interface UpgradeOptions extends UpgradeRequestOptions, RunOptions {
  waitForGroups?: boolean;
}

export function registerUpgradeCommand(program: Command): void {
  const upgrade = addUpgradeRequestOptions(
    addTargetOptions(program.command('upgrade'))
      .description('Run a rolling upgrade (CRUS model) on the embedded default against a simulated site or a site profile')
      .option('--site <file>', 'simulated site file (YAML or JSON); not with --endpoint/--aws, whose control plane has its site')
      .addOption(new Option('--site-config <file>', 'site connection profile: run against the services it names; not with --endpoint/--aws').conflicts('site')),
  )
    .option(
      '--time-scale <n>',
      `run on the wall clock sped up n times, to watch a run (e.g. ${DEFAULT_TIME_SCALE}); without it, on virtual time: the makespan is the same on any host (--site only: a --site-config site runs on the wall clock, or on the scaled clock of the rollout simulate it names)`,
    )
    .option('--json', 'print the final session as one JSON object')
    .option('--site-state-out <file>', "write the simulated site's final state to this file")
    .option('--data-dir <dir>', 'keep sessions on disk here (so `rollout session` can see them)')
    .option('--wait-for-groups', "start even when a group the labels name is not in the site's inventory yet, and wait for it (by default that is refused)")
    .option('--detach', 'with --endpoint/--aws: start the session and return at once, printing its id and how to watch, stop or cancel it');
  addLiveOption(upgrade).action(async (options: UpgradeOptions) => {
    process.exitCode = await runUpgrade(options);
  });
}

/** The upgrade request's options, one set for `rollout upgrade` and `rollout plan upgrade`. */
export function addUpgradeRequestOptions(command: Command): Command {
  command
    .requiredOption('--starting-label <label>', 'group of nodes to upgrade')
    .requiredOption('--upgrading-label <label>', 'group that holds the nodes being booted')
    .requiredOption('--failed-label <label>', 'group that receives nodes that failed')
    .requiredOption('--step-size <n>', 'nodes per step')
    .requiredOption('--template <id>', 'boot template of the new image')
    .option('--wlm <type>', 'workload manager type', 'slurm')
    .option('--quiesce-timeout <seconds>', 'longest wait for a step to drain of jobs (default 86400)')
    .option('--boot-timeout <seconds>', 'longest wait for a step to boot (default 3600)')
    .option('--wlm-timeout <seconds>', 'longest wait for booted nodes to return to service (default 600)')
    .option('--poll-interval <seconds>', 'how often the workflow polls the site (default 30)')
    .option('--mode <mode>', 'lockstep (CRUS steps, the default) or window (at most --max-unavailable nodes out of service, each freed slot refilled at once)')
    .option('--max-unavailable <n|p%>', 'window: nodes out of service at once, a count or a share of the plan (default: the step size)')
    .option('--drain-ahead <n>', 'window: busy nodes drained ahead of their slot, so that their jobs end while the window works (default 0)')
    .option('--order <order>', 'window: plan (default) or idle-first')
    .option('--max-unavailable-per-rack <n>', 'window: nodes of one rack out of service at once')
    .option('--batches <list>', 'window: the first batches before the window, e.g. 1,5,20%')
    .option('--pause-after-batches <list>', 'window with batches: wait for `rollout session approve ID` after these batches, e.g. 1')
    .option('--approval <kind>', 'window with batches: none (default) or each-batch (wait for `rollout session approve ID` after every batch)')
    .option('--max-failed <n|p%>', 'halt (state HALTED) once more nodes than this failed, a count or a share of the plan')
    .option(
      '--halt-on-outside-failures',
      'window: halt when a node outside the plan (in the inventory, not in the starting group) goes DOWN or FAIL during the run',
    )
    .option('--reserve-slots', "window: hold each node's planned slot with a Slurm maintenance reservation, so no job that would outlast it starts there")
    .option('--bake-seconds <seconds>', 'window with batches: wait this long after each batch')
    .option(
      '--health-check <command>',
      "a node returns to service only once this command exits 0, run on the site's head node with {node} its name, e.g. 'ssh {node} /usr/sbin/nhc'",
    )
    .option('--health-check-timeout <seconds>', 'longest a health check command may run before the node fails (default 300)')
    .option(
      '--maintenance-window <cron,minutes[,tz]>',
      'new nodes start only inside this window (repeatable): a 5-field cron (minute hour day-of-month month day-of-week), its length in minutes and an optional time zone, e.g. "0 22 * * *,240,Europe/Zurich"',
      collect,
      [],
    );
  // The request's schema checks them (its error names the field): completion only offers them.
  for (const [flag, values] of [
    ['--wlm', WORKLOAD_MANAGER_TYPES],
    ['--mode', UPGRADE_MODES],
    ['--order', UPGRADE_ORDERS],
    ['--approval', UPGRADE_APPROVALS],
  ] as const)
    offerValues(command, flag, values);
  return command;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** `1,5,20%` -> [1, 5, "20%"]: each item as a number where it is one, so the request validation names the field otherwise. */
function listOption(value: string | undefined): (number | string)[] | undefined {
  return value === undefined ? undefined : value.split(',').map((item) => numberOrRaw(item.trim())!);
}

/**
 * `CRON,DURATION_MIN[,TZ]`: the cron itself may hold commas (`0 2,4 * * *`), so the duration is the
 * last numeric item (the time zone, if any, follows it).
 */
function maintenanceWindowOption(value: string): Record<string, unknown> {
  const parts = value.split(',');
  const zoned = parts.length >= 3 && !/^\d+$/.test(parts.at(-1)!.trim()) && /^\d+$/.test(parts.at(-2)!.trim());
  const timeZone = zoned ? parts.pop()!.trim() : undefined;
  const duration = parts.length >= 2 ? parts.pop()!.trim() : undefined;
  return { cron: parts.join(','), durationMinutes: numberOrRaw(duration), ...(timeZone ? { timeZone } : {}) };
}

export function requestFrom(options: UpgradeRequestOptions): UpgradeRequestInput {
  const optional = {
    quiesceTimeoutSeconds: numberOrRaw(options.quiesceTimeout),
    bootTimeoutSeconds: numberOrRaw(options.bootTimeout),
    wlmReturnTimeoutSeconds: numberOrRaw(options.wlmTimeout),
    pollIntervalSeconds: numberOrRaw(options.pollInterval),
    mode: options.mode,
    maxUnavailable: numberOrRaw(options.maxUnavailable),
    drainAhead: numberOrRaw(options.drainAhead),
    order: options.order,
    maxUnavailablePerRack: numberOrRaw(options.maxUnavailablePerRack),
    batches: listOption(options.batches),
    pauseAfterBatches: listOption(options.pauseAfterBatches),
    approval: options.approval,
    maxFailed: numberOrRaw(options.maxFailed),
    haltOnOutsideFailures: options.haltOnOutsideFailures,
    reserveSlots: options.reserveSlots,
    bakeSeconds: numberOrRaw(options.bakeSeconds),
    healthCheck:
      options.healthCheck !== undefined || options.healthCheckTimeout !== undefined
        ? {
            ...(options.healthCheck !== undefined ? { command: options.healthCheck } : {}),
            ...(options.healthCheckTimeout !== undefined ? { timeoutSeconds: numberOrRaw(options.healthCheckTimeout) } : {}),
          }
        : undefined,
    maintenanceWindows: options.maintenanceWindow && options.maintenanceWindow.length > 0 ? options.maintenanceWindow.map(maintenanceWindowOption) : undefined,
  };
  return {
    startingLabel: options.startingLabel,
    upgradingLabel: options.upgradingLabel,
    failedLabel: options.failedLabel,
    upgradeStepSize: numberOrRaw(options.stepSize),
    upgradeTemplateId: options.template,
    workloadManagerType: options.wlm,
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
  } as UpgradeRequestInput;
}

async function runUpgrade(options: UpgradeOptions): Promise<number> {
  return namingFlags(UPGRADE_REQUEST_FLAGS, async () => {
    // Parsed once, here: bad input stops before anything starts, and the typed request is the workflow's input.
    const request = parseUpgradeRequest(requestFrom(options));
    const target = await runTargetOf(options);
    // A remote control plane's site is not reachable from here: its progress shows the workflow's message instead.
    if (target.source) await checkUpgradeGroups(target.source, request, options.waitForGroups === true);
    return runWorkflow(options, target, upgradeRun({ workflow: 'rollingUpgrade', input: request }));
  });
}

/** The rolling-upgrade workflow as the run skeleton follows it: a new session, or `{resume}` to take one over. */
export function upgradeRun(start: WorkflowRun['start']): WorkflowRun {
  return {
    kind: 'upgrade',
    start,
    showProgress: (controlPlane, id) => showSessionProgress(controlPlane, id),
    endedRun: async (controlPlane, id) => {
      const found = await controlPlane.session(id);
      if (found?.kind !== 'upgrade') return undefined;
      const { report } = found;
      return { json: sessionReportJson(report), summary: (timing) => renderSessionSummary(report, timing), succeeded: report.completed };
    },
  };
}
