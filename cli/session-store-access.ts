import { DynamoDbSessionStore } from '../lambdas/adapters/dynamodb/dynamodb-session-store';
import { connectDynamoDb, startLocalDynamoDb, type LocalDynamoDb } from '../engine/local-dynamodb';
import { findLiveRuntime } from '../engine/runtime-registry';

export interface SessionStoreAccess {
  store: DynamoDbSessionStore;
  /** Whether a `rollout` process that runs sessions owns the data directory right now. */
  live: boolean;
  close(): Promise<void>;
}

/**
 * The sessions of a data directory: through the endpoint of the process that has it open (a
 * LevelDB opens in one process only), else by opening it here.
 */
export async function openSessionStore(dataDir: string): Promise<SessionStoreAccess> {
  const runtime = await findLiveRuntime(dataDir);
  const dynamoDb: LocalDynamoDb = runtime
    ? connectDynamoDb({ endpoint: runtime.dynamoDbEndpoint, tableName: runtime.tableName })
    : await startLocalDynamoDb({ dataDir });
  return {
    store: new DynamoDbSessionStore({ tableName: dynamoDb.tableName, client: dynamoDb.client }),
    live: runtime !== undefined,
    close: () => dynamoDb.close(),
  };
}
