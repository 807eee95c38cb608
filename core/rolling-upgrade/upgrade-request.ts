import { z } from 'zod';
import { MAX_POLL_INTERVAL_SECONDS, parseOrThrow, seconds } from '../validation';
import { bootTemplate, groupLabel } from '../site/names';
import type { FieldProblem } from '../errors';
import { compileWindow, neverOpensProblem } from '../scheduling/maintenance-windows';
import { systemClock } from '../clock';

export const WORKLOAD_MANAGER_TYPES = ['slurm'] as const;

const PERCENT = /^(\d+(\.\d+)?)%$/;
const wholeNumber = (field: string, min: number) =>
  z
    .number({ error: `${field} must be a whole number` })
    .int(`${field} must be a whole number`)
    .min(min, `${field} must be at least ${min}`);
/** A count, or a share of the plan written "20%" (above 0, at most 100). */
const countOrPercent = (field: string, min: number) =>
  z.union(
    [
      wholeNumber(field, min),
      z
        .string({ error: `${field} must be a whole number or a percentage such as "20%"` })
        .refine((v) => PERCENT.test(v) && Number(v.slice(0, -1)) <= 100 && (min === 0 || Number(v.slice(0, -1)) > 0), {
          error: `${field} must be a whole number or a percentage such as "20%" (${min === 0 ? '0' : 'above 0'} to 100)`,
        }),
    ],
    { error: `${field} must be a whole number or a percentage such as "20%"` },
  );

export const UPGRADE_MODES = ['lockstep', 'window'] as const;
export const UPGRADE_ORDERS = ['plan', 'idle-first'] as const;
export const UPGRADE_APPROVALS = ['none', 'each-batch'] as const;

/** What a maintenance window's cron is, said where one is refused: EventBridge's forms are easily given instead. */
const MAINTENANCE_CRON_FORM =
  "a maintenance window takes a 5-field cron: minute hour day-of-month month day-of-week, e.g. '0 22 * * *' (EventBridge's cron(...) and rate(...) are for `rollout schedule --expression`)";

const maintenanceWindowSchema = z
  .strictObject({
    cron: z
      .string({ error: 'cron is required' })
      .trim()
      .min(1, 'cron must not be empty')
      .describe(
        "When the window opens: a 5-field cron (minute hour day-of-month month day-of-week, e.g. `0 22 * * *`), not EventBridge's `cron(...)`; a cron that opens no window within a year is refused",
      ),
    durationMinutes: wholeNumber('durationMinutes', 1)
      .max(7 * 24 * 60, 'durationMinutes must be at most 10080 (a week)')
      .describe('How long the window stays open after each opening'),
    timeZone: z
      .string({ error: 'timeZone must be an IANA time zone name' })
      .default('UTC')
      .describe('The IANA time zone the cron is read in (e.g. `Europe/Paris`)'),
  })
  .superRefine((window, ctx) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: window.timeZone });
    } catch {
      ctx.addIssue({ code: 'custom', path: ['timeZone'], message: `unknown time zone '${window.timeZone}'` });
      return;
    }
    try {
      compileWindow(window);
    } catch (err) {
      ctx.addIssue({
        code: 'custom',
        path: ['cron'],
        message: `invalid cron '${window.cron}': ${err instanceof Error ? err.message : String(err)}; ${MAINTENANCE_CRON_FORM}`,
      });
      return;
    }
    // Every path parses here (the CLI, the REST API, Open Session, schedules): a window that never opens is refused on all.
    const never = neverOpensProblem(window, systemClock.now());
    if (never) ctx.addIssue({ code: 'custom', path: ['cron'], message: never });
  });

/** Fields that only the window reads; lock-step keeps CRUS's steps of upgradeStepSize nodes in plan order. */
const WINDOW_ONLY = ['maxUnavailable', 'drainAhead', 'maxUnavailablePerRack', 'batches'] as const;

