import { stepNumber } from '../../core/rolling-upgrade/step-plan';
import { showInstant, type ShownInstant } from '../../core/time-format';
import type { SessionListing, SessionView } from '../runtime';
import { sessionReportJson } from './session-report';
import type { TaskRunView } from './task-run-report';

/**
 * Runs as JSON shows them (`--json`, the REST API): their instants as core/time-format.ts shows them,
 * ISO dates on the wall clock, `{secondsFromStart, timeBase: 'simulated'}` on simulated time (from the
 * run's start: a simulated run's `createdAt` is 0, and `wallCreatedAt` says when it was created).
 */
export function sessionViewJson(view: SessionView): unknown {
  if (view.kind === 'upgrade') return sessionReportJson(view.report);
  if (view.kind === 'deployment') return view.report;
  return taskRunViewJson(view.report);
}

/** A task run's view as JSON shows it: its `createdAt` (its only instant) by its clock. */
export function taskRunViewJson<T extends TaskRunView>(view: T): Omit<T, 'createdAt'> & { createdAt: ShownInstant } {
  return { ...view, createdAt: createdAtShown(view) };
}

/** A run's `createdAt` as JSON shows it: on simulated time, the start its instants count from. */
export function createdAtShown(run: { createdAt: string; simulatedTime?: boolean; timeBase?: string }): ShownInstant {
  const simulated = run.simulatedTime === true || run.timeBase === 'simulated';
  return showInstant(run.createdAt, { timeBase: simulated ? 'simulated' : 'wall-clock', startedAt: run.createdAt });
}

/** A stored run record (a listing's session, deployment or task run) with its `createdAt` as JSON shows it. */
export function recordJson<T extends { createdAt: string; simulatedTime?: boolean }>(record: T): Omit<T, 'createdAt'> & { createdAt: ShownInstant } {
  return { ...record, createdAt: createdAtShown(record) };
}

/**
 * One entry of `rollout session list --json`: an upgrade keeps the shape it always had (session fields,
 * step and stage; the step counted from 1); all carry their kind.
 */
export function listingJson(entry: SessionListing): Record<string, unknown> {
  if (entry.kind === 'upgrade') {
    const { progress, ...rest } = recordJson(entry.session);
    return { ...rest, step: stepNumber(progress.step, entry.session.stepCount), stage: progress.stage };
  }
  if (entry.kind === 'tasks') {
    const { schedule: _schedule, ...rest } = recordJson(entry.taskRun);
    return { kind: 'TaskRun', ...rest };
  }
  const { state: _state, version: _version, ...rest } = recordJson(entry.deployment);
  return { kind: 'GroupDeployment', ...rest };
}
