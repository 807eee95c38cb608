import { Duration, Stack, Validations, type CfnElement, type RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat, AuthorizationType, LambdaRestApi, LogGroupLogDestination, MethodLoggingLevel } from 'aws-cdk-lib/aws-apigateway';
import {
  AccountPrincipal,
  AccountRootPrincipal,
  ArnPrincipal,
  ManagedPolicy,
  PolicyDocument,
  PolicyStatement,
  Role,
  ServicePrincipal,
  type IPrincipal,
} from 'aws-cdk-lib/aws-iam';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { ENVIRONMENT, PROJECT_PATHS, PROJECT_ROOT, SITE_SERVICES } from '../../contracts';
import { InvalidInputError } from '../../core/errors';
import { childExecutionsArn, fixedName } from './asl-state-machine';
import type { SiteAccess } from './site-connection';
import { acknowledgeFunctionFindings, DEPS_LOCK_FILE, grantTableActions, LAMBDA_BUNDLING, type FunctionNetwork } from './workflow-functions';

export interface RolloutApiProps {
  table: ITable;
  rollingUpgrade: IStateMachine;
  groupDeployment: IStateMachine;
  /** Started, stopped, cancelled and resumed through the API (/task-runs), as the other workflows. */
  taskGraph: IStateMachine;
  environmentUpgrade: IStateMachine;
  /** The site connection (its variables and the policies its secrets need): the API checks requests against the boot service and the inventory. */
  site?: { environment: Readonly<Record<string, string>>; access: SiteAccess };
  logRetention?: RetentionDays;
  removalPolicy?: RemovalPolicy;
  /** The functions' VPC, subnets and security groups, as the workflow functions have them. */
  network?: FunctionNetwork;
  /** The stage's throttling (requests per second, steady and burst). Default: 25 and 50, far above what operators and their tools send. */
  throttling?: ApiThrottling;
  /** Who may assume the site relay's role (the slurmctld host's identity). Default: the account (any of its principals allowed sts:AssumeRole on it). */
  siteRelayPrincipal?: IPrincipal;
}

export interface ApiThrottling {
  rateLimit: number;
  burstLimit: number;
}

/** The stage the API is deployed in: its URL and its execute-api ARNs name it. */
export const API_STAGE = 'v1';

/** The methods that read (read access) and those that change something (change access): every route is one or the other. */
export const API_READ_METHODS = ['GET', 'HEAD'] as const;
export const API_CHANGE_METHODS = ['POST', 'DELETE'] as const;

/** The one route the site relay (`rollout relay --aws`) calls: a trigger's firing, idempotent by its id. */
export const SITE_EVENTS_ROUTE = { method: 'POST', path: '/site-events' } as const;

/**
 * The principal `-c siteRelayPrincipal=...` names: an account id (its principals allowed sts:AssumeRole on the
 * role by their own policies) or an IAM ARN (the slurmctld host's role, or a user). Refused naming the key otherwise.
 */
export function siteRelayPrincipalFrom(value: string): IPrincipal {
  if (/^\d{12}$/.test(value)) return new AccountPrincipal(value);
  if (/^arn:aws[a-z-]*:(iam|sts)::\d{12}:\S+$/.test(value)) return new ArnPrincipal(value);
  throw new InvalidInputError('CDK context', [
    { field: 'siteRelayPrincipal', message: `must be an account id (12 digits) or an IAM ARN (arn:aws:iam::<account>:role/<name>), got '${value}'` },
  ]);
}

/**
 * The REST API (sessions, deployments, task runs, environments) behind API Gateway: every path proxied to one
 * Lambda running the same routes `rollout serve` serves, each of the methods the routes use (GET,
 * HEAD, POST, DELETE) its own API Gateway method behind IAM auth (SigV4), so that a caller's
 * `execute-api:Invoke` names the verb and path it may use: `readAccess` lets a principal read
 * everything, `changeAccess` start, cancel, register and delete; finer grants name routes.
 */
