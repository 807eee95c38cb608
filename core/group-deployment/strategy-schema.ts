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
      .optional(),
    node_labels: z.array(nodeLabelEntrySchema, expecting("a list of labels ('key:value' or key: value)")).optional(),
    node_tags: stringList('tag').optional(),
    rack_names: stringList('rack name').optional(),
  },
  expecting('a selector mapping (node_names, node_labels, node_tags, rack_names)'),
);

export const successCriteriaSchema = z.strictObject(
  {
    percent_successful_nodes: wholeNumber('a whole number from 0 to 100', 0, 100).optional(),
    minimum_successful_nodes: wholeNumber('a whole number >= 0', 0).optional(),
    maximum_failed_nodes: wholeNumber('a whole number >= 0', 0).optional(),
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
      z.strictObject({ type: z.literal('one_by_one') }),
      z.strictObject({ type: z.literal('parallel'), amount: wholeNumber('a whole number >= 1', 1).optional() }),
    ],
    expecting('{type: one_by_one}, {type: parallel} or {type: parallel, amount: N}'),
  )
  .default(DEFAULT_NODE_CONCURRENCY);

export const groupSchema = z.strictObject(
  {
    name: z.string(expecting('a non-blank group name')).regex(/\S/, expecting('a non-blank group name')),
    critical: z.boolean(expecting('true or false')),
    depends_on: stringList('group name'),
    selectors: z.array(selectorSchema, expecting('a list of selectors ([] selects all nodes)')),
    success_criteria: successCriteriaSchema.optional(),
    strategy: nodeConcurrencySchema,
  },
  expecting('a group mapping'),
);

/** The bare form, Shipyard's `data`: `{groups: [...]}`. The id makes the JSON Schema define it once, in $defs. */
export const strategyDataSchema = z
  .strictObject({ groups: z.array(groupSchema, expecting('a list of groups')) }, expecting('a mapping with groups'))
  .meta({ id: 'DeploymentStrategyData' });

/** The whole Deckhand document: `schema`, `metadata` (not interpreted here) and `data`. */
export const strategyDocumentSchema = z.strictObject(
  {
    schema: z.literal(DEPLOYMENT_STRATEGY_SCHEMA_ID, expecting(`'${DEPLOYMENT_STRATEGY_SCHEMA_ID}'`)),
    metadata: z.record(z.string(), z.unknown(), expecting('a mapping')).optional(),
    data: strategyDataSchema,
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
