import type { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENVIRONMENT, PROJECT_PATHS, PROJECT_ROOT } from '../../contracts';

export const LAMBDA_BUNDLING: BundlingOptions = {
  format: OutputFormat.ESM,
  target: 'node22',
  // Prefer the ESM build of dependencies that ship both.
  mainFields: ['module', 'main'],
  // CommonJS dependencies bundled into an ESM file still call require(); ESM has none, so define it.
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  // Bundle the AWS SDK too: the deployed code runs the SDK version the tests ran, not the runtime's.
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
  /** What the site connection needs beyond the table (its secrets, SSM). */
  policies?: readonly PolicyStatement[];
  logRetention?: RetentionDays;
}

/**
 * One Lambda per function of a workflow, all from the one entry file, each pointing at its own export
 * (handler `index.<Name>`), with the same runtime and bundling for every workflow.
 */
export class WorkflowFunctions<Name extends string> extends Construct {
  readonly functions: Readonly<Record<Name, NodejsFunction>>;

  constructor(scope: Construct, id: string, props: WorkflowFunctionsProps<Name>) {
    super(scope, id);
    const environment = {
      ...props.environment,
      [ENVIRONMENT.tableName]: props.table.tableName,
      // Stack traces point at the TypeScript sources through the bundled source map.
      NODE_OPTIONS: '--enable-source-maps',
    };
    const entries = (Object.entries(props.timeouts) as [Name, Duration][]).map(([name, timeout]) => {
      const fn = new NodejsFunction(this, name, {
        entry: props.entry,
        handler: name,
        projectRoot: PROJECT_ROOT,
        depsLockFilePath: PROJECT_PATHS.lockFile,
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        memorySize: 512,
        timeout,
        environment,
        initialPolicy: [...(props.policies ?? [])],
        tracing: Tracing.ACTIVE,
        logGroup: new LogGroup(this, `${name}Logs`, { retention: props.logRetention ?? RetentionDays.ONE_MONTH }),
        bundling: LAMBDA_BUNDLING,
      });
      props.table.grantReadWriteData(fn);
      return [name, fn] as const;
    });
    this.functions = Object.fromEntries(entries) as Record<Name, NodejsFunction>;
  }
}
