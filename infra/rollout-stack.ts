import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { RolloutWorkflows, type RolloutWorkflowsProps } from './constructs/rollout-workflows';

/** The stack `cdk deploy` (infra/app.ts) deploys: one `RolloutWorkflows`, and the outputs the CLI's `--aws` target reads. */
export interface RolloutStackProps extends StackProps, RolloutWorkflowsProps {}

export class RolloutStack extends Stack {
  readonly rollout: RolloutWorkflows;

  constructor(scope: Construct, id: string, props: RolloutStackProps = {}) {
    super(scope, id, props);
    // 'Default' is left out of logical ids: the resources keep the ids they had when the stack declared them itself.
    this.rollout = new RolloutWorkflows(this, 'Default', props);

    // Read by `rollout --aws` (cli/targets.ts, STACK_OUTPUTS).
    new CfnOutput(this, 'RollingUpgradeStateMachineArn', { value: this.rollout.rollingUpgrade.stateMachineArn });
    new CfnOutput(this, 'GroupDeploymentStateMachineArn', { value: this.rollout.groupDeployment.stateMachineArn });
    new CfnOutput(this, 'DeployGroupStateMachineArn', { value: this.rollout.deployGroup.stateMachineArn });
    new CfnOutput(this, 'RunNodeBatchesStateMachineArn', { value: this.rollout.runNodeBatches.stateMachineArn });
    new CfnOutput(this, 'TaskGraphStateMachineArn', { value: this.rollout.taskGraph.stateMachineArn });
    new CfnOutput(this, 'EnvironmentUpgradeStateMachineArn', { value: this.rollout.environmentUpgrade.stateMachineArn });
    new CfnOutput(this, 'SessionsTableName', { value: this.rollout.table.tableName });
    new CfnOutput(this, 'DashboardName', { value: this.rollout.monitoring.dashboard.dashboardName });
    new CfnOutput(this, 'ApiUrl', { value: this.rollout.api.url });
    // Attach to operators' roles: read (GET, HEAD) and change (POST, DELETE) access to the REST API.
    new CfnOutput(this, 'ApiReadAccessPolicyArn', { value: this.rollout.apiReadAccess.managedPolicyArn });
    new CfnOutput(this, 'ApiChangeAccessPolicyArn', { value: this.rollout.apiChangeAccess.managedPolicyArn });
    // The site relay on the slurmctld host: the role it assumes (POST /site-events only) and the route it posts to.
    new CfnOutput(this, 'SiteRelayRoleArn', { value: this.rollout.siteRelayRole.roleArn });
    new CfnOutput(this, 'SiteEventsUrl', { value: this.rollout.siteEventsUrl });
    new CfnOutput(this, 'EventBusName', { value: this.rollout.eventBus.eventBusName });
    new CfnOutput(this, 'ScheduleGroupName', { value: this.rollout.schedules.group.ref });
    new CfnOutput(this, 'SchedulerRoleArn', { value: this.rollout.schedules.role.roleArn });
  }
}