/**
 * Why each is refused in lock-step, and what to give instead. maxUnavailable is refused rather than
 * read as the step size: a lock-step step takes all its nodes out of service together, so the step
 * size is the cap already, and a second number for it could only agree with it or contradict it.
 */
const WINDOW_ONLY_REASONS: Record<(typeof WINDOW_ONLY)[number], string> = {
  maxUnavailable:
    "maxUnavailable applies to mode 'window' only: in mode 'lockstep' each step takes exactly upgradeStepSize nodes out of service at once, so the step size is the cap (give --step-size N, or --mode window --max-unavailable N)",
  drainAhead: "drainAhead applies to mode 'window' only (lockstep drains each step when it starts)",
  maxUnavailablePerRack:
    "maxUnavailablePerRack applies to mode 'window' only (lockstep takes upgradeStepSize nodes per step in plan order, whatever their rack)",
  batches: "batches applies to mode 'window' only (lockstep's batches are its steps of upgradeStepSize)",
};

/**
 * The request that starts a rolling upgrade: CRUS's upgrade session fields in camelCase,
 * plus the timeouts and poll interval CRUS lacks. Plain JSON, so it can be pasted into the console.
 */
export const upgradeRequestSchema = z
  .strictObject({
    startingLabel: groupLabel('startingLabel').describe('Group of nodes to upgrade (CRUS starting label): the plan is its members, in order'),
    upgradingLabel: groupLabel('upgradingLabel').describe(
      'Group that holds the nodes being booted (CRUS upgrading label); must differ from the other two labels',
    ),
    failedLabel: groupLabel('failedLabel').describe('Group that receives the nodes that failed (CRUS failed label); must differ from the other two labels'),
    upgradeStepSize: z
      .number({ error: 'upgradeStepSize is required and must be a whole number' })
      .int('upgradeStepSize must be a whole number')
      .min(1, 'upgradeStepSize must be at least 1')
      .describe('Nodes per step (lock-step); in mode window the default of maxUnavailable'),
    upgradeTemplateId: bootTemplate('upgradeTemplateId').describe(
      'Boot template of the new image; the boot service must know it (the error lists the ones it has)',
    ),
    workloadManagerType: z
      .enum(WORKLOAD_MANAGER_TYPES, {
        error: `workloadManagerType must be one of: ${WORKLOAD_MANAGER_TYPES.join(', ')}`,
      })
      .describe('The workload manager that drains and returns the nodes'),
    /** Longest wait for a step's nodes to drain of jobs (CRUS: none). Default 24 h. */
    quiesceTimeoutSeconds: seconds('quiesceTimeoutSeconds')
      .default(24 * 3600)
      .describe("Longest wait for a step's nodes to drain of jobs (CRUS: none); a node still busy then fails with upgrading-time-out-quiescing"),
    /** Longest wait for the boot service to report every node of a step (CRUS: none). Default 1 h. */
    bootTimeoutSeconds: seconds('bootTimeoutSeconds')
      .default(3600)
      .describe('Longest wait for the boot service to report every node of a step booted (CRUS: none); then upgrading-time-out-booting'),
    /** Longest wait for booted nodes to return to service in the WLM (CRUS: 600 s). */
    wlmReturnTimeoutSeconds: seconds('wlmReturnTimeoutSeconds')
      .default(600)
      .describe('Longest wait for booted nodes to return to service in the workload manager (CRUS: 600 s); then upgrading-time-out-wlm-waiting'),
    /** How often the workflow polls the site while it waits. */
    pollIntervalSeconds: seconds('pollIntervalSeconds', { max: MAX_POLL_INTERVAL_SECONDS })
      .default(30)
      .describe('How often the workflow polls the site while it waits'),
    /** lockstep: CRUS's steps. window: at most maxUnavailable nodes out of service, each freed slot refilled at once. */
    mode: z
      .enum(UPGRADE_MODES, { error: `mode must be one of: ${UPGRADE_MODES.join(', ')}` })
      .default('lockstep')
      .describe(
        "lockstep: CRUS's steps of upgradeStepSize nodes; window: at most maxUnavailable nodes out of service, each freed slot refilled at the next increment",
      ),
    /** Window: nodes out of service at once, a count or a share of the plan. Default upgradeStepSize. */
    maxUnavailable: countOrPercent('maxUnavailable', 1)
      .optional()
      .describe('Window: nodes holding a slot (out of service) at once, a count or "P%" of the plan (rounded down, at least 1). Default upgradeStepSize'),
    /** Window: nodes drained ahead of their slot, so that their jobs end while the window works. Default 0. */
    drainAhead: wholeNumber('drainAhead', 0)
      .optional()
      .describe(
        'Window: busy nodes drained before they get a slot, so that their jobs end while the window works; only a node whose running job is known to run past the next poll. Default 0',
      ),
    /** Which node takes a free slot: plan order, or idle first (the shortest remaining job). Lock-step: plan only. */
    order: z
      .enum(UPGRADE_ORDERS, { error: `order must be one of: ${UPGRADE_ORDERS.join(', ')}` })
      .default('plan')
      .describe(
        'Window: which node takes a free slot: plan order, or idle-first (idle nodes first, busy ones by when their running jobs end at the latest). Lock-step: plan only',
      ),
    /** Window: nodes of one rack out of service at once. */
    maxUnavailablePerRack: wholeNumber('maxUnavailablePerRack', 1).optional().describe('Window: slot holders per rack (the rack from the inventory)'),
    /** Window: the first waves (Ansible `serial`), each a count or a share of the plan; then the window takes the rest. */
    batches: z
      .array(countOrPercent('batches', 1), { error: 'batches must be a list of counts or percentages' })
      .min(1, 'batches must not be empty')
      .optional()
      .describe('Window: the first waves (Ansible `serial`), each a count or a share of the plan ("20%"); then one wave for the rest'),
    /** Pause for an operator's approval after these batches (1-based; lock-step: steps). */
    pauseAfterBatches: z
      .array(wholeNumber('pauseAfterBatches', 1), { error: 'pauseAfterBatches must be a list of batch numbers' })
      .optional()
      .describe(
        "Window with batches: pause for an operator's approval (`rollout session approve ID`) after these batches (1-based); refused in mode 'lockstep'",
      ),
    /** each-batch: pause for approval after every batch (lock-step: every step). */
    approval: z
      .enum(UPGRADE_APPROVALS, { error: "approval must be 'none' or 'each-batch'" })
      .default('none')
      .describe(
        "Window with batches: each-batch pauses for an operator's approval (`rollout session approve ID`) after every batch; refused in mode 'lockstep'",
      ),
    /** Halt once more nodes than this have failed: a count or a share of the plan ("10%"). Default: never halt. */
    maxFailed: countOrPercent('maxFailed', 0)
      .optional()
      .describe(
        'Halt once more nodes than this have failed, a count or "P%" of the plan: no new node (lock-step: no new step) starts, nodes in flight finish, the session ends HALTED. Default: never halt',
      ),
    /** Halt too when a node outside the plan goes DOWN or FAIL during the run. */
    haltOnOutsideFailures: z
      .boolean({ error: 'haltOnOutsideFailures must be true or false' })
      .default(false)
      .describe(
        "Window: halt too when a node outside the plan (an inventory node not in the starting group) goes DOWN or FAIL in Slurm during the run; nodes already DOWN or FAIL at the start do not count; refused in mode 'lockstep'",
      ),
    /**
     * Window: plan each node's slot and hold it with a Slurm maintenance reservation from then on, so
     * that no job whose time limit runs past the slot starts on the node meanwhile (needs the site's
     * command transport: `scontrol create reservation`).
     */
    reserveSlots: z
      .boolean({ error: 'reserveSlots must be true or false' })
      .optional()
      .describe(
        "Window: plan each node's slot and hold it with Slurm maintenance reservations, so that no job whose time limit runs past the slot starts on the node meanwhile; needs the site's command transport (`scontrol create reservation`), refused at Open Session on a site without one; refused in mode 'lockstep'. Default false",
      ),
    /** Wait this long after each batch (lock-step: step) before the next one starts. */
    bakeSeconds: seconds('bakeSeconds', { min: 0 })
      .default(0)
      .describe("Window with batches: wait this long after a batch's last node before the next batch starts"),
    /**
     * A node returns to service only once Slurm shows it healthy (idle, responding, not FAIL, rebooted)
     * and this command, run on the head node through the site's command transport with `{node}` the
     * node's quoted name (e.g. `ssh {node} /usr/sbin/nhc`), exits 0 within timeoutSeconds.
     */
    healthCheck: z
      .strictObject(
        {
          command: z
            .string({ error: 'healthCheck.command must be a string' })
            .trim()
            .min(1, 'healthCheck.command must not be empty')
            .refine((c) => !/[\n\r\0]/.test(c), { error: 'healthCheck.command must be one line' })
            .refine((c) => c.includes('{node}'), { error: 'healthCheck.command must name the node to check as {node} (e.g. "ssh {node} /usr/sbin/nhc")' })
            .refine((c) => [...c.matchAll(/\{([^{}]*)\}/g)].every((m) => m[1] === 'node'), { error: 'healthCheck.command may use only the placeholder {node}' })
            .optional()
            .describe(
              "Run on the head node through the site's command transport, `{node}` replaced by the node's quoted name (e.g. `ssh {node} /usr/sbin/nhc`): the node returns to service only once it exits 0; a non-zero exit fails the node with upgrading-health-check-failed; refused at Open Session on a site without a command transport",
            ),
          /** How long the command may run (its execution timeout on the transport); default 300 s. */
          timeoutSeconds: seconds('healthCheck.timeoutSeconds')
            .optional()
            .describe('How long the command may run (also its execution timeout on the transport); no result by then fails the node. Default 300'),
        },
        { error: 'healthCheck must be an object with command and timeoutSeconds' },
      )
      .superRefine((check, ctx) => {
        if (check.timeoutSeconds !== undefined && check.command === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['timeoutSeconds'],
            message: 'healthCheck.timeoutSeconds bounds the health check command: give healthCheck.command too',
          });
        }
      })
      .optional()
      .describe('A node returns to service only once Slurm shows it healthy and this command passes (phase CHECKING meanwhile)'),
    /** New nodes start only inside one of these windows; nodes in flight finish. */
    maintenanceWindows: z
      .array(maintenanceWindowSchema, { error: 'maintenanceWindows must be a list' })
      .min(1, 'maintenanceWindows must not be empty')
      .optional()
      .describe('Window: new nodes start only inside one of these windows; nodes in flight finish (drained-ahead nodes are released outside a window)'),
  })
  .superRefine((req, ctx) => {
    if (req.mode === 'lockstep') {
      for (const field of WINDOW_ONLY) {
        if (req[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: WINDOW_ONLY_REASONS[field] });
      }
      if (req.order !== 'plan')
        ctx.addIssue({ code: 'custom', path: ['order'], message: "order 'idle-first' applies to mode 'window' only (lockstep keeps plan order)" });
    } else {
      // Without batches the window is one wave: there is no batch to pause or bake after.
      const batchCount = req.batches?.length ?? 0;
      if (batchCount === 0) {
        if (req.approval === 'each-batch')
          ctx.addIssue({ code: 'custom', path: ['approval'], message: "approval 'each-batch' needs batches in mode 'window'" });
        if (req.pauseAfterBatches !== undefined)
          ctx.addIssue({ code: 'custom', path: ['pauseAfterBatches'], message: "pauseAfterBatches needs batches in mode 'window'" });
        if (req.bakeSeconds > 0) ctx.addIssue({ code: 'custom', path: ['bakeSeconds'], message: "bakeSeconds needs batches in mode 'window'" });
      } else {
        req.pauseAfterBatches?.forEach((batch, i) => {
          if (batch > batchCount) {
            ctx.addIssue({
              code: 'custom',
              path: ['pauseAfterBatches', i],
              message: `there are ${batchCount} batches before the window; cannot pause after batch ${batch}`,
            });
          }
        });
      }
    }

    const labels = [
      ['startingLabel', req.startingLabel],
      ['upgradingLabel', req.upgradingLabel],
      ['failedLabel', req.failedLabel],
    ] as const;
    // Sharing a label would make CRUS empty the group it is upgrading from.
    for (let i = 0; i < labels.length; i++) {
      for (let j = i + 1; j < labels.length; j++) {
        if (labels[i]![1] === labels[j]![1]) {
          ctx.addIssue({
            code: 'custom',
            path: [labels[j]![0]],
            message: `${labels[j]![0]} must differ from ${labels[i]![0]} ('${labels[i]![1]}')`,
          });
        }
      }
    }
  });

