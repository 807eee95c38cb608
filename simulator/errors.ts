import { RolloutError } from '../core/errors';

/** A request the simulated site refuses, with the HTTP status a real service would answer. */
export class SimRequestError extends RolloutError {
  override readonly name = 'SimRequestError';
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
  ) {
    super(message);
  }
}
