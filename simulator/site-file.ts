import { z } from 'zod';
import { loadDocumentFile } from '../adapters/document-file';
import { InvalidInputError } from '../core/errors';
import { backstopSecondsSchema } from '../core/site/site-profile';
import { checkSiteInventory, inventoryNodeShape, siteInventoryShape } from '../core/site-file/site-definition';
import { parseOrThrow, seconds as secondsOf } from '../core/validation';
import { SlurmVersion } from './models/slurm-version';

export const WLM_STATES = ['IDLE', 'ALLOCATED', 'MIXED', 'COMPLETING', 'DRAINING', 'DRAINED', 'DOWN', 'FAIL'] as const;
export type SiteWlmState = (typeof WLM_STATES)[number];

/** `ssm`: the head node's SSM endpoint; a fault's `path` then matches the operation, e.g. `GetCommandInvocation`. */
export const SITE_SERVICES = ['workload-manager', 'boot-service', 'inventory', 'provisioner', 'ssm'] as const;
export type SiteServiceName = (typeof SITE_SERVICES)[number];

/** States in which a node cannot be running a job, so `busySeconds` would contradict them. */
const JOBLESS_STATES: readonly SiteWlmState[] = ['DRAINED', 'DOWN', 'FAIL'];

const nonEmpty = (what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .trim()
    .min(1, `${what} must not be empty`);
const seconds = secondsOf(undefined, { min: 0, whole: false });
/** A job may run for longer than any wait the workflow takes: a year at most. */
const jobSeconds = secondsOf(undefined, { min: 0, whole: false, max: 365 * 24 * 3600 });
const runFault = z.enum(['fail', 'hang'], { error: "must be 'fail' or 'hang'" });

const wlmSchema = z.strictObject({
  state: z
    .enum(WLM_STATES, { error: `must be one of ${WLM_STATES.join(', ')}` })
    .default('IDLE')
    .describe("The node's Slurm state at the start"),
  /** Time left on the node's running job; a busy state without it runs a job that never ends. */
  busySeconds: jobSeconds.default(0).describe("Time left on the node's running job (its first job); a busy state without it runs a job that never ends"),
  /**
   * Time left until the running job's time limit, what Slurm reports as its end (`end_time`, squeue's
   * `%L`); at least `busySeconds`. Absent: the job ends at its limit (`busySeconds`).
   */
  timeLimitSeconds: jobSeconds
    .optional()
    .describe("Time left until the running job's time limit, what Slurm reports as its end; at least busySeconds (absent: the job ends at its limit)"),
  reason: z.string().optional().describe("The node's Slurm reason (e.g. an admin's drain reason)"),
  responding: z.boolean({ error: 'must be true or false' }).default(true).describe('false: the node does not respond (DOWN after slurmdTimeoutSeconds)'),
});

const faultsSchema = z.strictObject({
  boot: runFault.optional().describe("The node's boot fails, or never ends"),
  returnToService: z.literal('never', { error: "must be 'never'" }).optional().describe('never: the node never returns to service after its boot'),
  prepare: runFault.optional().describe("The provisioner's prepare action fails on the node, or never ends"),
  deploy: runFault.optional().describe("The provisioner's deploy action fails on the node, or never ends"),
  /** `ssh <node> nhc` on the head node (a rolling upgrade's health check): `fail` exits 1 with NHC's ERROR line, `hang` never ends. */
  healthCheck: runFault.optional().describe("The health check (`ssh <node> nhc`) fails with NHC's ERROR line, or never ends"),
  /** Task-graph tasks by id (`setup_network: fail`): `fail` exits 1 at the task's end, `hang` never ends. */
  tasks: z
    .record(nonEmpty('a task id'), runFault)
    .default({})
    .describe("Task-graph tasks by id (`setup_network: fail`): fail exits 1 at the task's end, hang never ends"),
});

const nodeSchema = z.strictObject({
  ...inventoryNodeShape,
  wlm: wlmSchema.prefault({}).describe("The simulated node's Slurm state at the start"),
  faults: faultsSchema.prefault({}).describe('Faults the simulated node has: fail (an error) or hang (never ends)'),
});

const positiveSeconds = (field: string) => z.number({ error: `${field} must be a number of seconds` }).positive(`${field} must be above 0`);

/**
 * A workload that keeps running: jobs arrive on every node that is not drained or out of service
 * and keep it busy `utilisation` of the time, lengths lognormal (capped at `max`), from `seed`.
 */
const workloadSchema = z.strictObject({
  utilisation: z
    .number({ error: 'utilisation must be a number' })
    .gt(0, 'utilisation must be above 0')
    .lt(1, 'utilisation must be below 1')
    .describe('Share of the time a node in service is busy'),
  jobSeconds: z
    .strictObject({
      median: positiveSeconds('median').describe('The median job length'),
      sigma: z.number({ error: 'sigma must be a number' }).min(0, 'sigma must not be negative').default(1).describe("The lognormal's sigma"),
      max: positiveSeconds('max')
        .default(7 * 86400)
        .describe('The longest job'),
    })
    .refine((j) => j.max >= j.median, { error: 'max must be at least the median', path: ['max'] })
    .describe('Job time limits: lognormal lengths, capped at max'),
  seed: z
    .number({ error: 'seed must be a whole number' })
    .int('seed must be a whole number')
    .default(1)
    .describe('The random seed: the same seed gives the same jobs'),
  /**
   * Each job's length is its time limit (drawn from `jobSeconds`) times a fraction uniform in
   * [min, max]: real jobs end before their limit, and Slurm reports only the limit's end.
   */
  endFraction: z
    .strictObject({
      min: z.number({ error: 'min must be a number' }).gt(0, 'min must be above 0').max(1, 'min must be at most 1').describe('The smallest fraction'),
      max: z.number({ error: 'max must be a number' }).gt(0, 'max must be above 0').max(1, 'max must be at most 1').describe('The largest fraction'),
    })
    .refine((f) => f.max >= f.min, { error: 'max must be at least min', path: ['max'] })
    .default({ min: 1, max: 1 })
    .describe("Each job's length is its time limit times a fraction uniform in [min, max]: real jobs end before their limit"),
});

const httpError = 'status is required and must be an HTTP error status (400-599)';
const apiFaultSchema = z
  .strictObject({
    service: z
      .enum(SITE_SERVICES, { error: `must be one of ${SITE_SERVICES.join(', ')}` })
      .describe("The service whose API errs (ssm: the head node's SSM endpoint; path then matches the operation, e.g. GetCommandInvocation)"),
    method: z.enum(['GET', 'POST', 'DELETE'], { error: 'must be GET, POST or DELETE' }).optional().describe('Only requests of this method (default: any)'),
    /** Matches when the request path contains this text. */
    path: nonEmpty('path').optional().describe('Matches when the request path contains this text'),
    status: z
      .number({ error: httpError })
      .int(httpError)
      .min(400, httpError)
      .max(599, httpError)
      .optional()
      .describe('The HTTP error status answered (give status or hang)'),
    /** Leave the request unanswered instead (not served either): the client meets its timeout. */
    hang: z.literal(true, { error: 'must be true' }).optional().describe('Leave the request unanswered instead: the client meets its timeout'),
    count: z.number().int().min(1, 'must be at least 1').default(1).describe('How many matching calls fail'),
    /** Matching calls let through before the faults start. */
    afterCalls: z.number().int().min(0, 'must not be negative').default(0).describe('Matching calls let through before the faults start'),
  })
  .refine((f) => (f.status === undefined) !== (f.hang === undefined), { error: `give exactly one of status (${httpError}) and hang: true`, path: ['status'] });

/** A command run on the simulated head node (through SSM) that misbehaves: exits non-zero, or never finishes (SSM TimedOut). */
const commandFaultSchema = z.strictObject({
  /** Matches when the command line contains this text, e.g. `scontrol reboot` or `wwctl`. */
  match: nonEmpty('match').describe('Matches when the command line contains this text, e.g. `scontrol reboot` or `wwctl`'),
  exitCode: z.number().int().min(1, 'must be 1-255').max(255, 'must be 1-255').optional().describe('The command exits with this status'),
  hang: z.literal(true, { error: 'must be true' }).optional().describe('The command never finishes (SSM TimedOut)'),
  stderr: z.string().default('injected command fault').describe('What the failing command writes on stderr'),
  count: z.number().int().min(1, 'must be at least 1').default(1).describe('How many matching commands misbehave'),
  afterCalls: z.number().int().min(0, 'must not be negative').default(0).describe('Matching commands let through before the faults start'),
});

/**
 * The simulated Slurm's release and slurm.conf settings that shape what a node does (see
 * simulator/README.md). The defaults keep a default site's reboots (bootSeconds 300 + returnSeconds
 * 60) inside both timeouts; Slurm's own defaults are ReturnToService=0, SlurmdTimeout=300, ResumeTimeout=60.
 */
const slurmSchema = z.strictObject({
  siteEvents: z
    .strictObject({
      backstopSeconds: backstopSecondsSchema,
    })
    .optional()
    .describe(
      "The embedded default sets its rolling upgrades' Slurm triggers on this site (strigger on its head node) and waits for their firings, with a slow backstop poll (as a scontrol connector's siteEvents does); without it every wait is a poll",
    ),
  /** MAJOR.MINOR[.MICRO], e.g. `22.05.8`: decides the CLI (scontrol --json from 23.02), the slurmrestd versions served and the rules that changed. */
  version: z
    .string({ error: 'version must be a Slurm release such as 24.11.5' })
    .default('24.11.5')
    .superRefine((value, ctx) => {
      try {
        new SlurmVersion(value);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    })
    .describe(
      'The Slurm release simulated, MAJOR.MINOR[.MICRO] (22.05 to 26.05): decides the CLI (scontrol --json from 23.02), the slurmrestd versions served and the rules that changed',
    ),
  /** slurm.conf ReturnToService: what a DOWN node that registers again becomes (0: stays DOWN; 1: only after `Not responding` with no reboot; 2: back). */
  returnToService: z
    .union([z.literal(0), z.literal(1), z.literal(2)], { error: 'returnToService must be 0, 1 or 2' })
    .default(2)
    .describe(
      "slurm.conf ReturnToService: what a DOWN node that registers again becomes (0: stays DOWN; 1: only after Not responding with no reboot; 2: back). Slurm's default is 0",
    ),
  /** slurm.conf SlurmdTimeout: a node whose slurmd is gone this long (a reboot through the boot service) is set DOWN, ` : Not responding` appended to its reason. */
  slurmdTimeoutSeconds: secondsOf(undefined, { min: 1, whole: true })
    .default(600)
    .describe(
      'slurm.conf SlurmdTimeout: a node whose slurmd is gone this long (a boot-service reboot) is set DOWN, ` : Not responding` appended to its reason',
    ),
  /** slurm.conf ResumeTimeout: a `scontrol reboot` not back by then is set DOWN, ` : reboot timed out` appended. */
  resumeTimeoutSeconds: secondsOf(undefined, { min: 1, whole: true })
    .default(600)
    .describe('slurm.conf ResumeTimeout: a `scontrol reboot` not back by then is set DOWN, ` : reboot timed out` appended'),
  /** slurm.conf AccountingStorageType: from 23.11, without one a node coming up keeps its reason. */
  accountingStorage: z
    .enum(['slurmdbd', 'none'], { error: "must be 'slurmdbd' or 'none'" })
    .default('slurmdbd')
    .describe('slurm.conf AccountingStorageType: from 23.11 to 25.11, without one a node coming up keeps its reason'),
});

/** A simulated site: the inventory part (core/site-file/site-definition.ts) and what only a simulation has. */
export const siteDefinitionSchema = z
  .strictObject({
    ...siteInventoryShape(nodeSchema),
    timing: z
      .strictObject({
        bootSeconds: seconds.default(300).describe("How long a node's boot takes"),
        returnSeconds: seconds.default(60).describe('How long a booted node takes to return to service in Slurm'),
        prepareSeconds: seconds.default(120).describe("How long the provisioner's prepare action takes on a node"),
        deploySeconds: seconds.default(600).describe("How long the provisioner's deploy action takes on a node"),
        /** How long a task-graph task (shell, puppet, ...) runs on a node. */
        taskSeconds: seconds.default(30).describe('How long a task-graph task (shell, puppet, ...) runs on a node'),
        /** How long the Epilog runs after a job ends: the node shows COMPLETING meanwhile. */
        epilogSeconds: seconds.default(0).describe('How long the Epilog runs after a job ends: the node shows COMPLETING meanwhile'),
        /** How long a node's health check (`ssh <node> nhc` on the head node) runs before its result shows. */
        healthCheckSeconds: seconds
          .default(0)
          .describe("How long a node's health check (`ssh <node> nhc` on the head node) runs before its result shows (0: at once)"),
      })
      .prefault({})
      .describe('Simulated seconds each operation takes'),
    apiFaults: z.array(apiFaultSchema).default([]).describe('Site API errors, e.g. the boot service answers 503 twice'),
    workload: workloadSchema
      .optional()
      .describe('Jobs that keep arriving on nodes in service (none without it); a drained node runs its current job to its end'),
    slurm: slurmSchema.prefault({}).describe("The simulated Slurm's release and slurm.conf settings (simulator/README.md)"),
    commandFaults: z.array(commandFaultSchema).default([]).describe('Commands on the simulated head node (SSM or --transport local) that misbehave'),
  })
  .superRefine((site, ctx) => {
    checkSiteInventory(site, ctx);
    site.nodes.forEach((node, i) => {
      if (node.wlm.busySeconds > 0 && JOBLESS_STATES.includes(node.wlm.state)) {
        ctx.addIssue({ code: 'custom', path: ['nodes', i, 'wlm', 'busySeconds'], message: `a ${node.wlm.state} node runs no job` });
      }
      if (node.wlm.timeLimitSeconds !== undefined && node.wlm.timeLimitSeconds < node.wlm.busySeconds) {
        ctx.addIssue({
          code: 'custom',
          path: ['nodes', i, 'wlm', 'timeLimitSeconds'],
          message: 'a job ends by its time limit: timeLimitSeconds must be at least busySeconds',
        });
      }
    });
  });

export type SiteDefinition = z.output<typeof siteDefinitionSchema>;
export type SiteDefinitionInput = z.input<typeof siteDefinitionSchema>;
export type SiteNode = SiteDefinition['nodes'][number];
export type SiteTiming = SiteDefinition['timing'];
export type ApiFault = SiteDefinition['apiFaults'][number];
export type SiteWorkload = NonNullable<SiteDefinition['workload']>;
export type CommandFault = SiteDefinition['commandFaults'][number];
export type { SiteBootSet, SiteBootTemplate } from '../core/site-file/site-definition';
export { templateName } from '../core/site-file/site-definition';
export type SiteSlurm = SiteDefinition['slurm'];

export function parseSiteDefinition(input: unknown, subject = 'site definition'): SiteDefinition {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidInputError(subject, [{ field: '', message: 'the site must be a mapping with at least `nodes`' }]);
  }
  return parseOrThrow(siteDefinitionSchema, input, subject);
}

/** Reads a site file: JSON when it ends in `.json`, YAML otherwise. */
export async function loadSiteFile(path: string): Promise<SiteDefinition> {
  const subject = `site file ${path}`;
  return parseSiteDefinition(await loadDocumentFile(path, subject), subject);
}
