import { environmentUpgradeRequestSchema } from '../../core/environments';
import { deploymentRequestSchema } from '../../core/group-deployment/deployment-request';
import { deploymentStrategyJsonSchema } from '../../core/group-deployment/strategy-schema';
import { upgradeRequestSchema } from '../../core/rolling-upgrade/upgrade-request';
import { taskGraphJsonSchema } from '../../core/task-graph/graph-document';
import { taskRunRequestSchema } from '../../core/task-graph/task-run-request';
import { WORKFLOWS } from '../../contracts/state-machines';
import { SESSION_CONTROL_KEYS, SESSION_CONTROL_MEANINGS, type SessionControlKind } from '../../core/session-control';
import { code, table } from './markdown';
import { inputJsonSchema, type SchemaSection } from './schema-reference';

const MACHINE_OF: Record<SessionControlKind, string> = {
  upgrade: WORKFLOWS.rollingUpgrade,
  deployment: WORKFLOWS.groupDeployment,
  tasks: WORKFLOWS.taskGraph,
};

/** The inputs that act on a run instead of starting one (core/session-control.ts): start an execution of the same state machine with one. */
export function controlInputsMarkdown(): string {
  const rows = (Object.keys(SESSION_CONTROL_KEYS) as SessionControlKind[]).flatMap((kind) =>
    (['stop', 'cancel', 'resume'] as const).map((action) => [
      MACHINE_OF[kind],
      code(`{"${SESSION_CONTROL_KEYS[kind][action]}": "<id>"}`),
      SESSION_CONTROL_MEANINGS[action],
    ]),
  );
  return [
    '## Control inputs',
    'Inputs that act on an existing run instead of starting one, so that the Step Functions console reaches them: start an execution of the same state machine with exactly one of these (and nothing else). Do not use *Stop execution* to cancel: it aborts without cleanup. Defined by `SESSION_CONTROL_KEYS` (core/session-control.ts).',
    table(['State machine', 'Input', 'What it does'], rows),
  ].join('\n\n');
}

/** The workflows' inputs: what `rollout`, the REST API and the Step Functions console start each workflow with. */
export function requestSections(): SchemaSection[] {
  return [
    {
      heading: 'Rolling upgrade request',
      intro:
        "The input of the rolling-upgrade workflow: what `rollout upgrade` builds from its flags, `POST /sessions` takes as its body, and one pastes into the Step Functions console to start an execution. CRUS's upgrade session fields in camelCase, plus the timeouts, poll interval and the controls of mode `window`.",
      source: '`upgradeRequestSchema` (core/rolling-upgrade/upgrade-request.ts)',
      schema: inputJsonSchema(upgradeRequestSchema),
    },
    {
      heading: 'Group deployment request',
      intro:
        'The input of the group-deployment workflow: what `rollout deploy` builds from its flags and `POST /deployments` takes as its body. `strategy` is a deployment strategy (below); `taskGraph` a task run request (below).',
      source: '`deploymentRequestSchema` (core/group-deployment/deployment-request.ts)',
      schema: inputJsonSchema(deploymentRequestSchema),
    },
    {
      heading: 'Deployment strategy',
      intro:
        "Shipyard's DeploymentStrategy: groups of nodes deployed in dependency order, as a whole Deckhand document or just its data (`{groups: [...]}`). `rollout deploy --strategy FILE` reads it; schemas/deployment-strategy.schema.json is its JSON Schema.",
      source: '`strategyDocumentSchema` and `strategyDataSchema` (core/group-deployment/strategy-schema.ts)',
      schema: deploymentStrategyJsonSchema(),
    },
    {
      heading: 'Task run request',
      intro:
        "The input of the task-graph workflow (and a group deployment's `taskGraph`): the graph and which of its tasks run on which nodes, and how. `rollout deploy --graph FILE` builds it from the graph file and its flags.",
      source: '`taskRunRequestSchema` (core/task-graph/task-run-request.ts)',
      schema: inputJsonSchema(taskRunRequestSchema),
    },
    {
      heading: 'Task graph',
      intro:
        "A task graph file (Fuel's deployment tasks, in YAML or JSON): stages, groups and tasks with their dependencies. schemas/task-graph.schema.json is its JSON Schema.",
      source: '`taskGraphJsonSchema()` (core/task-graph/graph-document.ts)',
      schema: taskGraphJsonSchema(),
    },
    {
      heading: 'Environment upgrade request',
      intro:
        'The input of the environment-upgrade workflow, the body of `POST /environments/{id}/upgrade` (`rollout env upgrade`): upgrade an environment side by side to a newer release.',
      source: '`environmentUpgradeRequestSchema` (core/environments/schemas.ts)',
      schema: inputJsonSchema(environmentUpgradeRequestSchema),
    },
  ];
}
