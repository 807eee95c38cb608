import { Stack, Validations, type App } from 'aws-cdk-lib';
import { Vpc, SecurityGroup } from 'aws-cdk-lib/aws-ec2';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { parseSiteProfile } from '../../core/site/site-profile';
import { RolloutWorkflows } from '../../infra';
import { RolloutStack } from '../../infra/rollout-stack';
import { testApp } from '../support/synth-stack';

/** The synth's validation report (cdk-nag findings not acknowledged), or '' when it passes. */
function nagFindings(app: App): string {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  try {
    app.synth();
    return '';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

describe('cdk-nag AwsSolutionsChecks', () => {
  it('finds nothing unacknowledged in the stack, nor in the construct with every prop (profile with SSM and its notifications, VPC, alarm topic, key)', () => {
    const app = testApp();
    new RolloutStack(app, 'BaremetalRollout');
    const stack = new Stack(app, 'Embedded');
    const vpc = Vpc.fromVpcAttributes(stack, 'Vpc', {
      vpcId: 'vpc-0123456789abcdef0',
      availabilityZones: ['eu-west-1a'],
      privateSubnetIds: ['subnet-0123456789abcdef0'],
      privateSubnetRouteTableIds: ['rtb-0123456789abcdef0'],
    });
    new RolloutWorkflows(stack, 'Rollout', {
      siteProfile: parseSiteProfile({
        workloadManager: { type: 'scontrol' },
        bootService: { type: 'bos', url: 'https://api-gw/apis/bos', token: { secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:bos-AbCdEf' } },
        inventory: { type: 'hsm', url: 'https://api-gw/apis/smd' },
        // Its health checks' ends notified: the rule on SSM's notifications and its target are checked too.
        transport: { type: 'ssm', instanceIds: ['i-0123456789abcdef0'], region: 'eu-west-1', commandNotifications: true },
      }),
      vpc,
      securityGroups: [SecurityGroup.fromSecurityGroupId(stack, 'Slurmrestd', 'sg-0123456789abcdef0')],
      alarmTopic: Topic.fromTopicArn(stack, 'Alarms', 'arn:aws:sns:eu-west-1:123456789012:ops'),
      tableEncryptionKey: new Key(stack, 'Key', { enableKeyRotation: true }),
    });
    expect(nagFindings(app)).toBe('');
  });

  it('does report what it is not told about', () => {
    const app = testApp();
    new Queue(new Stack(app, 'Careless'), 'Queue');
    expect(nagFindings(app)).toContain('AwsSolutions-SQS3');
  });
});
