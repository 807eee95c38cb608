// Embedding the rollout workflows in a CDK app of your own (docs/guides/run-as-a-service.md: "Embedding the construct").
// Inside this repository the construct comes from '../../infra'; from a package, from its `infra` export.
import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { SecurityGroup, type IVpc } from 'aws-cdk-lib/aws-ec2';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { RolloutWorkflows, type SiteProfile } from '../../infra';

export interface MyHpcStackProps extends StackProps {
  /** e.g. `(await loadSiteProfileFile('site.yaml')).profile`: tokens as {secretArn}, read at cold start. */
  siteProfile: SiteProfile;
  /** Where slurmrestd, BOS and HSM are reachable, e.g. `Vpc.fromLookup(this, 'Vpc', { vpcId })`. */
  vpc: IVpc;
}

export class MyHpcStack extends Stack {
  constructor(scope: Construct, id: string, props: MyHpcStackProps) {
    super(scope, id, props);
    const { vpc } = props;
    const slurmrestdClients = new SecurityGroup(this, 'SlurmrestdClients', { vpc, description: 'Admitted by slurmrestd, BOS and HSM' });
    const alarmTopic = new Topic(this, 'RolloutAlarms', { enforceSSL: true });

    const rollout = new RolloutWorkflows(this, 'Rollout', {
      siteProfile: props.siteProfile,
      vpc,
      securityGroups: [slurmrestdClients],
      alarmTopic,
      logRetention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // The names `rollout --aws --stack <this stack>` reads.
    new CfnOutput(this, 'RollingUpgradeStateMachineArn', { value: rollout.rollingUpgrade.stateMachineArn });
    new CfnOutput(this, 'GroupDeploymentStateMachineArn', { value: rollout.groupDeployment.stateMachineArn });
    new CfnOutput(this, 'TaskGraphStateMachineArn', { value: rollout.taskGraph.stateMachineArn });
    new CfnOutput(this, 'SessionsTableName', { value: rollout.table.tableName });
    new CfnOutput(this, 'ScheduleGroupName', { value: rollout.schedules.group.ref });
    new CfnOutput(this, 'SchedulerRoleArn', { value: rollout.schedules.role.roleArn });
    new CfnOutput(this, 'ApiUrl', { value: rollout.api.url });
  }
}
