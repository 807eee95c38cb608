import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENVIRONMENT } from '../../lambdas/entrypoints/environment';
import { ROLLING_UPGRADE_FUNCTION_NAMES, type RollingUpgradeFunctionName } from '../../lambdas/handlers/rolling-upgrade/handlers';
import { PROJECT_PATHS, PROJECT_ROOT } from '../project-paths';

/**
 * Lambda timeouts, equal to the TimeoutSeconds of the Task that invokes each function in
 * statemachines/rolling-upgrade.asl.json: a longer Lambda would outlive its Task, a shorter one
 * would be cut off before the workflow gives up on it.
 */
export const OPEN_SESSION_TIMEOUT = Duration.minutes(2);
export const STAGE_TIMEOUT = Duration.minutes(15);

const BUNDLING: BundlingOptions = {
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

export interface RollingUpgradeFunctionsProps {
  table: ITable;
  /** The site connection; the table name is added here. */
  environment: Readonly<Record<string, string>>;
  logRetention?: RetentionDays;
}

/** One Lambda per rolling-upgrade function, all from the one entry file, each pointing at its own export. */
export class RollingUpgradeFunctions extends Construct {
  readonly functions: Readonly<Record<RollingUpgradeFunctionName, NodejsFunction>>;

  constructor(scope: Construct, id: string, props: RollingUpgradeFunctionsProps) {
    super(scope, id);
    const environment = {
      ...props.environment,
      [ENVIRONMENT.tableName]: props.table.tableName,
      // Stack traces point at the TypeScript sources through the bundled source map.
      NODE_OPTIONS: '--enable-source-maps',
    };
    const entries = ROLLING_UPGRADE_FUNCTION_NAMES.map((name) => {
      const fn = new NodejsFunction(this, name, {
        entry: PROJECT_PATHS.rollingUpgradeEntry,
        handler: name,
        projectRoot: PROJECT_ROOT,
        depsLockFilePath: PROJECT_PATHS.lockFile,
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        memorySize: 512,
        timeout: name === 'OpenSession' ? OPEN_SESSION_TIMEOUT : STAGE_TIMEOUT,
        environment,
        tracing: Tracing.ACTIVE,
        logGroup: new LogGroup(this, `${name}Logs`, { retention: props.logRetention ?? RetentionDays.ONE_MONTH }),
        bundling: BUNDLING,
      });
      props.table.grantReadWriteData(fn);
      return [name, fn] as const;
    });
    this.functions = Object.fromEntries(entries) as Record<RollingUpgradeFunctionName, NodejsFunction>;
  }
}
