import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import {
  GSI1_PARTITION_KEY,
  GSI1_SORT_KEY,
  PARTITION_KEY,
  SESSIONS_BY_CREATION_INDEX,
  SORT_KEY,
  TTL_ATTRIBUTE,
} from '../../adapters/dynamodb/table-design';

/** The single table of sessions, plans, nodes, messages and node locks, declared from the same constants as the store. */
export class SessionsTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      partitionKey: { name: PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: SORT_KEY, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The table holds the only record of sessions in flight and of node locks: a stack deletion must not take it along.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: SESSIONS_BY_CREATION_INDEX,
      partitionKey: { name: GSI1_PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: GSI1_SORT_KEY, type: AttributeType.STRING },
      // As in createTableInput: the listing returns whole sessions without a GetItem per session.
      projectionType: ProjectionType.ALL,
    });
  }
}
