/**
 * The site connection profile: one document that says how to reach each site service, read the
 * same way by the CLI (`--site-config`), the CDK stack and `rollout simulate --profile-out`.
 * Pure schema: resolving tokens, files and secrets is the adapters' job.
 */
import { z } from 'zod';
import { keyPlaces, parseOrThrow, timeScale, type KeyPlaces } from '../validation';
import { CSM_NID_NAME_PATTERN, parseNidNamePattern } from './node-names';

const nonEmpty = (what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .trim()
    .min(1, `${what} must not be empty`);

const url = nonEmpty('the URL').refine((value) => {
  try {
    const parsed = new URL(value);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:';
  } catch {
    return false;
  }
}, 'must be an http:// or https:// URL');

const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/;

/** Where a token comes from; never the token itself, so a profile can be committed. */
export const secretReferenceSchema = z
  .strictObject({
    env: nonEmpty('env').describe('Name of an environment variable holding the token').optional(),
    file: nonEmpty('file').describe('Path of a file holding the token (surrounding whitespace ignored)').optional(),
    secretArn: z
      .string({ error: 'secretArn must be a string' })
      .regex(SECRET_ARN, 'must be the ARN of a Secrets Manager secret')
      .describe('Secrets Manager secret whose SecretString is the token; read at run time, never copied into configuration')
      .optional(),
  })
  .refine((ref) => [ref.env, ref.file, ref.secretArn].filter((v) => v !== undefined).length === 1, 'give exactly one of env, file, secretArn')
  .describe('A token by reference: {env: NAME}, {file: PATH} or {secretArn: ARN}');

const INSTANCE_ID = /^(i|mi)-[0-9a-f]{8,17}$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

export const transportSchema = z
  .discriminatedUnion(
    'type',
    [
      z
        .strictObject({
          type: z.literal('ssm').describe('SSM Run Command on a head node'),
          instanceIds: z
            .array(z.string().regex(INSTANCE_ID, 'must be an EC2 or managed instance id (i-... or mi-...)'), { error: 'instanceIds must be a list' })
            .min(1, 'name at least one instance')
            .max(50, 'SSM sends a command to at most 50 instances by id')
            .describe("The head node's EC2 or managed instance id (i-... or mi-...); the first that answers runs the command"),
          region: z.string({ error: 'region is required' }).regex(REGION, 'must be an AWS region such as us-east-1').describe("The instances' AWS region"),
          /** An SSM endpoint override: a VPC endpoint, or the simulator's. */
          endpoint: url.optional().describe("An SSM endpoint override: a VPC endpoint, or the simulator's"),
          /** How long one SSM API call may take before it is given up and said (default 10, as the HTTP connectors'). */
          requestTimeoutSeconds: z
            .number({ error: 'must be a number of seconds' })
            .min(0.05, 'must be at least 0.05')
            .max(300, 'must be at most 300')
            .optional()
            .describe("How long one SSM API call may take before it is given up (default 10, as the HTTP connectors')"),
          /** SSM's status-change notifications of these commands reach the control plane (issue 29): health check waits park until them. */
          commandNotifications: z
            .boolean({ error: 'must be true or false' })
            .optional()
            .describe(
              "SSM's status-change notifications of these commands reach the control plane as site events of kind command (EC2 Command Invocation Status-change Notification; a simulated site's are bridged in process): a wait for a node's health check parks until its end instead of polling, its result read once after, with or without the site's triggers (a wait that also waits for a node to register parks only with them); the backstop poll catches a lost one. Default false",
            ),
        })
        .describe('SSM Run Command (AWS-RunShellScript) on a head node'),
      z.strictObject({ type: z.literal('local').describe('Commands run on this host') }).describe('Commands run on this host (an admin or head node)'),
    ],
    { error: 'must be {type: ssm, instanceIds, region} or {type: local}' },
  )
  .describe('How commands reach the cluster');

/** A command template may use only these placeholders; each is filled with a checked, quoted value. */
const commandTemplate = (what: string, placeholders: readonly string[]) =>
  nonEmpty(what).superRefine((text, ctx) => {
    for (const [, name] of text.matchAll(/\{([^{}]*)\}/g)) {
      if (!placeholders.includes(name!)) {
        ctx.addIssue({ code: 'custom', message: `unknown placeholder {${name}}: use ${placeholders.map((p) => `{${p}}`).join(', ')}` });
      }
    }
  });

const timeoutSeconds = z.number({ error: 'must be a number of seconds' }).positive('must be positive').max(300, 'at most 300 s per request').optional();

/**
 * slurmrestd's data_parser versions the connector speaks: v0.0.39 (Slurm 23.02) to v0.0.45 (26.05),
 * from SchedMD/slurm's src/plugins/data_parser/ and src/slurmrestd/plugins/openapi/slurmctld/nodes.c.
 * Slurm ships each for about three releases (24.05: v0.0.39-41; 24.11: v0.0.40-42; 25.05: v0.0.40-43;
 * 25.11: v0.0.41-44; 26.05: v0.0.42-45): the default is the one every release from 24.11 to 26.05 serves.
 */
export const SLURMRESTD_VERSIONS = ['v0.0.39', 'v0.0.40', 'v0.0.41', 'v0.0.42', 'v0.0.43', 'v0.0.44', 'v0.0.45'] as const;
export const DEFAULT_SLURMRESTD_VERSION = 'v0.0.42';

/** Why a slurmrestd version cannot drive a rolling upgrade, or undefined when it can. */
export function slurmrestdVersionProblem(version: string): string | undefined {
  if ((SLURMRESTD_VERSIONS as readonly string[]).includes(version)) return undefined;
  if (/^v0\.0\.3[0-8]$/.test(version)) {
    return `${version} cannot update nodes (Slurm 22.05's slurmrestd serves GET /slurm/${version}/node/{name} only: no drain, resume or fail); use workloadManager: {type: scontrol} with a transport to the head node, or a slurmrestd of Slurm 23.02 or later (${SLURMRESTD_VERSIONS[0]} to ${SLURMRESTD_VERSIONS.at(-1)})`;
  }
  return `must be one of ${SLURMRESTD_VERSIONS.join(', ')} (slurmrestd's data_parser versions from Slurm 23.02 to 26.05)`;
}

/** The poll kept while waits are resumed by the site's events (a site profile's siteEvents, a simulated site's slurm.siteEvents). */
export const backstopSecondsSchema = z
  .number({ error: 'backstopSeconds must be a number of seconds' })
  .int('backstopSeconds must be a whole number')
  .min(10, 'backstopSeconds must be at least 10')
  .max(3600, 'backstopSeconds must be at most 3600')
  .optional()
  .describe("The poll that still runs while a wait is resumed by events, catching a lost firing or a dead relay; default 10 times the session's poll interval");

/** The words of a relay command: an absolute program, then words without spaces, quotes or shell characters (slurmctld splits the program on spaces, it runs no shell). */
const RELAY_COMMAND = /^\/[A-Za-z0-9._+/-]+( [A-Za-z0-9._+/:=@,%-]+)*$/;

/**
 * Waits resumed by the site's events (issue 29): the session sets Slurm triggers (`strigger --set --flags=PERM`)
 * whose program is this relay command, and waits on a callback until a firing (or the backstop poll) wakes it.
 */
export const siteEventsProfileSchema = z
  .strictObject({
    relay: z
      .string({ error: 'relay must be a command' })
      .regex(
        RELAY_COMMAND,
        'relay must be an absolute program and its words, without quotes or shell characters, e.g. /usr/local/bin/rollout relay deliver --spool /var/spool/rollout-relay',
      )
      .max(900, 'relay must be at most 900 characters')
      .describe(
        "The relay command slurmctld runs for a firing, as strigger's --program takes it (an absolute path, then its words); the session adds `--event <up|down|drained> --session <id>` and slurmctld the hostlist. E.g. `/usr/local/bin/rollout relay deliver --spool /var/spool/rollout-relay --endpoint http://10.0.0.5:8084`",
      ),
    spool: z
      .string({ error: 'spool must be a directory' })
      .regex(/^\/[A-Za-z0-9._+/-]+$/, 'spool must be an absolute directory path without spaces or shell characters')
      .optional()
      .describe(
        "The relay's spool directory when it is on this host (the relay's --spool): the embedded runtime and `rollout serve` read the firings from it themselves, no endpoint needed",
      ),
    backstopSeconds: backstopSecondsSchema,
  })
  .describe(
    "Resume the waits for nodes (drained, back, down) from Slurm's triggers through a relay, with a slow backstop poll; without it every wait is a poll",
  );
export type SiteEventsProfile = z.output<typeof siteEventsProfileSchema>;

export const workloadManagerProfileSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({
      type: z.literal('slurmrestd').describe("Slurm's REST API, slurmrestd (Slurm 23.02 or later)"),
      url: url.describe("slurmrestd's base URL"),
      apiVersion: z
        .string()
        .superRefine((version, ctx) => {
          const problem = slurmrestdVersionProblem(version);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .default(DEFAULT_SLURMRESTD_VERSION)
        .describe("slurmrestd's data_parser version, v0.0.39 (Slurm 23.02) to v0.0.45 (26.05)"),
      user: nonEmpty('user').optional().describe('Sent as X-SLURM-USER-NAME'),
      token: secretReferenceSchema.optional().describe('Slurm JWT, sent as X-SLURM-USER-TOKEN'),
      timeoutSeconds: timeoutSeconds.describe('Seconds one request may take (at most 300)'),
    }),
    z.strictObject({
      type: z.literal('scontrol').describe("Slurm's commands (scontrol, sinfo, squeue) on the head node, through a transport (Slurm 22.05 included)"),
      transport: transportSchema.optional().describe("How the commands reach the head node; default the profile's transport"),
      siteEvents: siteEventsProfileSchema.optional(),
    }),
  ],
  { error: 'type must be slurmrestd or scontrol' },
);

export const bootServiceProfileSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({
      type: z.literal('bos').describe("Cray CSM's Boot Orchestration Service (v2)"),
      url: url.describe("BOS's base URL"),
      token: secretReferenceSchema.optional().describe('A bearer token, by reference'),
      timeoutSeconds: timeoutSeconds.describe('Seconds one request may take (at most 300)'),
    }),
    z.strictObject({
      type: z.literal('slurm-reboot').describe('`scontrol reboot` through a transport, after an optional prepare command that selects the image'),
      transport: transportSchema.optional().describe("How the commands reach the head node; default the profile's transport"),
      /** Selects the new image before the reboot, e.g. `wwctl node set --image {template} {nodes}`. */
      prepareCommand: commandTemplate('prepareCommand', ['template', 'nodes'])
        .optional()
        .describe('Selects the new image before the reboot, e.g. `wwctl node set --image {template} {nodes}` (placeholders {template} and {nodes} only)'),
    }),
  ],
  { error: 'type must be bos or slurm-reboot' },
);

