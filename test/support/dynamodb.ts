import type { UpgradeSession } from '../../core/rolling-upgrade/session';
import { EXAMPLE_REQUEST } from '../../scripts/upgrade-args';
import type { DeploymentRecord, DeploymentStatus } from '../../ports/deployment-store';
import type { TaskRunRecord, TaskRunStatus } from '../../ports/task-run-store';

/** A plausible session; tests override what they are about. */
export function makeSession(overrides: Partial<UpgradeSession> = {}): UpgradeSession {
  return {
    upgradeId: `s-${Math.random().toString(16).slice(2, 10)}`,
    kind: 'ComputeUpgradeSession',
    ...EXAMPLE_REQUEST,
    quiesceTimeoutSeconds: 86400,
    bootTimeoutSeconds: 3600,
    wlmReturnTimeoutSeconds: 600,
    pollIntervalSeconds: 30,
    mode: 'lockstep',
    order: 'plan',
    approval: 'none',
    haltOnOutsideFailures: false,
    bakeSeconds: 0,
    state: 'UPDATING',
    completed: false,
    createdAt: new Date().toISOString(),
    planTaken: true,
    nodeCount: 0,
    stepCount: 0,
    progress: { step: 0, stage: 'STARTING', stageStartedAt: 1_700_000_000_000, errorCount: 0 },
    ...overrides,
  };
}

/** `count` node names in a deliberately non-alphabetical plan order (the table sorts by name, the plan must not). */
export function makePlan(count: number, prefix = 'x'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${String((i * 7919) % 100_003).padStart(6, '0')}n${i}`);
}

/** A deployment's record with nothing in it but its status: for what reads or moves the status alone (create it with `{ groups: [] }` as its plan). */
export const makeDeploymentRecord = (deploymentId: string, status: DeploymentStatus): Omit<DeploymentRecord, 'version'> => ({
  deploymentId,
  createdAt: '2026-01-01T00:00:00.000Z',
  status,
  settings: { maxParallelGroups: 1, prepareTimeoutSeconds: 1, deployTimeoutSeconds: 1, pollIntervalSeconds: 1 },
  state: { groups: {}, nodes: {} } as unknown as DeploymentRecord['state'],
  groupCount: 0,
  nodeCount: 0,
});

/** A task run's record with nothing in it but its status (and the deployment whose deploy phase it is): create it with `{}` as its plan and no chunks. */
export const makeTaskRunRecord = (runId: string, status: TaskRunStatus, inDeployment?: string): Omit<TaskRunRecord, 'increment'> => ({
  runId,
  createdAt: '2026-01-01T00:00:00.000Z',
  status,
  settings: {} as TaskRunRecord['settings'],
  schedule: {} as TaskRunRecord['schedule'],
  counts: {} as TaskRunRecord['counts'],
  nodeCount: 0,
  chunkCount: 0,
  startedAt: 0,
  ...(inDeployment ? { deployment: { deploymentId: inDeployment, group: 'g' } } : {}),
});
