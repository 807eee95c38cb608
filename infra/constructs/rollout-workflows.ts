import { RemovalPolicy } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { SiteProfile } from '../../core/site/site-profile';
import { GroupDeploymentFunctions } from './group-deployment-functions';
import { GroupDeploymentWorkflow } from './group-deployment-workflow';
import { EnvironmentUpgradeFunctions } from './environment-upgrade-functions';
import { EnvironmentUpgradeWorkflow } from './environment-upgrade-workflow';
import { RollingUpgradeFunctions } from './rolling-upgrade-functions';
import { RollingUpgradeWorkflow } from './rolling-upgrade-workflow';
import type { EventBus } from 'aws-cdk-lib/aws-events';
import type { LambdaRestApi } from 'aws-cdk-lib/aws-apigateway';
import { ENVIRONMENT } from '../../contracts';
import { RolloutApi, type ApiThrottling } from './rollout-api';
import type { IPrincipal, ManagedPolicy, Role } from 'aws-cdk-lib/aws-iam';
import { RolloutMonitoring } from './rollout-monitoring';
import { RolloutEvents, RolloutSchedules, type DeclaredSchedule } from './schedules-and-events';
import { SessionsTable } from './sessions-table';
import { CommandEndNotifications, notifyingInstances } from './command-end-notifications';
import { SiteConnection, type SsmTarget } from './site-connection';
import { TaskGraphFunctions } from './task-graph-functions';
import { TaskGraphWorkflow } from './task-graph-workflow';
import type { FunctionNetwork } from './workflow-functions';

/** What every workflow's functions share: the table, the site, logs and network. */
interface WorkflowCommon {
  table: Table;
  site: SiteConnection;
  logRetention: RetentionDays;
  removalPolicy: RemovalPolicy;
  network: FunctionNetwork | undefined;
}

export type { SsmTarget } from './site-connection';
export type { DeclaredSchedule } from './schedules-and-events';

/** What `RolloutWorkflows` deploys into, and how; every prop is optional. */
export interface RolloutWorkflowsProps {
  /**
   * The site connection profile (core/site/site-profile.ts; `loadSiteProfileFile` reads the YAML the CLI
   * reads). Its tokens must be `{secretArn}`: the functions read them at cold start. Without a profile the
   * site comes in as stack parameters (WorkloadManagerUrl, SlurmTokenSecretArn, ...).
   */
  siteProfile?: SiteProfile;
  /**
   * A lab without TLS: the URL parameters may be http:// although tokens travel over them. Default false
   * (https only; a profile says it with its own `allowInsecureHttp`).
   */
  allowInsecureHttp?: boolean;
  /** The VPC the functions run in, when slurmrestd, BOS or HSM are reachable only from inside it. Default: no VPC. */
  vpc?: IVpc;
  /** Subnets for the functions (with a `vpc`). Default: the VPC's private subnets. */
  vpcSubnets?: SubnetSelection;
  /** Security groups for the functions (with a `vpc`): the ones slurmrestd and the site APIs admit. Default: one new group. */
  securityGroups?: ISecurityGroup[];
  /**
   * The instances the functions may send commands to through SSM Run Command, an allow-list reviewed on its
   * own: every instance the profile's `ssm` transports name must be in it. Default: exactly those instances.
   */
  ssmTargets?: readonly SsmTarget[];
  /** Where the alarms (failed executions, Lambda errors and throttles) notify. Default: the alarms only show on the dashboard. */
  alarmTopic?: ITopic;
  /** Retention of the state machines' and functions' log groups. Default: one month. */
  logRetention?: RetentionDays;
  /**
   * What a stack deletion does to the sessions table (the only record of sessions in flight and of node locks)
   * and to the log groups. Default: RETAIN.
   */
  removalPolicy?: RemovalPolicy;
  /** Schedules created with the stack, each starting an upgrade or a deployment with its request (checked at synth). */
  schedules?: readonly DeclaredSchedule[];
  /** A customer-managed key for the table. Default: the AWS-managed DynamoDB key. */
  tableEncryptionKey?: IKey;
  /** Name of the CloudWatch dashboard. Default: CloudFormation names it. */
  dashboardName?: string;
  /** The REST API stage's throttling. Default: 25 requests per second, bursts of 50. */
  apiThrottling?: ApiThrottling;
  /**
   * DynamoDB deletion protection on the table (the only record of sessions in flight and of node locks): a
   * delete of the table is refused until it is turned off. Default: on, unless `removalPolicy` is DESTROY.
   */
  tableDeletionProtection?: boolean;
  /**
   * Who may assume the site relay's role (`siteRelayRole`: POST /site-events only), e.g. the slurmctld host's
   * role or account. Default: this account (any of its principals whose own policy allows sts:AssumeRole on it).
   */
  siteRelayPrincipal?: IPrincipal;
}

