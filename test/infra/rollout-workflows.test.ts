import { Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import { MyHpcStack } from '../../examples/cdk-app/my-stack';
import { parseSiteProfile, RolloutWorkflows } from '../../infra';
import { TABLE_USERS_OF_EVERY_STACK } from './table-grants.specs';
import { testApp } from '../support/synth-stack';

const PROFILE = parseSiteProfile({
  workloadManager: { type: 'scontrol' },
  bootService: { type: 'bos', url: 'https://api-gw/apis/bos' },
  inventory: { type: 'hsm', url: 'https://api-gw/apis/smd' },
  transport: { type: 'ssm', instanceIds: ['i-0123456789abcdef0'], region: 'eu-west-1' },
});

describe('RolloutWorkflows embedded in an app of its own (the README sample, examples/cdk-app/my-stack.ts)', () => {
  const app = testApp();
  const network = new Stack(app, 'Network');
  Validations.of(network).acknowledge({ id: 'CloudFormation-Validate::F0001', reason: 'Only holds the imported VPC the test hands over.' });
  const vpc = Vpc.fromVpcAttributes(network, 'Vpc', {
    vpcId: 'vpc-0123456789abcdef0',
    availabilityZones: ['eu-west-1a'],
    privateSubnetIds: ['subnet-0123456789abcdef0'],
    privateSubnetRouteTableIds: ['rtb-0123456789abcdef0'],
  });
  const stack = new MyHpcStack(app, 'MyHpc', { siteProfile: PROFILE, vpc });
  const template = Template.fromStack(stack);

  it('runs the functions in the VPC with the given security group', () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function')) as { Properties: { VpcConfig?: { SecurityGroupIds: unknown[] } } }[];
    // Every workflow activity and the REST API's function (TABLE_ACTIONS names each once; no SSM notifications here), every one in the VPC.
    expect(functions).toHaveLength(TABLE_USERS_OF_EVERY_STACK.length);
    for (const fn of functions)
      expect(fn.Properties.VpcConfig?.SecurityGroupIds).toEqual([{ 'Fn::GetAtt': [expect.stringMatching(/^SlurmrestdClients/), 'GroupId'] }]);
  });

  it('alarms on failed executions (per state machine) and on Lambda errors and throttles, to the topic, and draws a dashboard', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as { Properties: { AlarmActions: unknown[]; AlarmDescription: string } }[];
    const machines = alarms
      .map((a) => a.Properties.AlarmDescription)
      .filter((d) => d.includes('an execution failed'))
      .map((d) => d.split(':')[0]);
    expect(machines.sort()).toEqual(['DeployGroup', 'EnvironmentUpgrade', 'GroupDeployment', 'RollingUpgrade', 'RunNodeBatches', 'TaskGraph']);
    // The functions' errors and throttles summed in groups of at most 10 metrics: 26 make 3, the REST API's one more.
    expect(alarms.filter((a) => a.Properties.AlarmDescription.startsWith('A Lambda error'))).toHaveLength(3);
    expect(alarms.filter((a) => a.Properties.AlarmDescription.startsWith('A Lambda throttle'))).toHaveLength(3);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^RolloutAlarms/) }]);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });

  it('keeps the outputs the CLI reads, and the given log retention', () => {
    for (const output of ['RollingUpgradeStateMachineArn', 'GroupDeploymentStateMachineArn', 'TaskGraphStateMachineArn', 'SessionsTableName'])
      template.hasOutput(output, {});
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
  });
});

describe('RolloutWorkflows ssmTargets', () => {
  it('refuses a profile that commands an instance outside the allow-list, naming the field', () => {
    expect(
      () =>
        new RolloutWorkflows(new Stack(testApp(), 'S'), 'Rollout', {
          siteProfile: PROFILE,
          ssmTargets: [{ region: 'eu-west-1', instanceIds: ['i-0fedcba9876543210'] }],
        }),
    ).toThrow("transport.instanceIds: i-0123456789abcdef0 (eu-west-1) not in the construct's ssmTargets");
  });

  it("holds the task graph's own transport to the same rules: SSM to allowed instances only, no local commands", () => {
    const tasks = {
      transport: { type: 'ssm' as const, instanceIds: ['i-0fedcba9876543210'], region: 'eu-west-1' },
      nodeExec: 'pdsh -S -w {nodes} {command}',
      fanout: 256,
    };
    expect(
      () =>
        new RolloutWorkflows(new Stack(testApp(), 'T'), 'Rollout', {
          siteProfile: { ...PROFILE, tasks },
          ssmTargets: [{ region: 'eu-west-1', instanceIds: ['i-0123456789abcdef0'] }],
        }),
    ).toThrow("tasks.transport.instanceIds: i-0fedcba9876543210 (eu-west-1) not in the construct's ssmTargets");
    expect(
      () => new RolloutWorkflows(new Stack(testApp(), 'L'), 'Rollout', { siteProfile: { ...PROFILE, tasks: { ...tasks, transport: { type: 'local' } } } }),
    ).toThrow('tasks.transport: the deployed functions have no local cluster commands');
  });
});
