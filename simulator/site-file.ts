import { z } from 'zod';
import { loadDocumentFile } from '../adapters/document-file';
import { environmentSchema, releaseSchema, siteEnvironmentsSchema } from '../core/environments';
import { InvalidInputError } from '../core/errors';
import { groupLabel, nodeName } from '../core/site/names';
import { CSM_NID_NAME_PATTERN, isNodeXname, parseNidNamePattern, nidName } from '../core/site/node-names';
import { parseOrThrow, seconds as secondsOf } from '../core/validation';
import { SlurmVersion } from './models/slurm-version';

export const WLM_STATES = ['IDLE', 'ALLOCATED', 'MIXED', 'COMPLETING', 'DRAINING', 'DRAINED', 'DOWN', 'FAIL'] as const;
export type SiteWlmState = (typeof WLM_STATES)[number];

/** `ssm`: the head node's SSM endpoint; a fault's `path` then matches the operation, e.g. `GetCommandInvocation`. */
export const SITE_SERVICES = ['workload-manager', 'boot-service', 'inventory', 'provisioner', 'ssm'] as const;
export type SiteServiceName = (typeof SITE_SERVICES)[number];

/** States in which a node cannot be running a job, so `busySeconds` would contradict them. */
const JOBLESS_STATES: readonly SiteWlmState[] = ['DRAINED', 'DOWN', 'FAIL'];

const nonEmpty = (what: string) => z.string({ error: `${what} must be a string` }).trim().min(1, `${what} must not be empty`);
const seconds = secondsOf(undefined, { min: 0, whole: false });
/** A job may run for longer than any wait the workflow takes: a year at most. */
const jobSeconds = secondsOf(undefined, { min: 0, whole: false, max: 365 * 24 * 3600 });
const runFault = z.enum(['fail', 'hang'], { error: "must be 'fail' or 'hang'" });

const wlmSchema = z.strictObject({
  state: z.enum(WLM_STATES, { error: `must be one of ${WLM_STATES.join(', ')}` }).default('IDLE'),
  /** Time left on the node's running job; a busy state without it runs a job that never ends. */
  busySeconds: jobSeconds.default(0),
  /**
   * Time left until the running job's time limit, what Slurm reports as its end (`end_time`, squeue's
   * `%L`); at least `busySeconds`. Absent: the job ends at its limit (`busySeconds`).
   */
  timeLimitSeconds: jobSeconds.optional(),
  reason: z.string().optional(),
  responding: z.boolean({ error: 'must be true or false' }).default(true),
});

const faultsSchema = z.strictObject({
  boot: runFault.optional(),
  returnToService: z.literal('never', { error: "must be 'never'" }).optional(),
  prepare: runFault.optional(),
  deploy: runFault.optional(),
  /** `ssh <node> nhc` on the head node (a rolling upgrade's health check): `fail` exits 1 with NHC's ERROR line, `hang` never ends. */
  healthCheck: runFault.optional(),
  /** Task-graph tasks by id (`setup_network: fail`): `fail` exits 1 at the task's end, `hang` never ends. */
  tasks: z.record(nonEmpty('a task id'), runFault).default({}),
});

const nodeSchema = z.strictObject({
  name: nodeName('name'),
  nid: z.number({ error: 'nid is required and must be a whole number' }).int('nid must be a whole number').min(0, 'nid must not be negative'),
  rack: nonEmpty('rack').optional(),
  role: nonEmpty('role').default('Compute'),
  tags: z.array(nonEmpty('a tag')).default([]),
  /** Deployment roles for task graphs (core/task-graph). */
  roles: z.array(nonEmpty('a role'), { error: 'roles must be a list of role names' }).default([]),
  labels: z.record(z.string(), z.string({ error: 'label values must be strings' })).default({}),
  wlm: wlmSchema.prefault({}),
  faults: faultsSchema.prefault({}),
  /** OpenCrowbar's gates, served by the inventory: a scheduler operates only on nodes alive and available. */
  alive: z.boolean({ error: 'alive must be true or false' }).default(true),
  available: z.boolean({ error: 'available must be true or false' }).default(true),
});

const positiveSeconds = (field: string) => z.number({ error: `${field} must be a number of seconds` }).positive(`${field} must be above 0`);

/**
 * A workload that keeps running: jobs arrive on every node that is not drained or out of service
 * and keep it busy `utilisation` of the time, lengths lognormal (capped at `max`), from `seed`.
 */
