import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Resolved from this file, never from the working directory, so `cdk synth`, jest and the CLI agree wherever they start.
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const aslFile = (name: string) => path.join(PROJECT_ROOT, 'statemachines', name);

/** The workflow files: CDK deploys them and the embedded engine runs the very same files. */
export const ASL_FILES = {
  rollingUpgrade: aslFile('rolling-upgrade.asl.json'),
  groupDeployment: aslFile('group-deployment.asl.json'),
  deployGroup: aslFile('deploy-group.asl.json'),
  runNodeBatches: aslFile('run-node-batches.asl.json'),
  taskGraph: aslFile('task-graph.asl.json'),
  environmentUpgrade: aslFile('environment-upgrade.asl.json'),
} as const;

export const PROJECT_PATHS = {
  lockFile: path.join(PROJECT_ROOT, 'package-lock.json'),
  /** One bundle per workflow, one exported handler per function. */
  rollingUpgradeEntry: path.join(PROJECT_ROOT, 'lambdas', 'entrypoints', 'rolling-upgrade.ts'),
  groupDeploymentEntry: path.join(PROJECT_ROOT, 'lambdas', 'entrypoints', 'group-deployment.ts'),
  taskGraphEntry: path.join(PROJECT_ROOT, 'lambdas', 'entrypoints', 'task-graph.ts'),
  environmentUpgradeEntry: path.join(PROJECT_ROOT, 'lambdas', 'entrypoints', 'environment-upgrade.ts'),
  /** The REST API behind API Gateway: one handler, `index.handler`. */
  apiEntry: path.join(PROJECT_ROOT, 'lambdas', 'entrypoints', 'api.ts'),
  /** The target of SSM's command status-change notifications (an EventBridge rule's): one handler, `index.CommandEnds`. */
  commandEndsEntry: path.join(PROJECT_ROOT, 'lambdas', 'entrypoints', 'command-ends.ts'),
} as const;
