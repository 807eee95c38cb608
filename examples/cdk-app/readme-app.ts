// The app of "Embedding the construct" in docs/guides/run-as-a-service.md, as written there (its import mapped to this repository):
// test/infra/readme-embedding.test.ts keeps the two equal, and `npm run typecheck` checks this file.
import { App, CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { SecurityGroup, Vpc } from 'aws-cdk-lib/aws-ec2';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { loadSiteProfileFile, RolloutWorkflows, type SiteProfile } from '../../infra';

interface MyHpcStackProps extends StackProps {
  siteProfile: SiteProfile;
  /** The VPC where slurmrestd, BOS and HSM are reachable. */
  vpcId: string;
}

class MyHpcStack extends Stack {
  constructor(scope: Construct, id: string, props: MyHpcStackProps) {
    super(scope, id, props);
    const vpc = Vpc.fromLookup(this, 'Vpc', { vpcId: props.vpcId });
    const slurmrestdClients = new SecurityGroup(this, 'SlurmrestdClients', { vpc, description: 'Admitted by slurmrestd, BOS and HSM' });
    const rollout = new RolloutWorkflows(this, 'Rollout', {
      siteProfile: props.siteProfile,
      vpc,
      securityGroups: [slurmrestdClients],
      alarmTopic: new Topic(this, 'RolloutAlarms', { enforceSSL: true }),
      logRetention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // The outputs `rollout --aws --stack <your stack>` reads: the workflows and sessions, schedules, and `rollout env`'s REST API.
    new CfnOutput(this, 'RollingUpgradeStateMachineArn', { value: rollout.rollingUpgrade.stateMachineArn });
    new CfnOutput(this, 'GroupDeploymentStateMachineArn', { value: rollout.groupDeployment.stateMachineArn });
    new CfnOutput(this, 'TaskGraphStateMachineArn', { value: rollout.taskGraph.stateMachineArn });
    new CfnOutput(this, 'SessionsTableName', { value: rollout.table.tableName });
    new CfnOutput(this, 'ScheduleGroupName', { value: rollout.schedules.group.ref });
    new CfnOutput(this, 'SchedulerRoleArn', { value: rollout.schedules.role.roleArn });
    new CfnOutput(this, 'ApiUrl', { value: rollout.api.url });
  }
}

// The profile is read before the stack is built (a constructor cannot await); tokens as {secretArn: ...}.
const { profile } = await loadSiteProfileFile('site.yaml');
new MyHpcStack(new App(), 'MyHpc', { siteProfile: profile, vpcId: 'vpc-0123456789abcdef0', env: { account: '123456789012', region: 'us-east-1' } });
