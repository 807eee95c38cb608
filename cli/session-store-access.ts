import { DynamoDbSessionStore } from '../adapters/dynamodb/dynamodb-session-store';
import { connectDynamoDb, startLocalDynamoDb } from '../engine/local-dynamodb';
import { claimDataDir, findLiveRuntime } from '../engine/runtime-registry';

export interface SessionStoreAccess {
  store: DynamoDbSessionStore;
  /** Whether a `rollout` process that runs sessions owns the data directory right now. */
  live: boolean;
  close(): Promise<void>;
}

/**
 * The sessions of a data directory: through the endpoint of the process that owns it (a LevelDB
 * opens in one process only), else by claiming and opening it here for the command's duration.
 */
export async function openSessionStore(dataDir: string): Promise<SessionStoreAccess> {
  for (;;) {
    const owner = await findLiveRuntime(dataDir);
    if (owner?.dynamoDbEndpoint && owner.tableName) {
      const dynamoDb = connectDynamoDb({ endpoint: owner.dynamoDbEndpoint, tableName: owner.tableName });
      return { store: new DynamoDbSessionStore({ tableName: dynamoDb.tableName, client: dynamoDb.client }), live: owner.runsWorkflows === true, close: () => dynamoDb.close() };
    }
    const claim = await claimDataDir(dataDir);
    if (!claim) continue; // someone claimed it in between: reach them instead
    const dynamoDb = await startLocalDynamoDb({ dataDir });
    await claim.announce(dynamoDb.endpoint, dynamoDb.tableName, false);
    return {
      store: new DynamoDbSessionStore({ tableName: dynamoDb.tableName, client: dynamoDb.client }),
      live: false,
      async close() {
        await dynamoDb.close();
        await claim.release();
      },
    };
  }
}
