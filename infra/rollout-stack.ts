import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { SiteProfile } from '../core/site/site-profile';
import { GroupDeploymentFunctions } from './constructs/group-deployment-functions';
import { GroupDeploymentWorkflow } from './constructs/group-deployment-workflow';
import { RollingUpgradeFunctions } from './constructs/rolling-upgrade-functions';
import { RollingUpgradeWorkflow } from './constructs/rolling-upgrade-workflow';
import { RolloutApi } from './constructs/rollout-api';
import { ENVIRONMENT } from '../contracts';
import { RolloutEvents, RolloutSchedules } from './constructs/schedules-and-events';
import { SessionsTable } from './constructs/sessions-table';
import { SiteConnection } from './constructs/site-connection';

/**
 * The deployed rollout service for one site: the table, and per workflow its functions and state
 * machines (rolling upgrade; group deployment), and the REST API over them (IAM auth). Both
 * workflows share the one table, as the store adapters and the embedded engine do.
 */
export interface RolloutStackProps extends StackProps {
  /** The site connection profile (`-c siteProfile=FILE`); without one the site comes in as stack parameters. */
  siteProfile?: SiteProfile;
}

export class RolloutStack extends Stack {
  constructor(scope: Construct, id: string, props?: RolloutStackProps) {
    super(scope, id, props);
    const site = new SiteConnection(this, 'Site', { profile: props?.siteProfile });
    const { table } = new SessionsTable(this, 'Sessions');
    const events = new RolloutEvents(this, 'Events');
    const eventsEnvironment = { [ENVIRONMENT.eventBusName]: events.bus.eventBusName };

    const rollingUpgradeFunctions = new RollingUpgradeFunctions(this, 'RollingUpgradeFunctions', {
      table,
      environment: { ...site.rollingUpgradeEnvironment, ...eventsEnvironment },
      policies: site.policies,
    });
    const rollingUpgrade = new RollingUpgradeWorkflow(this, 'RollingUpgrade', { functions: rollingUpgradeFunctions.functions });

    const groupDeploymentFunctions = new GroupDeploymentFunctions(this, 'GroupDeploymentFunctions', {
      table,
      environment: { ...site.groupDeploymentEnvironment, ...eventsEnvironment },
      policies: site.policies,
    });
    const groupDeployment = new GroupDeploymentWorkflow(this, 'GroupDeployment', { functions: groupDeploymentFunctions.functions });

    const { api } = new RolloutApi(this, 'Api', { table, rollingUpgrade: rollingUpgrade.stateMachine, groupDeployment: groupDeployment.groupDeployment });

    new CfnOutput(this, 'ApiUrl', { value: api.url });
    events.grantPublish(...Object.values(rollingUpgradeFunctions.functions), ...Object.values(groupDeploymentFunctions.functions));
    const schedules = new RolloutSchedules(this, 'Schedules', { stateMachines: [rollingUpgrade.stateMachine, groupDeployment.groupDeployment] });

    new CfnOutput(this, 'RollingUpgradeStateMachineArn', { value: rollingUpgrade.stateMachine.stateMachineArn });
    new CfnOutput(this, 'GroupDeploymentStateMachineArn', { value: groupDeployment.groupDeployment.stateMachineArn });
    new CfnOutput(this, 'DeployGroupStateMachineArn', { value: groupDeployment.deployGroup.stateMachineArn });
    new CfnOutput(this, 'RunNodeBatchesStateMachineArn', { value: groupDeployment.runNodeBatches.stateMachineArn });
    new CfnOutput(this, 'SessionsTableName', { value: table.tableName });
    new CfnOutput(this, 'EventBusName', { value: events.bus.eventBusName });
    new CfnOutput(this, 'ScheduleGroupName', { value: schedules.group.ref });
    new CfnOutput(this, 'SchedulerRoleArn', { value: schedules.role.roleArn });
  }
}