export const inventoryProfileSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({
      type: z.literal('hsm').describe("Cray CSM's Hardware State Manager"),
      url: url.describe("HSM's base URL"),
      token: secretReferenceSchema.optional().describe('A bearer token, by reference'),
      timeoutSeconds: timeoutSeconds.describe('Seconds one request may take (at most 300)'),
      /** A lab flag: false for an HSM-like service whose node ids are not xnames (the simulator serving a non-Cray site). */
      xnames: z
        .boolean({ error: 'xnames must be true or false' })
        .default(true)
        .describe('Check member ids as node xnames before sending them (HSM accepts nothing else); false only for an HSM-like stand-in'),
    }),
    z.strictObject({
      type: z.literal('slurm').describe("Slurm's own node list (scontrol) as the inventory: groups are its partitions and features"),
      transport: transportSchema.optional().describe("How the commands reach the head node; default the profile's transport"),
      /** The feature key of the nodes' deployment roles (task graphs): `role` reads `role:controller`. */
      roleKey: z
        .string({ error: 'roleKey must be a string' })
        .regex(/^[A-Za-z0-9][A-Za-z0-9._=-]{0,63}$/, 'roleKey must be a feature key: letters, digits, `.`, `_`, `=`, `-`')
        .optional()
        .describe("Feature key of the deployment roles: every '<roleKey>:<role>' feature is a role of the node (default role)"),
    }),
    z.strictObject({
      type: z.literal('file').describe('A site file read as the inventory: its nodes, groups and boot templates'),
      path: nonEmpty('path').describe("The site file's path (YAML or JSON), relative to the working directory"),
    }),
  ],
  { error: 'type must be hsm, slurm or file' },
);

