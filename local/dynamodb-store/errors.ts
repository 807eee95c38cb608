import type { Item } from './attribute-types';

/** The `__type` prefixes DynamoDB answers with: its own errors, and the request validator's. */
const DYNAMODB = 'com.amazonaws.dynamodb.v20120810#';
const CORAL_VALIDATE = 'com.amazon.coral.validate#';
const CORAL_SERVICE = 'com.amazon.coral.service#';

/** An error DynamoDB answers with (HTTP 400 unless said), by its AWS name and message. */
export class DynamoDbStoreError extends Error {
  constructor(
    /** AWS's error name, e.g. ConditionalCheckFailedException. */
    readonly code: string,
    message: string,
    /** The `__type` namespace AWS puts before the name. */
    readonly namespace: string = DYNAMODB,
    readonly statusCode = 400,
    /** Extra members of the error body (Item for ReturnValuesOnConditionCheckFailure, CancellationReasons). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = code;
  }

  /** The JSON body AWS sends. */
  body(): Record<string, unknown> {
    return { __type: `${this.namespace}${this.code}`, message: this.message, ...this.extra };
  }
}

export class ValidationError extends DynamoDbStoreError {
  constructor(message: string) {
    super('ValidationException', message, CORAL_VALIDATE);
  }
}

export class ConditionalCheckFailedError extends DynamoDbStoreError {
  constructor(item?: Item) {
    super('ConditionalCheckFailedException', 'The conditional request failed', DYNAMODB, 400, item ? { Item: item } : {});
  }
}

export class ResourceNotFoundError extends DynamoDbStoreError {
  constructor(message = 'Requested resource not found') {
    super('ResourceNotFoundException', message);
  }
}

export class ResourceInUseError extends DynamoDbStoreError {
  constructor(message: string) {
    super('ResourceInUseException', message);
  }
}

export class UnknownOperationError extends DynamoDbStoreError {
  constructor(operation: string) {
    super('UnknownOperationException', `The embedded DynamoDB does not implement ${operation || 'that operation'}`, CORAL_SERVICE);
  }
}

export interface CancellationReason {
  Code: string;
  Message?: string;
  Item?: Item;
}

export class TransactionCanceledError extends DynamoDbStoreError {
  constructor(reasons: CancellationReason[]) {
    super(
      'TransactionCanceledException',
      `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
      DYNAMODB,
      400,
      { CancellationReasons: reasons },
    );
  }
}