export type UpgradeRequestInput = z.input<typeof upgradeRequestSchema>;
export type UpgradeRequest = z.output<typeof upgradeRequestSchema>;

/** The controls beyond CRUS's fields: how nodes are scheduled, paced and halted (docs/guides/rolling-upgrades.md says what each does). */
export const UPGRADE_CONTROL_KEYS = [
  'mode',
  'maxUnavailable',
  'drainAhead',
  'order',
  'maxUnavailablePerRack',
  'batches',
  'pauseAfterBatches',
  'approval',
  'maxFailed',
  'haltOnOutsideFailures',
  'reserveSlots',
  'bakeSeconds',
  'healthCheck',
  'maintenanceWindows',
] as const satisfies readonly (keyof UpgradeRequest)[];

export type UpgradeControls = Pick<UpgradeRequest, (typeof UPGRADE_CONTROL_KEYS)[number]>;

/** A health check command may run this long unless the request says otherwise. */
export const DEFAULT_HEALTH_CHECK_TIMEOUT_SECONDS = 300;

/** The health check command a node must pass before it returns to service, if the request has one. */
export function healthCheckCommand(request: Pick<UpgradeRequest, 'healthCheck'>): { command: string; timeoutSeconds: number } | undefined {
  const command = request.healthCheck?.command;
  return command === undefined ? undefined : { command, timeoutSeconds: request.healthCheck?.timeoutSeconds ?? DEFAULT_HEALTH_CHECK_TIMEOUT_SECONDS };
}