export class RolloutApi extends Construct {
  readonly api: LambdaRestApi;
  readonly handler: NodejsFunction;
  /** execute-api:Invoke with GET and HEAD on every route: sessions, deployments, task runs, environments, releases, reports. Attach it to operators' roles. */
  readonly readAccess: ManagedPolicy;
  /** execute-api:Invoke with POST and DELETE on every route: starts, stops, resumes, cancels and removals, registrations, clones, assigns, environment upgrades. */
  readonly changeAccess: ManagedPolicy;
  /** The site relay's role: execute-api:Invoke on POST /site-events, nothing else (the slurmctld host assumes it). */
  readonly siteRelayRole: Role;
  /** The URL the site relay posts to: POST /site-events in the stage. */
  readonly siteEventsUrl: string;

  constructor(scope: Construct, id: string, props: RolloutApiProps) {
    super(scope, id);
    const retention = props.logRetention ?? RetentionDays.ONE_MONTH;
    this.handler = this.handlerFunction(props, retention);
    this.api = this.restApi(props, retention, this.handler);
    const invoke = (name: string, description: string, methods: readonly string[]) =>
      new ManagedPolicy(this, name, {
        description,
        statements: [
          new PolicyStatement({
            actions: ['execute-api:Invoke'],
            resources: methods.flatMap((method) => [this.api.arnForExecuteApi(method, '/', API_STAGE), this.api.arnForExecuteApi(method, '/*', API_STAGE)]),
          }),
        ],
      });
    this.readAccess = invoke(
      'ReadAccess',
      'baremetal-rollout REST API: read sessions, deployments, task runs, environments and releases (GET, HEAD)',
      API_READ_METHODS,
    );
    this.changeAccess = invoke(
      'ChangeAccess',
      'baremetal-rollout REST API: start, stop, resume, cancel and remove sessions, deployments and task runs; register, clone, assign, upgrade and delete environments (POST, DELETE)',
      API_CHANGE_METHODS,
    );
    this.siteRelayRole = this.relayRole(props.siteRelayPrincipal ?? new AccountRootPrincipal());
    this.siteEventsUrl = this.api.urlForPath(SITE_EVENTS_ROUTE.path);
    acknowledgeFunctionFindings(this, props);
    acknowledgeApiFindings(this, this.api);
  }

  /**
   * The credential of `rollout relay --aws` on the slurmctld host: it may deliver a firing and do nothing else
   * (no read, no start, no cancel; no other AWS API). The route is behind the API's IAM auth like every other,
   * and IAM matches the request's path, so the proxy's POST method serves it without a resource of its own.
   */
  private relayRole(assumedBy: IPrincipal): Role {
    return new Role(this, 'SiteRelayRole', {
      description: 'baremetal-rollout site relay (rollout relay --aws): POST /site-events on the REST API, nothing else',
      assumedBy,
      inlinePolicies: {
        DeliverSiteEvents: new PolicyDocument({
          statements: [
            new PolicyStatement({
              actions: ['execute-api:Invoke'],
              resources: [this.api.arnForExecuteApi(SITE_EVENTS_ROUTE.method, SITE_EVENTS_ROUTE.path, API_STAGE)],
            }),
          ],
        }),
      },
    });
  }

