import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Resolved from this file, never from the working directory, so any caller finds them.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const WORKFLOW_FILES = {
  rollingUpgrade: path.join(root, 'statemachines', 'rolling-upgrade.asl.json'),
  groupDeployment: path.join(root, 'statemachines', 'group-deployment.asl.json'),
  deployGroup: path.join(root, 'statemachines', 'deploy-group.asl.json'),
  runNodeBatches: path.join(root, 'statemachines', 'run-node-batches.asl.json'),
} as const;
