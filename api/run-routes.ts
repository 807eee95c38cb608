import type { SessionKind } from '../control-plane/runtime';
import { canResume } from '../control-plane/resume-check';
import { createdAtShown } from '../control-plane/reports/view-json';
import type { FieldProblem } from '../core/errors';
import type { RunStart } from '../ports/run-start-store';
import type { ApiDependencies } from './dependencies';
import { json } from './http';
import { problem } from './problems';
import type { Route } from './router';

/**
 * What the three kinds of run (upgrade sessions, group deployments, task runs) share on the API: where
 * each is read, how a problem names it, its start record until its own record exists, and the stop and
 * resume routes, which differ only in those names.
 */
export const RUN_ROUTES = {
  upgrade: { collection: '/sessions', noun: 'session' },
  deployment: { collection: '/deployments', noun: 'deployment' },
  tasks: { collection: '/task-runs', noun: 'task run' },
} as const satisfies Record<SessionKind, { collection: string; noun: string }>;

/** The Location of a run: its own route, which answers while its first state runs (PENDING) and after. */
export const runLocation = (kind: SessionKind, id: string) => `${RUN_ROUTES[kind].collection}/${encodeURIComponent(id)}`;

/** How the routes find a run's start record (accepted, or refused by the workflow's first state), and write one. */
export function startRecords({ controlPlane, runStarts: store }: ApiDependencies) {
  return {
    started: async (id: string, kind: RunStart['kind']) => {
      const start = await store.get(id);
      return start?.kind === kind ? start : undefined;
    },
    /** Started and recorded as accepted, so that the Location answers while the first state runs. */
    accepted: async (run: { id: string; executionArn: string }, kind: RunStart['kind']) => {
      await store.accept({
        id: run.id,
        kind,
        at: new Date(controlPlane.now()).toISOString(),
        executionArn: run.executionArn,
        ...(controlPlane.simulatedTime ? { simulatedTime: true, wallAt: new Date().toISOString() } : {}),
      });
    },
  };
}
export type StartRecords = ReturnType<typeof startRecords>;

/**
 * A start record as the run's route answers it: PENDING (not opened yet), or REFUSED by the workflow's first
 * state (`refused` says why, nothing was touched). Its `createdAt` is shown as every run's is: on simulated
 * time the instant its run starts from (`wallCreatedAt` says when on the wall clock).
 */
export function startedRecord(start: RunStart, refusedMessage: string) {
  const problems = start.refused?.problems.map((p: FieldProblem) => (p.field ? `${p.field}: ${p.message}` : p.message)).join('; ');
  return {
    createdAt: createdAtShown({ createdAt: start.at, ...(start.simulatedTime ? { simulatedTime: true } : {}) }),
    ...(start.wallAt ? { wallCreatedAt: start.wallAt } : {}),
    ...(start.executionArn ? { executionArn: start.executionArn } : {}),
    messages: start.refused ? [`${refusedMessage} - ${problems}`] : [],
    ...(start.refused ? { refused: start.refused } : {}),
  };
}

/**
 * `POST {collection}/{id}/stop`: what is in flight finishes, nothing new starts, the rest is left as it was; it
 * ends STOPPED, and a resume carries it on. The run's kind is read from its record alone (one read): a stop
 * needs no report. 404 for no run of this kind; 409 (SessionNotStoppableError) for one not running.
 */
export function stopRoute({ controlPlane }: ApiDependencies, kind: SessionKind): Route {
  const { collection, noun } = RUN_ROUTES[kind];
  return {
    pattern: `${collection}/{id}/stop`,
    invalidStatus: 422,
    methods: {
      POST: async ({ id }) => {
        if ((await controlPlane.status(id!))?.kind !== kind) return problem(404, `no ${noun} with id '${id}'`);
        return json(200, await controlPlane.stop(id!));
      },
    },
  };
}

/**
 * `POST {collection}/{id}/resume`: `rollout session resume` over HTTP, for a run whose execution died or
 * that was stopped. 202: an execution carries it on from the store (the run's own route follows it); 404
 * for no such run; 409 while an execution still runs it (a second would work the same nodes), or once it
 * has ended. Its kind and state come from its record alone (one read).
 */
export function resumeRoute({ controlPlane }: ApiDependencies, kind: SessionKind): Route {
  const { collection, noun } = RUN_ROUTES[kind];
  return {
    pattern: `${collection}/{id}/resume`,
    invalidStatus: 422,
    methods: {
      POST: async ({ id }) => {
        const status = await controlPlane.status(id!);
        if (status?.kind !== kind) return problem(404, `no ${noun} with id '${id}'`);
        if (!canResume(status)) return problem(409, `${noun} ${id} has ended (${status.state}): nothing to resume`);
        const run = await controlPlane.resume(kind, id!);
        return json(202, { id: id!, kind, executionArn: run.executionArn }, { location: runLocation(kind, id!) });
      },
    },
  };
}