const workloadSchema = z.strictObject({
  utilisation: z.number({ error: 'utilisation must be a number' }).gt(0, 'utilisation must be above 0').lt(1, 'utilisation must be below 1'),
  jobSeconds: z
    .strictObject({
      median: positiveSeconds('median'),
      sigma: z.number({ error: 'sigma must be a number' }).min(0, 'sigma must not be negative').default(1),
      max: positiveSeconds('max').default(7 * 86400),
    })
    .refine((j) => j.max >= j.median, { error: 'max must be at least the median', path: ['max'] }),
  seed: z.number({ error: 'seed must be a whole number' }).int('seed must be a whole number').default(1),
  /**
   * Each job's length is its time limit (drawn from `jobSeconds`) times a fraction uniform in
   * [min, max]: real jobs end before their limit, and Slurm reports only the limit's end.
   */
  endFraction: z
    .strictObject({
      min: z.number({ error: 'min must be a number' }).gt(0, 'min must be above 0').max(1, 'min must be at most 1'),
      max: z.number({ error: 'max must be a number' }).gt(0, 'max must be above 0').max(1, 'max must be at most 1'),
    })
    .refine((f) => f.max >= f.min, { error: 'max must be at least min', path: ['max'] })
    .default({ min: 1, max: 1 }),
});

const httpError = 'status is required and must be an HTTP error status (400-599)';
const apiFaultSchema = z.strictObject({
  service: z.enum(SITE_SERVICES, { error: `must be one of ${SITE_SERVICES.join(', ')}` }),
  method: z.enum(['GET', 'POST', 'DELETE'], { error: 'must be GET, POST or DELETE' }).optional(),
  /** Matches when the request path contains this text. */
  path: nonEmpty('path').optional(),
  status: z.number({ error: httpError }).int(httpError).min(400, httpError).max(599, httpError).optional(),
  /** Leave the request unanswered instead (not served either): the client meets its timeout. */
  hang: z.literal(true, { error: 'must be true' }).optional(),
  count: z.number().int().min(1, 'must be at least 1').default(1),
  /** Matching calls let through before the faults start. */
  afterCalls: z.number().int().min(0, 'must not be negative').default(0),
}).refine((f) => (f.status === undefined) !== (f.hang === undefined), { error: `give exactly one of status (${httpError}) and hang: true`, path: ['status'] });

/** A command run on the simulated head node (through SSM) that misbehaves: exits non-zero, or never finishes (SSM TimedOut). */
const commandFaultSchema = z.strictObject({
  /** Matches when the command line contains this text, e.g. `scontrol reboot` or `wwctl`. */
  match: nonEmpty('match'),
  exitCode: z.number().int().min(1, 'must be 1-255').max(255, 'must be 1-255').optional(),
  hang: z.literal(true, { error: 'must be true' }).optional(),
  stderr: z.string().default('injected command fault'),
  count: z.number().int().min(1, 'must be at least 1').default(1),
  afterCalls: z.number().int().min(0, 'must not be negative').default(0),
});

/**
 * A BOS v2 boot set (Cray-HPE/bos api/openapi.yaml.in, V2BootSet): which nodes a session template
 * boots. BOS's session setup (src/bos/operators/session_setup.py) unites node_list, the members of
 * node_groups and the nodes of node_roles_groups (HSM Role, or Role_SubRole), then intersects that
 * with the session's limit and drops nodes disabled in HSM.
 */
const bootSetSchema = z.strictObject({
  node_list: z.array(nodeName('a node_list entry')).optional(),
  node_groups: z.array(z.string({ error: 'a node_groups entry must be a group label' })).optional(),
  node_roles_groups: z.array(z.string({ error: 'a node_roles_groups entry must be a role' })).optional(),
  /** HSM's Arch of the nodes booted (X86 also takes nodes of unknown arch); the simulated nodes are X86. */
  arch: z.enum(['X86', 'ARM', 'Other', 'Unknown'], { error: 'arch must be X86, ARM, Other or Unknown' }).optional(),
});

/** A boot template: a name alone (the limit says which nodes it boots), or a BOS session template with its boot sets. */
const bootTemplateSchema = z.union(
  [
    nonEmpty('a template name'),
    z.strictObject({
      name: nonEmpty('name'),
      bootSets: z.record(nonEmpty('a boot set name'), bootSetSchema, { error: 'bootSets must map boot set names to boot sets' }).refine((sets) => Object.keys(sets).length > 0, 'a session template has at least one boot set'),
    }),
  ],
  { error: 'a boot template is a name, or {name, bootSets: {<set>: {node_list, node_groups, node_roles_groups}}}' },
);

/**
 * A CSM-style site (Cray's System Management): its nodes are xnames in HSM and BOS, and Slurm
 * names them from their nid by `slurmNodeNames` (CSM's `nid{nid:06}`); its HSM checks labels and
 * member ids as SMD does.
 */
