import { isPossibleSessionId } from '../core/execution-id';
import { isSessionSettled } from '../core/rolling-upgrade/session';
import { isDeploymentEnded, type DeploymentStore } from '../ports/deployment-store';
import type { RunRecord, RunRecords } from '../ports/run-records';
import type { SessionStore } from '../ports/session-store';
import { isTaskRunSettled, type TaskRunStore } from '../ports/task-run-store';
import type { RunState, SessionListing } from './runtime';

/** The three run stores: an upgrade session, a group deployment, a task run. */
export interface RunStores {
  upgrades: SessionStore;
  deployments: DeploymentStore;
  taskRuns: TaskRunStore;
}

/**
 * The record an id names, looked up once, in one read whatever its kind (RunRecords): every operation
 * of the control plane resolves the id here, then acts on the record it got. Undefined for an id no
 * run has; an id no run can have (empty, too long: a key over DynamoDB's limit is an error, not "not
 * found") is not looked up.
 */
export async function findRun(records: RunRecords, id: string): Promise<RunRecord | undefined> {
  if (!isPossibleSessionId(id)) return undefined;
  return records.find(id);
}

/** Its kind and state in that kind's own terms. */
export function runState(run: RunRecord): RunState {
  switch (run.kind) {
    case 'upgrade':
      return { kind: 'upgrade', state: run.record.state };
    case 'deployment':
      return { kind: 'deployment', state: run.record.status };
    case 'tasks':
      return { kind: 'tasks', state: run.record.status };
  }
}

/**
 * Whether no execution works on the run any more, until someone resumes it: it ended (READY, DELETED,
 * HALTED; SUCCEEDED, FAILED, CANCELLED), or it is STOPPED.
 */
export function runEnded(run: RunRecord): boolean {
  switch (run.kind) {
    case 'upgrade':
      return run.record.completed || isSessionSettled(run.record.state);
    case 'deployment':
      return isDeploymentEnded(run.record.status) || run.record.status === 'STOPPED';
    case 'tasks':
      return isTaskRunSettled(run.record.status);
  }
}

/** Upgrades, deployments and task runs, newest first. */
export async function listRuns({ upgrades, deployments, taskRuns }: RunStores): Promise<SessionListing[]> {
  const [sessions, deploymentRecords, runs] = await Promise.all([upgrades.list(), deployments.list(), taskRuns.list()]);
  const listed: SessionListing[] = [
    ...sessions.map((session) => ({ kind: 'upgrade' as const, id: session.upgradeId, createdAt: session.createdAt, session })),
    ...deploymentRecords.map((deployment) => ({ kind: 'deployment' as const, id: deployment.deploymentId, createdAt: deployment.createdAt, deployment })),
    ...runs.map((taskRun) => ({ kind: 'tasks' as const, id: taskRun.runId, createdAt: taskRun.createdAt, taskRun })),
  ];
  // Newest first, as each store lists them; ISO timestamps sort as text.
  return listed.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
}