export const provisionerProfileSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({
      type: z.literal('http').describe('Our provisioner API over HTTP (prepare and deploy actions per node)'),
      url: url.describe("The provisioner API's base URL"),
      token: secretReferenceSchema.optional().describe('A bearer token, by reference'),
      timeoutSeconds: timeoutSeconds.describe('Seconds one request may take (at most 300)'),
    }),
    z.strictObject({
      type: z.literal('command').describe('Prepare and deploy as commands on the head node, through a transport'),
      transport: transportSchema.optional().describe("How the commands reach the head node; default the profile's transport"),
      commands: z
        .strictObject({
          prepare: commandTemplate('prepare', ['nodes']).describe("The prepare command, {nodes} the nodes' hostlist; exit 0 is success"),
          deploy: commandTemplate('deploy', ['nodes']).describe("The deploy command, {nodes} the nodes' hostlist; exit 0 is success"),
        })
        .describe('The commands of the two actions'),
    }),
  ],
  { error: 'type must be http or command' },
);

/** How the head node reaches the nodes by default: pdsh over the nodes as one hostlist. */
export const DEFAULT_NODE_EXEC = 'pdsh -S -w {nodes} {command}';
/** Nodes one `{nodes}` command reaches at most: their exit statuses stay far inside SSM's 24,000 bytes of output. */
export const DEFAULT_FANOUT = 256;

