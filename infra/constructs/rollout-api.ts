import { Duration } from 'aws-cdk-lib';
import { AuthorizationType, LambdaRestApi, MethodLoggingLevel } from 'aws-cdk-lib/aws-apigateway';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { ENVIRONMENT, PROJECT_PATHS, PROJECT_ROOT } from '../../contracts';
import { LAMBDA_BUNDLING } from './workflow-functions';

export interface RolloutApiProps {
  table: ITable;
  rollingUpgrade: IStateMachine;
  groupDeployment: IStateMachine;
  logRetention?: RetentionDays;
}

/**
 * The REST API (sessions, deployments, environments) behind API Gateway: every path and method
 * proxied to one Lambda running the same routes `rollout serve` serves, every method behind IAM
 * auth (SigV4): callers need execute-api:Invoke on the API.
 */
export class RolloutApi extends Construct {
  readonly api: LambdaRestApi;
  readonly handler: NodejsFunction;

  constructor(scope: Construct, id: string, props: RolloutApiProps) {
    super(scope, id);
    this.handler = new NodejsFunction(this, 'Handler', {
      entry: PROJECT_PATHS.apiEntry,
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: PROJECT_PATHS.lockFile,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      // API Gateway gives up on an integration after 29 s.
      timeout: Duration.seconds(29),
      environment: {
        [ENVIRONMENT.tableName]: props.table.tableName,
        [ENVIRONMENT.rollingUpgradeStateMachineArn]: props.rollingUpgrade.stateMachineArn,
        [ENVIRONMENT.groupDeploymentStateMachineArn]: props.groupDeployment.stateMachineArn,
        NODE_OPTIONS: '--enable-source-maps',
      },
      tracing: Tracing.ACTIVE,
      logGroup: new LogGroup(this, 'HandlerLogs', { retention: props.logRetention ?? RetentionDays.ONE_MONTH }),
      bundling: LAMBDA_BUNDLING,
    });
    props.table.grantReadWriteData(this.handler);
    props.rollingUpgrade.grantStartExecution(this.handler);
    props.groupDeployment.grantStartExecution(this.handler);

    this.api = new LambdaRestApi(this, 'RestApi', {
      handler: this.handler,
      proxy: true,
      description: 'baremetal-rollout: upgrade sessions, group deployments and environments',
      defaultMethodOptions: { authorizationType: AuthorizationType.IAM },
      deployOptions: { stageName: 'v1', tracingEnabled: true, loggingLevel: MethodLoggingLevel.OFF },
    });
  }
}
