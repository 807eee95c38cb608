/**
 * Reads a deployment strategy from YAML or JSON text, or from an already parsed object, in either
 * form (the whole Deckhand document or just `{groups: [...]}`), and validates it completely:
 * every schema problem and every cross-group problem is reported in one InvalidInputError.
 */
import { parseYamlDocuments } from '../document-text';
import { InvalidInputError, type FieldProblem } from '../errors';
import { findDependencyProblems, type GroupDependencies } from './dependency-problems';
import type { DeploymentStrategy, StrategyGroup, SuccessCriteria } from './strategy';
import { groupNamesIn, strategyIssueProblems } from './strategy-problems';
import { DEPLOYMENT_STRATEGY_SCHEMA_ID, KNOWN_KEYS, strategyDataSchema, strategyDocumentSchema, type StrategyData } from './strategy-schema';

const SUBJECT = 'deployment strategy';

/** `input`: YAML/JSON text, or a value such as `JSON.parse` returns. Throws InvalidInputError. */
export function parseDeploymentStrategy(input: unknown): DeploymentStrategy {
  const value = typeof input === 'string' ? readStrategyText(input) : input;
  if (!isRecord(value)) {
    throw new InvalidInputError(SUBJECT, [{ field: '', message: `expected a mapping with groups, or a whole '${DEPLOYMENT_STRATEGY_SCHEMA_ID}' document` }]);
  }
  const isDocument = ['schema', 'metadata', 'data'].some((key) => Object.hasOwn(value, key));
  const rawGroups: unknown = isDocument ? (isRecord(value.data) ? value.data.groups : undefined) : value.groups;
  const parsed = isDocument ? strategyDocumentSchema.safeParse(value) : strategyDataSchema.safeParse(value);

  const problems: FieldProblem[] = [];
  if (!parsed.success) {
    const rootKeys = isDocument ? KNOWN_KEYS.document : KNOWN_KEYS.data;
    problems.push(...strategyIssueProblems(parsed.error.issues, groupNamesIn(rawGroups), rootKeys));
  }
  // Checked on the raw groups too, so a document with schema errors still gets its graph problems reported.
  const prefix = isDocument ? 'data.' : '';
  for (const problem of findDependencyProblems(dependencyView(rawGroups))) {
    problems.push({ ...problem, field: prefix + problem.field });
  }
  if (problems.length > 0 || !parsed.success) throw new InvalidInputError(SUBJECT, problems);
  return toDeploymentStrategy('data' in parsed.data ? parsed.data.data : parsed.data);
}

/**
 * YAML is a superset of JSON, so one reader serves both. A multi-document stream (a site design
 * bundle) is accepted when exactly one of its documents is a DeploymentStrategy.
 */
function readStrategyText(text: string): unknown {
  const parsed = parseYamlDocuments(text);
  if ('problems' in parsed) throw new InvalidInputError(SUBJECT, parsed.problems);
  const { values } = parsed;
  if (values.length === 0 || (values.length === 1 && values[0] == null)) {
    throw new InvalidInputError(SUBJECT, [{ field: '', message: 'the text is empty: expected a mapping with groups' }]);
  }
  if (values.length === 1) return values[0];
  const strategies = values.filter((v) => isRecord(v) && v.schema === DEPLOYMENT_STRATEGY_SCHEMA_ID);
  if (strategies.length === 1) return strategies[0];
  throw new InvalidInputError(SUBJECT, [
    {
      field: '',
      message: `the text holds ${values.length} documents, ${strategies.length} of them '${DEPLOYMENT_STRATEGY_SCHEMA_ID}'; expected exactly one`,
    },
  ]);
}

/** Groups with a usable name and a well-typed depends_on; the schema reports the rest. */
function dependencyView(rawGroups: unknown): GroupDependencies[] {
  if (!Array.isArray(rawGroups)) return [];
  const nameAt = groupNamesIn(rawGroups);
  return rawGroups.flatMap((group: unknown, index) => {
    const name = nameAt(index);
    if (name === undefined || !isRecord(group)) return [];
    const dependsOn = group.depends_on;
    const wellTyped = Array.isArray(dependsOn) && dependsOn.every((entry) => typeof entry === 'string');
    return [{ index, name, dependsOn: wellTyped ? (dependsOn as string[]) : [] }];
  });
}

function toDeploymentStrategy(data: StrategyData): DeploymentStrategy {
  return { groups: data.groups.map(toStrategyGroup) };
}

function toStrategyGroup(group: StrategyData['groups'][number]): StrategyGroup {
  const result: StrategyGroup = {
    name: group.name,
    critical: group.critical,
    dependsOn: group.depends_on,
    selectors: group.selectors.map((selector) => ({
      nodeNames: selector.node_names ?? [],
      nodeLabels: selector.node_labels ?? [],
      nodeTags: selector.node_tags ?? [],
      rackNames: selector.rack_names ?? [],
    })),
    concurrency: group.strategy,
  };
  const criteria = group.success_criteria;
  if (criteria) {
    const successCriteria: SuccessCriteria = {};
    if (criteria.percent_successful_nodes !== undefined) successCriteria.percentSuccessfulNodes = criteria.percent_successful_nodes;
    if (criteria.minimum_successful_nodes !== undefined) successCriteria.minimumSuccessfulNodes = criteria.minimum_successful_nodes;
    if (criteria.maximum_failed_nodes !== undefined) successCriteria.maximumFailedNodes = criteria.maximum_failed_nodes;
    result.successCriteria = successCriteria;
  }
  return result;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
