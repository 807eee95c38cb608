import type { InvalidInputError } from '../../core/errors';
import type { RunStart, RunStartStore } from '../../ports/run-start-store';

/**
 * The first state of a workflow refused its request: the run's id says why from now on (GET
 * /sessions/{id} or /deployments/{id}), instead of answering 404 for a session never made.
 */
export async function recordRefusal(
  starts: RunStartStore | undefined,
  id: string,
  kind: RunStart['kind'],
  err: InvalidInputError,
  now: number,
  simulatedTime = false,
): Promise<void> {
  await starts?.refuse({
    id,
    kind,
    at: new Date(now).toISOString(),
    // On simulated time `at` is no date: the API shows it as its run's start, and says when on the wall clock.
    ...(simulatedTime ? { simulatedTime: true, wallAt: new Date().toISOString() } : {}),
    refused: { error: err.name, problems: err.problems },
  });
}
