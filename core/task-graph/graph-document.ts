import { z } from 'zod';

/**
 * The task graph document (Fuel's granular deployment, `deployment_tasks`): a list of items, each a
 * role group (`type: group`), a stage (`type: stage`) or a task (`shell`, `puppet`, `upload_file`,
 * `rsync`, and ours: `reboot`, `drain`, `resume`). Written as the bare list, or as an object with
 * `tasks` plus the cluster's status and the attribute layers.
 */

export const TASK_TYPES = ['shell', 'puppet', 'upload_file', 'rsync', 'reboot', 'drain', 'resume'] as const;
export type TaskType = (typeof TASK_TYPES)[number];

/** The stages every graph has, in this order; a graph may declare more. */
export const DEFAULT_STAGES = ['pre_deployment', 'deployment', 'post_deployment'] as const;
/** The stage of a task that names none. */
export const DEFAULT_TASK_STAGE = 'deployment';
/** Stages that run on every node at once: role groups order and chunk the others. */
export const UNGROUPED_STAGES: readonly string[] = ['pre_deployment', 'post_deployment'];

/** Ids reach operation ids, reports and commands: a conservative alphabet. */
export const ITEM_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const ITEM_ID_RULE = 'letters, digits, `_`, `.`, `-`, starting with a letter or digit, at most 128 characters';

const itemId = z.string({ error: 'must be a string' }).regex(ITEM_ID_PATTERN, `must be ${ITEM_ID_RULE}`);
const idList = z.array(itemId, { error: 'must be a list of ids' }).default([]);
/** Fuel writes a single role as a string too. */
const nameList = (what: string) =>
  z
    .union([z.string().min(1, `${what} must not be empty`), z.array(z.string().min(1, `${what} must not be empty`))], {
      error: `must be a ${what} or a list of them`,
    })
    .transform((v) => (typeof v === 'string' ? [v] : v));
const everyOrList = (what: string) =>
  z
    .union([z.literal('*'), z.array(z.string().min(1, `${what} must not be empty`))], { error: `must be '*' or a list of ${what}s` })
    .transform((v) => (v === '*' ? ['*'] : v));

const strategySchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('one_by_one').describe("The group's nodes one at a time") }),
    z.strictObject({
      type: z.literal('parallel').describe("The group's nodes together: all at once, or in chunks of amount"),
      /** Nodes of the group deployed together, chunk after chunk; absent: all at once. */
      amount: z
        .number({ error: 'amount must be a whole number of nodes' })
        .int('amount must be a whole number of nodes')
        .min(1, 'amount must be at least 1')
        .optional()
        .describe('Nodes of the group deployed together, chunk after chunk; absent: all at once'),
    }),
  ],
  { error: "must be 'one_by_one' or 'parallel'" },
);

const groupSchema = z.strictObject({
  id: itemId.describe("The group's id (tasks name it in groups)"),
  type: z.literal('group').describe('A role group: the nodes of its roles, ordered and chunked by its strategy'),
  role: nameList('role').describe('The role (or list of roles) whose nodes form the group'),
  requires: idList.describe('Groups that run before this one'),
  required_for: idList.describe('Groups that run after this one'),
  /** Tasks of this group (Fuel: "for ease of understanding"): they run on its nodes, as if they named the group. */
  tasks: idList.describe('Tasks of this group: they run on its nodes, as if they named the group'),
  parameters: z
    .strictObject({
      strategy: strategySchema
        .default({ type: 'parallel' })
        .describe("How the group's nodes go: `{type: one_by_one}`, `{type: parallel}` (all at once) or `{type: parallel, amount: N}` (chunks of N)"),
    })
    .prefault({})
    .describe("The group's strategy"),
});

const stageSchema = z.strictObject({
  id: itemId.describe("The stage's id; pre_deployment, deployment and post_deployment always exist, in that order"),
  type: z.literal('stage').describe('A stage: tasks run stage after stage; declared ones come after the three built-in ones unless ordered'),
  requires: idList.describe('Stages that run before this one'),
  required_for: idList.describe('Stages that run after this one'),
});

const timeout = z.number({ error: 'timeout must be a number of seconds' }).positive('timeout must be above 0');
const taskTimeout = timeout
  .optional()
  .describe("Seconds the task may run on a node; without one, the run's taskTimeoutSeconds (`--task-timeout`, default 3600). Past it the task ends as timeout");
const text = (what: string) => z.string({ error: `${what} is required and must be a string` }).min(1, `${what} must not be empty`);

const params = <S extends z.ZodRawShape>(shape: S) =>
  z.looseObject(shape, {
    error: (issue) => (issue.input === undefined ? `parameters are required (${Object.keys(shape).join(', ')})` : 'parameters must be a mapping'),
  });

/** Parameters by task type: what each needs, plus anything else the attribute layers or a runner use. */
const parametersByType = {
  shell: params({
    cmd: text('cmd').describe('The command, run as written by /bin/sh on the node'),
    timeout: taskTimeout,
    cwd: z.string().optional().describe('The directory the command runs in'),
  }),
  puppet: params({
    puppet_manifest: text('puppet_manifest').describe('The manifest, applied with `puppet apply --detailed-exitcodes` (0 and 2 succeed)'),
    puppet_modules: z.string().optional().describe('The module path'),
    timeout: taskTimeout,
    cwd: z.string().optional().describe('The directory puppet runs in'),
  }),
  upload_file: params({
    path: text('path').describe('The file written on the node'),
    data: z.string({ error: 'data is required and must be a string' }).describe("The file's contents"),
    timeout: taskTimeout,
  }),
  rsync: params({ src: text('src').describe('What rsync copies from'), dst: text('dst').describe('Where rsync copies to, on the node'), timeout: taskTimeout }),
  reboot: params({ template: z.string().optional().describe('The boot template the node reboots into: needed to run'), timeout: taskTimeout }),
  drain: params({
    reason: z.string().optional().describe("Added to the drain reason after the run's claim (`rollout-task <run id> [<reason>] task=<id>`)"),
    timeout: taskTimeout,
  }),
  resume: params({ timeout: taskTimeout }),
} satisfies Record<TaskType, z.ZodType>;

