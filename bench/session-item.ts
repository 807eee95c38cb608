import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { EmbeddedRuntime } from '../local/embedded-runtime';
import { inProcessListeners } from '../local/dynamodb-store/in-process-clients';
import { itemSize, type Item } from '../local/dynamodb-store/attribute-values';
import { fleet, fleetUpgradeRequest } from './rolling-upgrade-bench';

export interface SessionItemFigures {
  label: string;
  /** Writes of the session item seen, and the write units they consumed (DynamoDB bills the larger of before and after). */
  writes: number;
  writeUnits: number;
  /** The item's size (DynamoDB's item size: names and values) after the last write seen. */
  bytes: number;
}

/**
 * The rolling-upgrade session item as DynamoDB would bill it: a run of `nodes` spotless nodes with `controls`,
 * stopped once `writes` writes of its session item were seen (or at its end), with the units those writes
 * consumed and the item's size then.
 */
export async function sessionItemFigures(label: string, nodes: number, controls: Record<string, unknown>, writes: number): Promise<SessionItemFigures> {
  const runtime = await EmbeddedRuntime.start({ site: fleet({ name: label, nodes, stepSize: 1 }) });
  const figures = { label, writes: 0, writeUnits: 0, bytes: 0 };
  let key: Record<string, unknown> | undefined;
  let enough: () => void = () => {};
  const seen = new Promise<void>((resolve) => (enough = resolve));
  inProcessListeners(runtime.dynamoDb.rawClient)?.add((name, output, input) => {
    const written = (input.Item ?? input.Key) as { sk?: { S?: string }; pk?: unknown } | undefined;
    if (!['PutItemCommand', 'UpdateItemCommand'].includes(name) || written?.sk?.S !== 'SESSION' || !output) return;
    key = { pk: written.pk, sk: written.sk };
    figures.writes++;
    figures.writeUnits += (output.ConsumedCapacity as { WriteCapacityUnits?: number } | undefined)?.WriteCapacityUnits ?? 0;
    if (figures.writes >= writes) enough();
  });
  try {
    const run = await runtime.run('rollingUpgrade', { ...fleetUpgradeRequest({ stepSize: 1 }), ...controls });
    await Promise.race([run.outcome, seen]);
    const { Item } = await runtime.dynamoDb.rawClient.send(
      new GetItemCommand({ TableName: runtime.dynamoDb.tableName, Key: key as never, ConsistentRead: true }),
    );
    figures.bytes = itemSize(Item as unknown as Item);
    return figures;
  } finally {
    await runtime.close();
  }
}

export function renderSessionItem(f: SessionItemFigures): string {
  return `${f.label}: session item ${f.bytes} bytes after ${f.writes} writes of it, ${(f.writeUnits / Math.max(f.writes, 1)).toFixed(2)} write units per write`;
}