/**
 * The rollout service, embeddable in any CDK app: the sessions table, per workflow its functions and
 * state machines (rolling upgrade; group deployment, three machines; task graph), alarms and a dashboard. The state
 * machines are named `<stack name>-<machine>`, so one stack holds one `RolloutWorkflows`.
 *
 * ```ts
 * const rollout = new RolloutWorkflows(stack, 'Rollout', { siteProfile, vpc, alarmTopic });
 * new CfnOutput(stack, 'RollingUpgradeStateMachineArn', { value: rollout.rollingUpgrade.stateMachineArn });
 * ```
 */
export class RolloutWorkflows extends Construct {
  readonly table: Table;
  /** The rolling-upgrade state machine: the one to start for an upgrade. */
  readonly rollingUpgrade: StateMachine;
  /** The group deployment as a whole: the one to start for a deployment. */
  readonly groupDeployment: StateMachine;
  /** GroupDeployment's children (one execution per ready group; per page of node batches). */
  readonly deployGroup: StateMachine;
  readonly runNodeBatches: StateMachine;
  /** A task graph's run (Fuel's granular deployment on the annealer): alone, or as a group's deploy phase. */
  readonly taskGraph: StateMachine;
  /** The side-by-side environment upgrade (POST /environments/{id}/upgrade); it starts rollingUpgrade executions. */
  readonly environmentUpgrade: StateMachine;
  /** Every Lambda, by function name (contracts/). */
  readonly functions: Readonly<Record<string, NodejsFunction>>;
  readonly monitoring: RolloutMonitoring;
  /** The REST API (sessions, deployments, environments) behind IAM auth. */
  readonly api: LambdaRestApi;
  /** Read access to the REST API (GET, HEAD on every route), to attach to operators' roles. */
  readonly apiReadAccess: ManagedPolicy;
  /** Change access to the REST API (POST, DELETE on every route): starts, cancels, registrations, removals. */
  readonly apiChangeAccess: ManagedPolicy;
  /** The site relay's role (`rollout relay --aws` on the slurmctld host): execute-api:Invoke on POST /site-events, nothing else. */
  readonly siteRelayRole: Role;
  /** The route the site relay posts a trigger's firing to. */
  readonly siteEventsUrl: string;
  /** The bus of the status events the workflows publish. */
  readonly eventBus: EventBus;
  /** The EventBridge Scheduler group and role that `rollout schedule --aws` uses. */
  readonly schedules: RolloutSchedules;
  /**
   * With a profile whose SSM transports set `commandNotifications`: the rule on SSM's notifications of those
   * instances' commands, and its target, which wakes a session whose health check ended. Else undefined.
   */
  readonly commandEnds?: CommandEndNotifications;

  constructor(scope: Construct, id: string, props: RolloutWorkflowsProps = {}) {
    super(scope, id);
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const site = new SiteConnection(this, 'Site', {
      profile: props.siteProfile,
      ssmTargets: props.ssmTargets,
      allowInsecureHttp: props.allowInsecureHttp === true,
    });
    this.table = new SessionsTable(this, 'Sessions', {
      removalPolicy,
      encryptionKey: props.tableEncryptionKey,
      deletionProtection: props.tableDeletionProtection ?? removalPolicy !== RemovalPolicy.DESTROY,
    }).table;
    const network: FunctionNetwork | undefined = props.vpc ? { vpc: props.vpc, vpcSubnets: props.vpcSubnets, securityGroups: props.securityGroups } : undefined;
    const events = new RolloutEvents(this, 'Events', { removalPolicy });
    this.eventBus = events.bus;
    const workflows = this.workflows(
      { table: this.table, site, logRetention, removalPolicy, network },
      { [ENVIRONMENT.eventBusName]: events.bus.eventBusName },
    );
    this.rollingUpgrade = workflows.rollingUpgrade;
    this.taskGraph = workflows.taskGraph;
    this.groupDeployment = workflows.groupDeployment.groupDeployment;
    this.deployGroup = workflows.groupDeployment.deployGroup;
    this.runNodeBatches = workflows.groupDeployment.runNodeBatches;
    this.environmentUpgrade = workflows.environmentUpgrade;
    this.functions = workflows.functions;
    events.grantPublish(...Object.values(this.functions));
    this.schedules = new RolloutSchedules(this, 'Schedules', {
      stateMachines: [this.rollingUpgrade, this.groupDeployment],
      targets: { rollingUpgrade: this.rollingUpgrade, groupDeployment: this.groupDeployment },
      ...(props.schedules ? { declared: props.schedules } : {}),
      removalPolicy,
    });
    const api = new RolloutApi(this, 'Api', {
      table: this.table,
      rollingUpgrade: this.rollingUpgrade,
      groupDeployment: this.groupDeployment,
      taskGraph: this.taskGraph,
      environmentUpgrade: this.environmentUpgrade,
      // The API checks requests against the boot service and the inventory before it answers.
      site: { environment: site.rollingUpgradeEnvironment, access: site },
      logRetention,
      removalPolicy,
      ...(network ? { network } : {}),
      ...(props.apiThrottling ? { throttling: props.apiThrottling } : {}),
      ...(props.siteRelayPrincipal ? { siteRelayPrincipal: props.siteRelayPrincipal } : {}),
    });
    this.api = api.api;
    this.apiReadAccess = api.readAccess;
    this.apiChangeAccess = api.changeAccess;
    this.siteRelayRole = api.siteRelayRole;
    this.siteEventsUrl = api.siteEventsUrl;
    this.commandEnds = this.commandEndNotifications(props.siteProfile, logRetention, removalPolicy);

    this.monitoring = new RolloutMonitoring(this, 'Monitoring', {
      stateMachines: {
        RollingUpgrade: this.rollingUpgrade,
        GroupDeployment: this.groupDeployment,
        DeployGroup: this.deployGroup,
        RunNodeBatches: this.runNodeBatches,
        TaskGraph: this.taskGraph,
        EnvironmentUpgrade: this.environmentUpgrade,
      },
      functions: { ...this.functions, ApiHandler: api.handler, ...(this.commandEnds ? { CommandEnds: this.commandEnds.handler } : {}) },
      publisherLogGroups: workflows.publisherLogGroups,
      scheduleGroupName: this.schedules.groupName,
      alarmTopic: props.alarmTopic,
      dashboardName: props.dashboardName,
    });
  }