/** The parameters a task of this type takes: what its merged parameters (attribute layers in) are checked against too. */
export function taskParametersSchema(type: TaskType): z.ZodType<Record<string, unknown>, Record<string, unknown>> {
  return parametersByType[type];
}

function taskSchema<T extends TaskType>(type: T) {
  const parameters: z.ZodType<Record<string, unknown>, Record<string, unknown>> = parametersByType[type];
  return z.strictObject({
    id: itemId.describe("The task's id"),
    type: z.literal(type).describe('The task type: shell, puppet, upload_file, rsync, reboot, drain or resume'),
    /** Roles whose nodes run the task; `'*'`: every node of the deployment. */
    role: everyOrList('role').optional().describe("Roles whose nodes run the task; `'*'`: every node of the deployment"),
    /** Role groups whose nodes run the task; `'*'`: every group. */
    groups: everyOrList('group').optional().describe("Role groups whose nodes run the task; `'*'`: every group"),
    requires: idList.describe("Tasks (or a stage, if consistent with the task's own) that end before this one starts"),
    required_for: idList.describe("Tasks (or a stage, if consistent with the task's own) that start after this one ends"),
    stage: itemId.optional().describe('The stage the task runs in (default deployment)'),
    // Types whose parameters are all optional may leave them out.
    parameters: (parameters.safeParse({}).success ? parameters.optional().transform((p) => p ?? {}) : parameters).describe(
      `The ${type} task's parameters, merged with the attribute layers (release, environment, roles, nodes)`,
    ),
    /** A strict expression over the cluster (core/task-graph/conditions.ts); false drops the task. */
    condition: z
      .string({ error: 'condition must be a string' })
      .optional()
      .describe(
        "A strict expression over the cluster (`cluster.status == 'operational' and nodes_count() > 10`, `role_in_deployment('ceph-osd')`, `role_in_cluster('zabbix-server')`); false drops the task",
      ),
  });
}

const taskSchemas = [
  taskSchema('shell'),
  taskSchema('puppet'),
  taskSchema('upload_file'),
  taskSchema('rsync'),
  taskSchema('reboot'),
  taskSchema('drain'),
  taskSchema('resume'),
] as const;

const itemSchema = z.discriminatedUnion('type', [groupSchema, stageSchema, ...taskSchemas], {
  error: `must be one of group, stage, ${TASK_TYPES.join(', ')}`,
});

const parameterLayer = z.record(itemId, z.record(z.string(), z.unknown()), { error: 'must map task ids to parameters' });

/** Parameters each task gets on top of its own, later layers winning (deep merge). */
const attributesSchema = z.strictObject({
  release: parameterLayer.default({}).describe("The release's layer: task id -> parameters"),
  environment: parameterLayer.default({}).describe("The environment's layer: task id -> parameters (over the release's)"),
  /** role -> task id -> parameters. */
  roles: z.record(z.string().min(1), parameterLayer).default({}).describe("Per role: role -> task id -> parameters (over the environment's)"),
  /** node -> task id -> parameters. */
  nodes: z.record(z.string().min(1), parameterLayer).default({}).describe("Per node: node -> task id -> parameters (over the role's)"),
});

const graphObjectSchema = z.strictObject({
  /** What conditions see as `cluster.status` (Fuel: `new` before the first deployment, then `operational`). */
  cluster: z
    .strictObject({
      status: z
        .string({ error: 'status must be a string' })
        .min(1)
        .default('new')
        .describe('What conditions see as `cluster.status` (Fuel: `new` before the first deployment, then `operational`)'),
    })
    .prefault({})
    .describe('The cluster as conditions see it'),
  attributes: attributesSchema
    .prefault({})
    .describe('Parameters each task gets on top of its own, from the release, environment, roles.<role> and nodes.<node> layers (deep merge, later wins)'),
  tasks: z.array(itemSchema, { error: 'tasks must be a list of items' }).describe('The items: role groups, stages and tasks'),
});

/** What validation reads first: the items are then read one by one (graphItemSchema), so one bad item hides no other problem. */
export const taskGraphShellSchema = graphObjectSchema.extend({ tasks: z.array(z.unknown(), { error: 'tasks must be a list of items' }) });
export const graphItemSchema = itemSchema;

/** The file's two forms, for the JSON Schema. */
const taskGraphFileSchema = z.union([graphObjectSchema, z.array(itemSchema)]).meta({
  title: 'Task graph',
  description: "A deployment's task graph: role groups, stages and tasks ordered by requires and required_for (Fuel's granular deployment)",
});

export type TaskGraphDocument = z.output<typeof graphObjectSchema>;
export type GraphItem = TaskGraphDocument['tasks'][number];
export type GroupItem = Extract<GraphItem, { type: 'group' }>;
export type StageItem = Extract<GraphItem, { type: 'stage' }>;
export type TaskItem = Exclude<GraphItem, GroupItem | StageItem>;
export type GroupStrategy = GroupItem['parameters']['strategy'];
export type Attributes = TaskGraphDocument['attributes'];

export function isTaskItem(item: GraphItem): item is TaskItem {
  return item.type !== 'group' && item.type !== 'stage';
}

/** JSON Schema (draft 2020-12) of the graph file; written to schemas/ by a test. */
export function taskGraphJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(taskGraphFileSchema, { io: 'input', target: 'draft-2020-12' });
}