const csmSchema = z.strictObject({
  slurmNodeNames: z
    .string({ error: 'slurmNodeNames must be a pattern such as nid{nid:06}' })
    .default(CSM_NID_NAME_PATTERN)
    .superRefine((text, ctx) => {
      const parsed = parseNidNamePattern(text);
      if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
    }),
});

/**
 * The simulated Slurm's release and slurm.conf settings that shape what a node does (see
 * simulator/README.md). The defaults keep a default site's reboots (bootSeconds 300 + returnSeconds
 * 60) inside both timeouts; Slurm's own defaults are ReturnToService=0, SlurmdTimeout=300, ResumeTimeout=60.
 */
const slurmSchema = z.strictObject({
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
    }),
  /** slurm.conf ReturnToService: what a DOWN node that registers again becomes (0: stays DOWN; 1: only after `Not responding` with no reboot; 2: back). */
  returnToService: z.union([z.literal(0), z.literal(1), z.literal(2)], { error: 'returnToService must be 0, 1 or 2' }).default(2),
  /** slurm.conf SlurmdTimeout: a node whose slurmd is gone this long (a reboot through the boot service) is set DOWN, ` : Not responding` appended to its reason. */
  slurmdTimeoutSeconds: secondsOf(undefined, { min: 1, whole: true }).default(600),
  /** slurm.conf ResumeTimeout: a `scontrol reboot` not back by then is set DOWN, ` : reboot timed out` appended. */
  resumeTimeoutSeconds: secondsOf(undefined, { min: 1, whole: true }).default(600),
  /** slurm.conf AccountingStorageType: from 23.11, without one a node coming up keeps its reason. */
  accountingStorage: z.enum(['slurmdbd', 'none'], { error: "must be 'slurmdbd' or 'none'" }).default('slurmdbd'),
});