/** The node-exec form: `{command}` (the task's command, one quoted word) and `{nodes}` (a hostlist) or `{node}` (one node per command). */
const nodeExec = commandTemplate('nodeExec', ['nodes', 'node', 'command']).superRefine((text, ctx) => {
  const uses = (name: string) => text.includes(`{${name}}`);
  if (!uses('command')) ctx.addIssue({ code: 'custom', message: 'must place the command: {command}' });
  if (uses('nodes') === uses('node'))
    ctx.addIssue({
      code: 'custom',
      message: 'must name the nodes once: {nodes} (a hostlist, e.g. pdsh -w {nodes}) or {node} (one per command, e.g. ssh {node})',
    });
});

/** Task-graph tasks that run commands on the nodes (shell, puppet, upload_file, rsync), through the head node. */
export const taskExecutionProfileSchema = z
  .strictObject({
    /** The head node's transport; default the profile's. */
    transport: transportSchema.optional().describe("The head node's transport; default the profile's"),
    nodeExec: nodeExec
      .default(DEFAULT_NODE_EXEC)
      .describe('How the head node runs a command on nodes, e.g. "pdsh -S -w {nodes} {command}" or "ssh -o BatchMode=yes {node} {command}"'),
    /** Nodes one `{nodes}` command reaches at most (a longer list goes in several commands). */
    fanout: z
      .number({ error: 'fanout must be a number of nodes' })
      .int('fanout must be a whole number')
      .min(1, 'fanout must be at least 1')
      .max(1000, 'fanout must be at most 1000')
      .default(DEFAULT_FANOUT)
      .describe('Nodes one {nodes} command reaches at most (a longer list goes in several commands)'),
  })
  .describe('How task-graph commands reach the nodes');

