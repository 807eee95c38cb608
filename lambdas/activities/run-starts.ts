import type { InvalidInputError } from '../../core/errors';
import type { RunStartStore } from '../../ports/run-start-store';

/**
 * The first state of a workflow refused its request: the run's id says why from now on (GET
 * /sessions/{id} or /deployments/{id}), instead of answering 404 for a session never made.
 */
export async function recordRefusal(
  starts: RunStartStore | undefined,
  id: string,
  kind: 'upgrade' | 'deployment',
  err: InvalidInputError,
  now: number,
): Promise<void> {
  await starts?.refuse({ id, kind, at: new Date(now).toISOString(), refused: { error: err.name, problems: err.problems } });
}