export const siteDefinitionSchema = z
  .strictObject({
    nodes: z.array(nodeSchema, { error: 'nodes is required and must be a list' }).min(1, 'at least one node is required'),
    groups: z.record(groupLabel(), z.array(nodeName('a member'), { error: 'must be a list of node names' })).default({}),
    bootTemplates: z.array(bootTemplateSchema).default([]),
    /** HSM exclusive groups: a node is a member of at most one group of each (Cray-HPE/hms-smd pkg/sm/groups.go ExclusiveGroup). */
    exclusiveGroups: z.record(nonEmpty('an exclusive group name'), z.array(groupLabel('a group label'), { error: 'must be a list of group labels' })).default({}),
    csm: csmSchema.optional(),
    timing: z
      .strictObject({
        bootSeconds: seconds.default(300),
        returnSeconds: seconds.default(60),
        prepareSeconds: seconds.default(120),
        deploySeconds: seconds.default(600),
        /** How long a task-graph task (shell, puppet, ...) runs on a node. */
        taskSeconds: seconds.default(30),
        /** How long the Epilog runs after a job ends: the node shows COMPLETING meanwhile. */
        epilogSeconds: seconds.default(0),
      })
      .prefault({}),
    apiFaults: z.array(apiFaultSchema).default([]),
    workload: workloadSchema.optional(),
    slurm: slurmSchema.prefault({}),
    commandFaults: z.array(commandFaultSchema).default([]),
    /** Fuel's releases and environments (clusters), kept by the store and served by the API. */
    releases: z.array(releaseSchema, { error: 'releases must be a list' }).default([]),
    environments: z.array(environmentSchema, { error: 'environments must be a list' }).default([]),
  })
  .superRefine((site, ctx) => {
    // The cross checks of releases and environments live with their schemas.
    const environments = siteEnvironmentsSchema.safeParse({ releases: site.releases, environments: site.environments });
    if (!environments.success) for (const issue of environments.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    const firstByName = new Map<string, number>();
    const firstByNid = new Map<number, number>();
    site.nodes.forEach((node, i) => {
      const sameName = firstByName.get(node.name);
      if (sameName === undefined) firstByName.set(node.name, i);
      else ctx.addIssue({ code: 'custom', path: ['nodes', i, 'name'], message: `duplicate node name '${node.name}' (also nodes[${sameName}])` });
      const sameNid = firstByNid.get(node.nid);
      if (sameNid === undefined) firstByNid.set(node.nid, i);
      else ctx.addIssue({ code: 'custom', path: ['nodes', i, 'nid'], message: `duplicate nid ${node.nid} (also nodes[${sameNid}])` });
      if (node.wlm.busySeconds > 0 && JOBLESS_STATES.includes(node.wlm.state)) {
        ctx.addIssue({ code: 'custom', path: ['nodes', i, 'wlm', 'busySeconds'], message: `a ${node.wlm.state} node runs no job` });
      }
      if (node.wlm.timeLimitSeconds !== undefined && node.wlm.timeLimitSeconds < node.wlm.busySeconds) {
        ctx.addIssue({ code: 'custom', path: ['nodes', i, 'wlm', 'timeLimitSeconds'], message: 'a job ends by its time limit: timeLimitSeconds must be at least busySeconds' });
      }
    });
    // An environment's nodes are site nodes (by name): the side-by-side upgrade reimages them. A release installs with one of the site's templates.
    site.environments.forEach((env, e) =>
      env.nodes.forEach((node, n) => {
        if (!firstByName.has(node.name)) ctx.addIssue({ code: 'custom', path: ['environments', e, 'nodes', n, 'name'], message: `'${node.name}' is not a node of the site` });
      }),
    );
    const templateNames = site.bootTemplates.map((t) => (typeof t === 'string' ? t : t.name));
    site.releases.forEach((release, r) => {
      if (!templateNames.includes(release.bootTemplate)) {
        ctx.addIssue({ code: 'custom', path: ['releases', r, 'bootTemplate'], message: `'${release.bootTemplate}' is not one of the site's bootTemplates` });
      }
    });
    if (site.csm) {
      const pattern = parseNidNamePattern(site.csm.slurmNodeNames);
      const slurmNames = new Map<string, number>();
      site.nodes.forEach((node, i) => {
        if (!isNodeXname(node.name)) ctx.addIssue({ code: 'custom', path: ['nodes', i, 'name'], message: `'${node.name}' is not a node xname (xXcCsSbBnN): a CSM site names its nodes by xname` });
        if (typeof pattern !== 'string') {
          const slurmName = nidName(pattern, node.nid);
          const clash = slurmNames.get(slurmName);
          if (clash !== undefined) ctx.addIssue({ code: 'custom', path: ['nodes', i, 'nid'], message: `Slurm name ${slurmName} also names nodes[${clash}]` });
          slurmNames.set(slurmName, i);
        }
      });
      for (const label of Object.keys(site.groups)) {
        if (!/^[-a-z0-9:._]+$/.test(label)) ctx.addIssue({ code: 'custom', path: ['groups', label], message: `'${label}' is not an HSM group label: lowercase letters, digits, '-', ':', '.', '_'` });
      }
    }
    const exclusiveOf = new Map<string, string>();
    for (const [exclusive, labels] of Object.entries(site.exclusiveGroups)) {
      labels.forEach((label, k) => {
        if (!(label in site.groups)) ctx.addIssue({ code: 'custom', path: ['exclusiveGroups', exclusive, k], message: `'${label}' is not a group of the site` });
        const other = exclusiveOf.get(label);
        if (other !== undefined) ctx.addIssue({ code: 'custom', path: ['exclusiveGroups', exclusive, k], message: `'${label}' is in exclusive group '${other}' already` });
        exclusiveOf.set(label, exclusive);
      });
      const holder = new Map<string, string>();
      for (const label of labels) {
        for (const member of site.groups[label] ?? []) {
          const first = holder.get(member);
          if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['groups', label], message: `'${member}' is also in '${first}', of the same exclusive group '${exclusive}'` });
          holder.set(member, label);
        }
      }
    }
    for (const [label, members] of Object.entries(site.groups)) {
      const seen = new Set<string>();
      members.forEach((member, k) => {
        if (!firstByName.has(member)) ctx.addIssue({ code: 'custom', path: ['groups', label, k], message: `'${member}' is not a node of the site` });
        else if (seen.has(member)) ctx.addIssue({ code: 'custom', path: ['groups', label, k], message: `'${member}' is listed twice` });
        seen.add(member);
      });
    }
  });

export type SiteDefinition = z.output<typeof siteDefinitionSchema>;
export type SiteDefinitionInput = z.input<typeof siteDefinitionSchema>;
export type SiteNode = SiteDefinition['nodes'][number];
export type SiteTiming = SiteDefinition['timing'];
export type ApiFault = SiteDefinition['apiFaults'][number];
export type SiteWorkload = NonNullable<SiteDefinition['workload']>;
export type CommandFault = SiteDefinition['commandFaults'][number];
export type SiteBootTemplate = SiteDefinition['bootTemplates'][number];
export type SiteBootSet = z.output<typeof bootSetSchema>;

/** The name of a site boot template, whichever form it has. */
export const templateName = (template: SiteBootTemplate): string => (typeof template === 'string' ? template : template.name);
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