  /** The API's function, with its own role and log group, allowed the table, the site and the workflows it starts. */
  private handlerFunction(props: RolloutApiProps, retention: RetentionDays): NodejsFunction {
    const logGroup = new LogGroup(this, 'HandlerLogs', { retention, removalPolicy: props.removalPolicy });
    // Its own role writing to its own log group only, as the workflow functions have.
    const role = new Role(this, 'HandlerRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      managedPolicies: props.network ? [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole')] : [],
    });
    logGroup.grantWrite(role);
    props.site?.access.grant(role, SITE_SERVICES.Api);
    const handler = new NodejsFunction(this, 'Handler', {
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
        [ENVIRONMENT.taskGraphStateMachineArn]: props.taskGraph.stateMachineArn,
        NODE_OPTIONS: '--enable-source-maps',
      },
      tracing: Tracing.ACTIVE,
      logGroup,
      ...props.network,
      bundling: LAMBDA_BUNDLING,
    });
    grantTableActions(props.table, handler, 'Api');
    props.rollingUpgrade.grantStartExecution(handler);
    // A cancel wakes an execution parked in `Wait For Operator`: SendTaskSuccess with its task token.
    props.rollingUpgrade.grantTaskResponse(handler);
    props.groupDeployment.grantStartExecution(handler);
    props.taskGraph.grantStartExecution(handler);
    props.environmentUpgrade.grantStartExecution(handler);
    // Stop, cancel and the gate answer whether an execution picks the request up: the run's workflow's running executions, and their inputs.
    for (const workflow of [props.rollingUpgrade, props.groupDeployment, props.taskGraph]) {
      workflow.grant(handler, 'states:ListExecutions');
      handler.addToRolePolicy(new PolicyStatement({ actions: ['states:DescribeExecution'], resources: [childExecutionsArn(workflow)] }));
      Validations.of(this).acknowledge({
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${fixedName(workflow)}:*]`,
        reason:
          "DescribeExecution of the workflow's executions (whether one runs the session a stop, cancel or gate is for): their names are chosen at run time.",
      });
    }
    return handler;
  }

  /** The REST API over `handler`: each verb its own method, IAM auth, throttled, with access logs. */
  private restApi(props: RolloutApiProps, retention: RetentionDays, handler: NodejsFunction): LambdaRestApi {
    const throttling = props.throttling ?? { rateLimit: 25, burstLimit: 50 };
    const api = new LambdaRestApi(this, 'RestApi', {
      handler,
      // Each verb its own method (not ANY), on the root and on every path: IAM policies grant by verb and path.
      proxy: false,
      description: 'baremetal-rollout: upgrade sessions, group deployments and environments',
      defaultMethodOptions: { authorizationType: AuthorizationType.IAM },
      deployOptions: {
        stageName: API_STAGE,
        // Every method of the stage: a runaway client is answered 429 before it reaches the function and the table.
        throttlingRateLimit: throttling.rateLimit,
        throttlingBurstLimit: throttling.burstLimit,
        tracingEnabled: true,
        loggingLevel: MethodLoggingLevel.OFF,
        accessLogDestination: new LogGroupLogDestination(new LogGroup(this, 'AccessLogs', { retention, removalPolicy: props.removalPolicy })),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
      },
      // Execution logging needs an account-wide API Gateway role; access logs and X-Ray cover the calls.
      cloudWatchRole: false,
    });
    const proxy = api.root.addProxy({ anyMethod: false });
    for (const method of [...API_READ_METHODS, ...API_CHANGE_METHODS]) {
      api.root.addMethod(method);
      proxy.addMethod(method);
    }
    return api;
  }
}

/** cdk-nag AwsSolutions findings on the API that its design answers, each with its reason. */
function acknowledgeApiFindings(scope: Construct, api: LambdaRestApi): void {
  const validations = Validations.of(scope);
  const apiId = Stack.of(api).getLogicalId(api.node.defaultChild as CfnElement);
  for (const method of [...API_READ_METHODS, ...API_CHANGE_METHODS]) {
    validations.acknowledge({
      id: `AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${apiId}>/${API_STAGE}/${method}/*]`,
      reason: `The read and change access policies grant one verb (${method}) on every path of this API's stage: read vs change is the verb; a finer grant names routes (docs/guides/run-as-a-service.md, the REST API).`,
    });
  }
  validations.acknowledge({
    id: 'AwsSolutions::AwsSolutions-APIG2',
    reason:
      'Every request is validated by the handlers with the domain zod schemas (the OpenAPI document is generated from them) and refused as problem+json naming the fields.',
  });
  validations.acknowledge({
    id: 'AwsSolutions::AwsSolutions-APIG3',
    reason: "Every method requires IAM (SigV4) auth; a WAF web ACL is the operator's choice to associate, not part of the service.",
  });
  validations.acknowledge({
    id: 'AwsSolutions::AwsSolutions-APIG6',
    reason:
      'Execution logging needs an account-wide API Gateway CloudWatch role, which a construct must not set; the stage keeps access logs and X-Ray traces.',
  });
  validations.acknowledge({
    id: 'AwsSolutions::AwsSolutions-COG4',
    reason: 'The API is for operators and their tools under IAM (SigV4) auth, not for Cognito users.',
  });
}
