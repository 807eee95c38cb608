import { existsSync } from 'node:fs';
import path from 'node:path';
import { Stack, Validations, type CfnElement, type Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { ManagedPolicy, PolicyStatement, Role, ServicePrincipal, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENVIRONMENT, PROJECT_PATHS, PROJECT_ROOT, SITE_SERVICES, TABLE_ACTIONS, tableGrants, type FunctionName } from '../../contracts';
import type { SiteAccess } from './site-connection';

/**
 * The lock file that roots the functions' bundling: the repository's; an installed package has none
 * (npm never packs package-lock.json), so its package.json stands in. The bundling installs no
 * modules: the file only marks the project root (and npm as the package manager).
 */
export const DEPS_LOCK_FILE = existsSync(PROJECT_PATHS.lockFile) ? PROJECT_PATHS.lockFile : path.join(PROJECT_ROOT, 'package.json');

export const LAMBDA_BUNDLING: BundlingOptions = {
  format: OutputFormat.ESM,
  target: 'node22',
  // Prefer the ESM build of dependencies that ship both.
  mainFields: ['module', 'main'],
  // CommonJS dependencies bundled into an ESM file still call require(); ESM has none, so define it.
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  // Everything the functions use is bundled, the AWS SDK too (tree-shaken from its ES modules): left out,
  // the runtime's SDK loaded as hundreds of CommonJS files, and a cold start took 2.2 times as long
  // (bench/README.md, "Lambda bundles"). It also pins the SDK version the functions were tested with.
  externalModules: [],
  minify: true,
  sourceMap: true,
  sourcesContent: false,
};

export interface WorkflowFunctionsProps<Name extends string> {
  /** The entry file; it exports one handler per name. */
  entry: string;
  /** Per function: the TimeoutSeconds of the Task that invokes it (a test holds each workflow to its ASL). */
  timeouts: Readonly<Record<Name, Duration>>;
  table: ITable;
  /** The site connection; the table name is added here. */
  environment: Readonly<Record<string, string>>;
  /** What the site connection needs beyond the table: each function gets the secrets and SSM targets of the services it calls. */
  site?: SiteAccess;
  logRetention?: RetentionDays;
  /** Of the log groups. Default: CDK's (RETAIN). */
  removalPolicy?: RemovalPolicy;
  /** The VPC, subnets and security groups the functions run in, to reach a site that is only reachable there. */
  network?: FunctionNetwork;
}

export interface FunctionNetwork {
  vpc: IVpc;
  vpcSubnets?: SubnetSelection;
  securityGroups?: ISecurityGroup[];
}

/**
 * One Lambda per function of a workflow, all from the one entry file, each pointing at its own export
 * (handler `index.<Name>`), with the same runtime and bundling for every workflow.
 */
export class WorkflowFunctions<Name extends string> extends Construct {
  readonly functions: Readonly<Record<Name, NodejsFunction>>;
  /** Each function's own log group, by function name (the stack's metric filters read them). */
  readonly logGroups: Readonly<Record<Name, LogGroup>>;

  constructor(scope: Construct, id: string, props: WorkflowFunctionsProps<Name>) {
    super(scope, id);
    const environment = {
      ...props.environment,
      [ENVIRONMENT.tableName]: props.table.tableName,
      // Stack traces point at the TypeScript sources through the bundled source map.
      NODE_OPTIONS: '--enable-source-maps',
    };
    const entries = (Object.entries(props.timeouts) as [Name, Duration][]).map(([name, timeout]) => {
      const logGroup = new LogGroup(this, `${name}Logs`, { retention: props.logRetention ?? RetentionDays.ONE_MONTH, removalPolicy: props.removalPolicy });
      // Its own role, instead of the one with AWSLambdaBasicExecutionRole (logs on every log group): it writes to its own log group only.
      const role = new Role(this, `${name}Role`, {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        managedPolicies: props.network ? [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole')] : [],
      });
      logGroup.grantWrite(role);
      props.site?.grant(role, SITE_SERVICES[name as unknown as FunctionName]);
      const fn = new NodejsFunction(this, name, {
        role,
        entry: props.entry,
        handler: name,
        projectRoot: PROJECT_ROOT,
        depsLockFilePath: DEPS_LOCK_FILE,
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        memorySize: 512,
        timeout,
        environment,
        tracing: Tracing.ACTIVE,
        logGroup,
        ...props.network,
        bundling: LAMBDA_BUNDLING,
      });
      grantTableActions(props.table, fn, name);
      return [name, fn, logGroup] as const;
    });
    this.functions = Object.fromEntries(entries.map(([name, fn]) => [name, fn])) as Record<Name, NodejsFunction>;
    this.logGroups = Object.fromEntries(entries.map(([name, , logGroup]) => [name, logGroup])) as Record<Name, LogGroup>;
    acknowledgeFunctionFindings(this, props);
  }
}

/**
 * Least privilege on the table (contracts/table-access.ts): the function gets the actions its stores call, on
 * items of the partitions they reach only (`dynamodb:LeadingKeys`), on node locks only reads and conditional
 * updates (no function can put over or delete a lock), Query on the index when it lists; and the key's use that
 * those need when the table has a customer-managed key.
 */
export function grantTableActions(table: ITable, grantee: IGrantable, name: string): void {
  const actions = (TABLE_ACTIONS as Readonly<Record<string, readonly string[]>>)[name];
  if (!actions) throw new Error(`contracts/table-access.ts names no table actions for function '${name as FunctionName}'`);
  const grants = tableGrants(name as FunctionName);
  for (const grant of grants.table) {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: grant.actions.map((action) => `dynamodb:${action}`),
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...grant.partitions] } },
      }),
    );
  }
  if (grants.indexQuery)
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['dynamodb:Query'], resources: [`${table.tableArn}/index/*`] }));
  const writes = actions.some((action) => !['GetItem', 'BatchGetItem', 'Query'].includes(action));
  if (writes) table.encryptionKey?.grantEncryptDecrypt(grantee);
  else table.encryptionKey?.grantDecrypt(grantee);
}

