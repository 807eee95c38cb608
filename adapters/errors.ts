/** Typed errors of the adapters; site and store conditions the core names live in core/errors.ts. */
import { RolloutError } from '../core/errors';

/** DynamoDB's per-request batch limits kept answering with unprocessed items (throttling) past our retries. */
export class UnprocessedBatchError extends RolloutError {
  override readonly name = 'UnprocessedBatchError';
  constructor(
    readonly operation: 'BatchWriteItem' | 'BatchGetItem',
    readonly remaining: number,
    readonly attempts: number,
  ) {
    super(`${operation}: ${remaining} item(s) still unprocessed after ${attempts} attempts`);
  }
}

/** A node's lock kept changing hands while we tried to take it. */
export class LockContentionError extends RolloutError {
  override readonly name = 'LockContentionError';
  constructor(readonly node: string) {
    super(`the lock of node ${node} kept changing hands; try again`);
  }
}

/** A connector updated a record it never created (ports/connector-state.ts): its state was lost or never written. */
export class ConnectorRecordMissingError extends RolloutError {
  override readonly name = 'ConnectorRecordMissingError';
  constructor(
    readonly kind: string,
    readonly recordName: string,
  ) {
    super(`${kind} has no record named ${recordName} to update`);
  }
}
