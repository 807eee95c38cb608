import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { GSI1_PARTITION_KEY, GSI1_SORT_KEY, PARTITION_KEY, SESSIONS_BY_CREATION_INDEX, SORT_KEY, TTL_ATTRIBUTE } from '../../adapters/dynamodb/table-design';

export interface SessionsTableProps {
  /** Default: RETAIN. */
  removalPolicy?: RemovalPolicy;
  /** A customer-managed key; default: the AWS-managed DynamoDB key. */
  encryptionKey?: IKey;
  /** DynamoDB deletion protection. Default: on. */
  deletionProtection?: boolean;
}

/** The single table of sessions, plans, nodes, messages and node locks, declared from the same constants as the store. */
export class SessionsTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: SessionsTableProps = {}) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      partitionKey: { name: PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: SORT_KEY, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // A KMS key the account can audit (CloudTrail) and, customer-managed, revoke.
      ...(props.encryptionKey
        ? { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.encryptionKey }
        : { encryption: TableEncryption.AWS_MANAGED }),
      // The table holds the only record of sessions in flight and of node locks: by default a stack deletion does not take it along.
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      // Nor does a delete of the table itself (console, API, a replacement) go through while this is on.
      deletionProtection: props.deletionProtection ?? true,
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
