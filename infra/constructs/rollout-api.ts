import { Duration, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat, AuthorizationType, LambdaRestApi, LogGroupLogDestination, MethodLoggingLevel } from 'aws-cdk-lib/aws-apigateway';
import { ManagedPolicy, Role, ServicePrincipal, type PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { ENVIRONMENT, PROJECT_PATHS, PROJECT_ROOT } from '../../contracts';
import { acknowledgeFunctionFindings, DEPS_LOCK_FILE, grantTableActions, LAMBDA_BUNDLING, type FunctionNetwork } from './workflow-functions';

export interface RolloutApiProps {
  table: ITable;
  rollingUpgrade: IStateMachine;
  groupDeployment: IStateMachine;
  environmentUpgrade: IStateMachine;
  /** The site connection (its variables and the policies its secrets need): the API checks requests against the boot service and the inventory. */
  site?: { environment: Readonly<Record<string, string>>; policies: readonly PolicyStatement[] };
  logRetention?: RetentionDays;
  removalPolicy?: RemovalPolicy;
  /** The functions' VPC, subnets and security groups, as the workflow functions have them. */
  network?: FunctionNetwork;
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
    const retention = props.logRetention ?? RetentionDays.ONE_MONTH;
    const logGroup = new LogGroup(this, 'HandlerLogs', { retention, removalPolicy: props.removalPolicy });
    // Its own role writing to its own log group only, as the workflow functions have.
    const role = new Role(this, 'HandlerRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      managedPolicies: props.network ? [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole')] : [],
    });
    logGroup.grantWrite(role);
    this.handler = new NodejsFunction(this, 'Handler', {
      role,
      entry: PROJECT_PATHS.apiEntry,
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: DEPS_LOCK_FILE,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      // API Gateway gives up on an integration after 29 s.
      timeout: Duration.seconds(29),
      environment: {
        ...props.site?.environment,
        [ENVIRONMENT.tableName]: props.table.tableName,
        [ENVIRONMENT.rollingUpgradeStateMachineArn]: props.rollingUpgrade.stateMachineArn,
        [ENVIRONMENT.groupDeploymentStateMachineArn]: props.groupDeployment.stateMachineArn,
        [ENVIRONMENT.environmentUpgradeStateMachineArn]: props.environmentUpgrade.stateMachineArn,
        NODE_OPTIONS: '--enable-source-maps',
      },
      initialPolicy: [...(props.site?.policies ?? [])],
      tracing: Tracing.ACTIVE,
      logGroup,
      ...props.network,
      bundling: LAMBDA_BUNDLING,
    });
    grantTableActions(props.table, this.handler, 'Api');
    props.rollingUpgrade.grantStartExecution(this.handler);
    // A cancel wakes an execution parked in `Wait For Operator`: SendTaskSuccess with its task token.
    props.rollingUpgrade.grantTaskResponse(this.handler);
    props.groupDeployment.grantStartExecution(this.handler);
    props.environmentUpgrade.grantStartExecution(this.handler);

    this.api = new LambdaRestApi(this, 'RestApi', {
      handler: this.handler,
      proxy: true,
      description: 'baremetal-rollout: upgrade sessions, group deployments and environments',
      defaultMethodOptions: { authorizationType: AuthorizationType.IAM },
      deployOptions: {
        stageName: 'v1',
        tracingEnabled: true,
        loggingLevel: MethodLoggingLevel.OFF,
        accessLogDestination: new LogGroupLogDestination(new LogGroup(this, 'AccessLogs', { retention, removalPolicy: props.removalPolicy })),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
      },
      // Execution logging needs an account-wide API Gateway role; access logs and X-Ray cover the calls.
      cloudWatchRole: false,
    });
    acknowledgeFunctionFindings(this, props);
    acknowledgeApiFindings(this);
  }
}

/** cdk-nag AwsSolutions findings on the API that its design answers, each with its reason. */
function acknowledgeApiFindings(scope: Construct): void {
  const validations = Validations.of(scope);
  validations.acknowledge({ id: 'AwsSolutions::AwsSolutions-APIG2', reason: 'Every request is validated by the handlers with the domain zod schemas (the OpenAPI document is generated from them) and refused as problem+json naming the fields.' });
  validations.acknowledge({ id: 'AwsSolutions::AwsSolutions-APIG3', reason: 'Every method requires IAM (SigV4) auth; a WAF web ACL is the operator\'s choice to associate, not part of the service.' });
  validations.acknowledge({ id: 'AwsSolutions::AwsSolutions-APIG6', reason: 'Execution logging needs an account-wide API Gateway CloudWatch role, which a construct must not set; the stage keeps access logs and X-Ray traces.' });
  validations.acknowledge({ id: 'AwsSolutions::AwsSolutions-COG4', reason: 'The API is for operators and their tools under IAM (SigV4) auth, not for Cognito users.' });
}