/** An absolute program path: no spaces, quotes or shell characters (it is quoted anyway). */
const programPath = (program: string) =>
  z
    .string({ error: 'must be a string' })
    .regex(/^\/[A-Za-z0-9._+/-]+$/, `must be an absolute path such as /opt/slurm/bin/${program}`)
    .describe(`Where ${program} is on the head node`)
    .optional();

/**
 * Where the Slurm commands are, for a head node whose commands run without them on PATH (SSM's
 * AWS-RunShellScript has only the system PATH: AWS ParallelCluster keeps them in /opt/slurm/bin).
 */
export const commandPathsSchema = z
  .strictObject({ scontrol: programPath('scontrol'), sinfo: programPath('sinfo'), squeue: programPath('squeue'), strigger: programPath('strigger') })
  .describe('Absolute paths of scontrol, sinfo, squeue and strigger; each defaults to its name, found on PATH');

/**
 * How the workload manager names the inventory's nodes: `same` (one name for both), or a pattern
 * that makes Slurm's name from the inventory's nid (`nid{nid:06}`, CSM's; `nid` for short).
 */
export const nodeNamesSchema = z
  .strictObject({
    workloadManager: z
      .string({ error: "workloadManager must be 'same', 'nid' or a pattern such as nid{nid:06}" })
      .transform((text, ctx) => {
        if (text === 'same') return 'same' as const;
        const pattern = text === 'nid' ? CSM_NID_NAME_PATTERN : text;
        const parsed = parseNidNamePattern(pattern);
        if (typeof parsed === 'string') {
          ctx.addIssue({ code: 'custom', message: `${JSON.stringify(text)} ${parsed}, or 'same'` });
          return z.NEVER;
        }
        return parsed.text;
      })
      .describe("Slurm's node names: 'same' as the inventory's, or made from the inventory's nid by a pattern ('nid' = CSM's nid{nid:06})"),
  })
  .describe("How the workload manager names the inventory's nodes (default: nid{nid:06} with an hsm inventory, else the same names)");

/** The command-driven connector of each service: it reaches the site through a transport (its own, or the profile's). */
export const TRANSPORT_USERS = [
  ['workloadManager', 'scontrol'],
  ['bootService', 'slurm-reboot'],
  ['inventory', 'slurm'],
  ['provisioner', 'command'],
] as const;