  /** The rule on SSM's notifications of the profile's notifying transports, and its target; none when no transport notifies. */
  private commandEndNotifications(profile: SiteProfile | undefined, logRetention: RetentionDays, removalPolicy: RemovalPolicy) {
    const instances = notifyingInstances(profile);
    if (!instances) return undefined;
    return new CommandEndNotifications(this, 'CommandEnds', { instances, table: this.table, rollingUpgrade: this.rollingUpgrade, logRetention, removalPolicy });
  }

  /** The four workflows, each over its functions (created in this order: their construct ids and the template's order depend on it). */
  private workflows(common: WorkflowCommon, eventsEnvironment: Readonly<Record<string, string>>) {
    const { site, logRetention, removalPolicy } = common;
    const rollingUpgradeFunctions = new RollingUpgradeFunctions(this, 'RollingUpgradeFunctions', {
      ...common,
      environment: { ...site.rollingUpgradeEnvironment, ...eventsEnvironment },
    });
    const rollingUpgrade = new RollingUpgradeWorkflow(this, 'RollingUpgrade', {
      functions: rollingUpgradeFunctions.functions,
      logRetention,
      removalPolicy,
    }).stateMachine;

    // The task graph runs drains, resumes and reboots, and commands through the head node: the rolling upgrade's site.
    const taskGraphFunctions = new TaskGraphFunctions(this, 'TaskGraphFunctions', {
      ...common,
      environment: { ...site.rollingUpgradeEnvironment, ...eventsEnvironment },
    });
    const taskGraph = new TaskGraphWorkflow(this, 'TaskGraph', { functions: taskGraphFunctions.functions, logRetention, removalPolicy }).stateMachine;

    const groupDeploymentFunctions = new GroupDeploymentFunctions(this, 'GroupDeploymentFunctions', {
      ...common,
      environment: { ...site.groupDeploymentEnvironment, ...eventsEnvironment },
    });
    const groupDeployment = new GroupDeploymentWorkflow(this, 'GroupDeployment', {
      functions: groupDeploymentFunctions.functions,
      taskGraph,
      logRetention,
      removalPolicy,
    });

    // Boot service and inventory, as the rolling-upgrade functions reach them.
    const environmentUpgradeFunctions = new EnvironmentUpgradeFunctions(this, 'EnvironmentUpgradeFunctions', {
      ...common,
      environment: site.rollingUpgradeEnvironment,
    });
    const environmentUpgrade = new EnvironmentUpgradeWorkflow(this, 'EnvironmentUpgrade', {
      functions: environmentUpgradeFunctions.functions,
      rollingUpgrade,
      logRetention,
      removalPolicy,
    }).stateMachine;
    return {
      rollingUpgrade,
      taskGraph,
      groupDeployment,
      environmentUpgrade,
      functions: {
        ...rollingUpgradeFunctions.functions,
        ...groupDeploymentFunctions.functions,
        ...taskGraphFunctions.functions,
        ...environmentUpgradeFunctions.functions,
      },
      // The functions that publish status events: a refused PutEvents is counted from their logs.
      publisherLogGroups: { ...rollingUpgradeFunctions.logGroups, ...groupDeploymentFunctions.logGroups },
    };
  }
}
