import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Resolved from this file, never from the working directory, so `cdk synth` and jest agree wherever they start.
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const PROJECT_PATHS = {
  lockFile: path.join(PROJECT_ROOT, 'package-lock.json'),
  rollingUpgradeEntry: path.join(PROJECT_ROOT, 'lambdas', 'entrypoints', 'rolling-upgrade.ts'),
  groupDeploymentEntry: path.join(PROJECT_ROOT, 'lambdas', 'entrypoints', 'group-deployment.ts'),
} as const;