export const siteProfileSchema = z
  .strictObject({
    workloadManager: workloadManagerProfileSchema.describe('The workload manager: slurmrestd, or scontrol through a transport'),
    bootService: bootServiceProfileSchema.describe('The boot service: BOS, or scontrol reboot through a transport'),
    inventory: inventoryProfileSchema.describe('The inventory: HSM, Slurm itself, or a site file'),
    /** Only group deployments need one. */
    provisioner: provisionerProfileSchema.optional().describe('The provisioner (prepare and deploy actions): only group deployments need one'),
    /** The transport of every command-driven connector that names none of its own. */
    transport: transportSchema.optional().describe('The transport of every command-driven connector that names none of its own'),
    /** How task-graph commands reach the nodes (their transport, the node-exec form). */
    tasks: taskExecutionProfileSchema.optional(),
    commandPaths: commandPathsSchema.optional(),
    /** One node, two names: how Slurm's names follow from the inventory's (CSM: nids from HSM's NID). */
    nodeNames: nodeNamesSchema.optional(),
    /** Only for a site served by `rollout simulate`: its time runs `timeScale` times faster, its now is at `controlUrl`/sim/time. */
    simulatedTime: z
      .strictObject({
        timeScale: timeScale().describe("How many times faster than the wall clock the site's time runs"),
        controlUrl: url.describe("The simulator's control URL: its now is at <controlUrl>/sim/time"),
      })
      .optional()
      .describe('Only for a site served by `rollout simulate`: its time runs timeScale times faster'),
    /** A lab flag: lets tokens travel over plain http. */
    allowInsecureHttp: z.boolean({ error: 'must be true or false' }).default(false).describe('A lab flag: lets tokens travel over plain http'),
  })
  .superRefine((profile, ctx) => {
    for (const [key, type] of TRANSPORT_USERS) {
      const service = profile[key] as { type: string; transport?: unknown } | undefined;
      if (service?.type === type && service.transport === undefined && profile.transport === undefined) {
        ctx.addIssue({ code: 'custom', path: [key, 'transport'], message: `a ${type} connector needs a transport (here or at the top level)` });
      }
    }
    if (profile.nodeNames && profile.nodeNames.workloadManager !== 'same' && profile.inventory.type === 'slurm') {
      ctx.addIssue({ code: 'custom', path: ['nodeNames', 'workloadManager'], message: "a slurm inventory names nodes as Slurm does: use 'same'" });
    }
    if (profile.allowInsecureHttp) return;
    for (const key of ['workloadManager', 'bootService', 'inventory', 'provisioner'] as const) {
      const service = profile[key] as { url?: string; token?: unknown } | undefined;
      if (service?.url !== undefined && service.token !== undefined && new URL(service.url).protocol !== 'https:') {
        ctx.addIssue({ code: 'custom', path: [key, 'url'], message: 'a token is only sent over https (set allowInsecureHttp: true in a lab)' });
      }
    }
  })
  .meta({
    title: 'Site connection profile',
    description: 'How baremetal-rollout reaches the workload manager, boot service, inventory and provisioner of one site',
  });

export type SiteProfile = z.output<typeof siteProfileSchema>;
export type SiteProfileInput = z.input<typeof siteProfileSchema>;
export type SecretReference = z.output<typeof secretReferenceSchema>;
export type TransportProfile = z.output<typeof transportSchema>;
export type WorkloadManagerProfile = SiteProfile['workloadManager'];
export type BootServiceProfile = SiteProfile['bootService'];
export type InventoryProfile = SiteProfile['inventory'];
export type ProvisionerProfile = NonNullable<SiteProfile['provisioner']>;
export type TaskExecutionProfile = z.output<typeof taskExecutionProfileSchema>;

/** Validates a profile, naming every problem by its path (`workloadManager.url: ...`). */
export function parseSiteProfile(input: unknown, subject = 'site profile'): SiteProfile {
  // A key at the wrong level (nodeExec at the top, commandPaths under workloadManager) is told where it belongs.
  siteProfileKeyPlaces ??= keyPlaces(siteProfileJsonSchema());
  return parseOrThrow(siteProfileSchema, input, subject, siteProfileKeyPlaces);
}

/** Where each profile key is valid, made once (from the profile's JSON Schema) by the first parse. */
let siteProfileKeyPlaces: KeyPlaces | undefined;

/**
 * The workload manager's name pattern the profile implies: its `nodeNames`, else CSM's
 * `nid{nid:06}` with an HSM inventory (CSM's Slurm names every node by nid), else the same names.
 */
export function workloadManagerNames(profile: Pick<SiteProfile, 'nodeNames' | 'inventory'>): string {
  return profile.nodeNames?.workloadManager ?? (profile.inventory.type === 'hsm' ? CSM_NID_NAME_PATTERN : 'same');
}

/** The transport a command-driven connector uses: its own, else the profile's. */
export function transportFor(profile: SiteProfile, service: { transport?: TransportProfile }): TransportProfile {
  const transport = service.transport ?? profile.transport;
  // parseSiteProfile has refused a profile where both are missing.
  if (!transport) throw new Error('no transport: the profile was not validated');
  return transport;
}

/** JSON Schema (draft 2020-12) of the profile file; written to schemas/ by a test. */
export function siteProfileJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(siteProfileSchema, { io: 'input', target: 'draft-2020-12' });
}
