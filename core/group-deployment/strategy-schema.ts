/**
 * Shipyard's DeploymentStrategy schema (shipyard_airflow/schemas/deploymentStrategy.yaml) in zod,
 * stricter where Shipyard is loose: unknown keys are rejected in groups too, and group names must
 * not be blank. Adds Fuel's per-group `strategy` (node concurrency). The JSON Schema in
 * schemas/deployment-strategy.schema.json is generated from these and checked by a test.
 */
import { z } from 'zod';
import { NODE_NAME_PATTERN, NODE_NAME_RULE } from '../site/names';
import { nodeLabelEntrySchema } from './node-label';
import type { NodeConcurrency } from './strategy';

export const DEPLOYMENT_STRATEGY_SCHEMA_ID = 'shipyard/DeploymentStrategy/v1';

/** Messages that read after the field path: "groups[0] (a).critical: is required: true or false". */
function expecting(what: string) {
  return {
    error: (issue: { code?: string; input?: unknown }) =>
      issue.code === 'unrecognized_keys' ? undefined : issue.input === undefined ? `is required: ${what}` : `must be ${what}`,
  };
}

const stringList = (item: string) => z.array(z.string(expecting(`a ${item}`)), expecting(`a list of ${item}s`));
const wholeNumber = (what: string, min: number, max?: number) => {
  const base = z.int(expecting(what)).min(min, expecting(what));
  return max === undefined ? base : base.max(max, expecting(what));
};

export const selectorSchema = z.strictObject(
  {
    node_names: z
      .array(z.string(expecting('a node name')).regex(NODE_NAME_PATTERN, `is not a valid node name: ${NODE_NAME_RULE}`), expecting('a list of node names'))
      .optional()
      .describe('Nodes by name; a name the site does not have is refused before anything runs'),
    node_labels: z
      .array(nodeLabelEntrySchema, expecting("a list of labels ('key:value' or key: value)"))
      .optional()
      .describe('Nodes carrying all these labels, each a `"key:value"` string or a one-key map'),
    node_tags: stringList('tag').optional().describe('Nodes carrying all these tags'),
    rack_names: stringList('rack name').optional().describe('Nodes in these racks'),
  },
  expecting('a selector mapping (node_names, node_labels, node_tags, rack_names)'),
);

export const successCriteriaSchema = z.strictObject(
  {
    percent_successful_nodes: wholeNumber('a whole number from 0 to 100', 0, 100)
      .optional()
      .describe("At least this share of the group's nodes must succeed (judged exactly: 29 of 100 meets 29%; an empty group counts as 100%)"),
    minimum_successful_nodes: wholeNumber('a whole number >= 0', 0)
      .optional()
      .describe("At least this many of the group's nodes must succeed; more than the group selects is refused before any node is touched"),
    maximum_failed_nodes: wholeNumber('a whole number >= 0', 0).optional().describe("At most this many of the group's nodes may fail"),
  },
  expecting('a mapping of success criteria'),
);

/**
 * Default: all of a group's nodes at once. Fuel's seed names no default; Shipyard submits a group's
 * nodes to Drydock as one task, so "parallel" keeps Shipyard's behaviour. Serial groups say so.
 */
export const DEFAULT_NODE_CONCURRENCY: NodeConcurrency = Object.freeze({ type: 'parallel' });

export const nodeConcurrencySchema = z
  .discriminatedUnion(
    'type',
    [
      z.strictObject({ type: z.literal('one_by_one').describe('One node at a time') }),
      z.strictObject({
        type: z.literal('parallel').describe('Nodes together: all at once, or a sliding window of amount nodes'),
        amount: wholeNumber('a whole number >= 1', 1).optional().describe('Nodes in flight at once (a sliding window); absent: all at once'),
      }),
    ],
    expecting('{type: one_by_one}, {type: parallel} or {type: parallel, amount: N}'),
  )
  .default(DEFAULT_NODE_CONCURRENCY);

export const groupSchema = z.strictObject(
  {
    name: z
      .string(expecting('a non-blank group name'))
      .regex(/\S/, expecting('a non-blank group name'))
      .describe("The group's name, which depends_on and the reports name it by"),
    critical: z
      .boolean(expecting('true or false'))
      .describe('A critical group that fails its success criteria fails the deployment, and the groups that depend on it do not run'),
    depends_on: stringList('group name').describe('Groups that must succeed before this one starts'),
    selectors: z
      .array(selectorSchema, expecting('a list of selectors ([] selects all nodes)'))
      .describe(
        "Which nodes the group deploys: the union of its selectors, each the nodes matching all its keys (`[]` selects all nodes); a node several groups select is submitted by the first only, and counts in every group's criteria",
      ),
    success_criteria: successCriteriaSchema.optional().describe('When the group counts as successful (default: every node)'),
    strategy: nodeConcurrencySchema.describe(
      "Fuel's node concurrency: `{type: one_by_one}`, `{type: parallel, amount: N}` (a sliding window of N nodes) or `{type: parallel}` (all at once, the default)",
    ),
  },
  expecting('a group mapping'),
);

/** The bare form, Shipyard's `data`: `{groups: [...]}`. The id makes the JSON Schema define it once, in $defs. */
export const strategyDataSchema = z
  .strictObject(
    { groups: z.array(groupSchema, expecting('a list of groups')).describe('The groups, deployed in dependency order') },
    expecting('a mapping with groups'),
  )
  .meta({ id: 'DeploymentStrategyData' });

/** The whole Deckhand document: `schema`, `metadata` (not interpreted here) and `data`. */
export const strategyDocumentSchema = z.strictObject(
  {
    schema: z.literal(DEPLOYMENT_STRATEGY_SCHEMA_ID, expecting(`'${DEPLOYMENT_STRATEGY_SCHEMA_ID}'`)).describe('The Deckhand schema of the document'),
    metadata: z.record(z.string(), z.unknown(), expecting('a mapping')).optional().describe("Deckhand's metadata (not interpreted)"),
    data: strategyDataSchema.describe('The strategy: `{groups: [...]}`'),
  },
  expecting('a deployment strategy document'),
);

export type StrategyData = z.output<typeof strategyDataSchema>;

/** The keys each object accepts, for "unknown key" messages that say what was meant. */
export const KNOWN_KEYS = {
  document: Object.keys(strategyDocumentSchema.shape),
  data: Object.keys(strategyDataSchema.shape),
  group: Object.keys(groupSchema.shape),
  selector: Object.keys(selectorSchema.shape),
  successCriteria: Object.keys(successCriteriaSchema.shape),
  strategy: ['type', 'amount'],
} as const;

/** JSON Schema (draft 2020-12) of what a strategy file may hold: either form. Pure; the file is written by a test. */
export function deploymentStrategyJsonSchema(): Record<string, unknown> {
  const either = z.union([strategyDocumentSchema, strategyDataSchema]).meta({
    title: 'DeploymentStrategy',
    description:
      `Groups of bare-metal nodes deployed in dependency order: a whole '${DEPLOYMENT_STRATEGY_SCHEMA_ID}' ` + 'document or just its data ({groups: [...]}).',
  });
  return z.toJSONSchema(either, { io: 'input', target: 'draft-2020-12' });
}
