import type { FieldProblem } from '../core/errors';

/** A run the API started (or a workflow refused) before its session, deployment or task-run record exists. */
export interface RunStart {
  id: string;
  kind: 'upgrade' | 'deployment' | 'tasks';
  /** ISO time the API accepted it, or the workflow refused it, on the control plane's clock (see simulatedTime). */
  at: string;
  /** `at` is on simulated time (a simulated site's clock): not a date, never shown as one (see wallAt). */
  simulatedTime?: boolean;
  /** On simulated time: the wall-clock instant of `at`. */
  wallAt?: string;
  executionArn?: string;
  /** Set when the workflow's first state refused the request: nothing was touched, and this says why. */
  refused?: { error: string; problems: FieldProblem[] };
}

/**
 * What keeps a started run's id answering before (or instead of) its record: the API writes an
 * accepted start before its 201, so the Location never 404s while the first state runs; the first
 * state writes a refusal when it refuses the request, so the Location says why for good.
 * Single-item writes: a refusal replaces an acceptance, never the other way round.
 */
export interface RunStartStore {
  /** Records an accepted start, unless the workflow already recorded its refusal. */
  accept(start: Omit<RunStart, 'refused'>): Promise<void>;
  refuse(start: Omit<RunStart, 'refused' | 'executionArn'> & { refused: NonNullable<RunStart['refused']> }): Promise<void>;
  get(id: string): Promise<RunStart | undefined>;
  /** Forgets a refused start (DELETE of it, as CRUS removes a session that has ended). */
  remove(id: string): Promise<void>;
}