export function parseUpgradeRequest(input: unknown): UpgradeRequest {
  return parseOrThrow(upgradeRequestSchema, input, 'upgrade request');
}

/**
 * Controls the request schema accepts but the workflow does not enforce yet: a session that asked
 * for them is refused (naming the field) rather than run without them, or wait for ever for an
 * approval no command can give.
 */
export function unsupportedControls(request: UpgradeRequest): FieldProblem[] {
  const problems: FieldProblem[] = [];
  // Each of them runs in mode window: the refusal names the flag that makes the request valid.
  const notYet = (field: string, what: string) =>
    problems.push({ field, message: `${what} is not supported by the workflow yet: it runs in mode 'window' (--mode window)` });
  if (request.mode === 'lockstep') {
    if (request.approval !== 'none') notYet('approval', "approval in mode 'lockstep'");
    if (request.pauseAfterBatches !== undefined) notYet('pauseAfterBatches', "pausing for approval in mode 'lockstep'");
    if (request.haltOnOutsideFailures) notYet('haltOnOutsideFailures', "halting on failures outside the plan in mode 'lockstep'");
    if (request.reserveSlots) notYet('reserveSlots', "maintenance reservations in mode 'lockstep'");
    if (request.bakeSeconds > 0) notYet('bakeSeconds', "bake time in mode 'lockstep'");
    if (request.maintenanceWindows !== undefined) notYet('maintenanceWindows', "maintenance windows in mode 'lockstep'");
  }
  return problems;
}