/** cdk-nag AwsSolutions findings on the functions' roles that cannot be scoped further, each with its reason. */
export function acknowledgeFunctionFindings(scope: Construct, props: { table: ITable; network?: FunctionNetwork }): void {
  const validations = Validations.of(scope);
  validations.acknowledge({
    id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
    reason:
      'X-Ray tracing (xray:PutTraceSegments, xray:PutTelemetryRecords) and, with an SSM transport, ssm:GetCommandInvocation and ssm:ListCommandInvocations take no resource narrower than *.',
  });
  validations.acknowledge({
    id: 'AwsSolutions::AwsSolutions-L1',
    reason: 'Node.js 22 on purpose: the bundles target node22 and the runtime SDK the functions are tested against; a newer runtime is a reviewed change.',
  });
  const cfnTable = props.table.node.defaultChild as CfnElement | undefined;
  if (cfnTable) {
    validations.acknowledge({
      id: `AwsSolutions::AwsSolutions-IAM5[Resource::<${Stack.of(cfnTable).getLogicalId(cfnTable)}.Arn>/index/*]`,
      reason: "The stores Query the sessions table's one index (SessionsByCreation); the grant names the table's indexes, of which there is only that one.",
    });
  }
  if (props.table.encryptionKey) {
    for (const action of ['kms:GenerateDataKey*', 'kms:ReEncrypt*']) {
      validations.acknowledge({
        id: `AwsSolutions::AwsSolutions-IAM5[Action::${action}]`,
        reason: "DynamoDB's grant on a table with a customer-managed key: the action families DynamoDB calls on that one key.",
      });
    }
  }
  if (props.network) {
    validations.acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
      reason:
        'A function in a VPC creates and deletes its network interfaces; ec2:CreateNetworkInterface and ec2:DescribeNetworkInterfaces take no narrower resource.',
    });
  }
}
