import { Match, Template } from 'aws-cdk-lib/assertions';
import { ENVIRONMENT } from '../../contracts';
import { STACK_OUTPUTS } from '../../cli/targets';
import { RolloutStack } from '../../infra/rollout-stack';
import { synthRolloutStack, testApp } from '../support/synth-stack';

const template = synthRolloutStack();

describe('RolloutStack: schedules and events', () => {
  it('has a schedule group and a role the scheduler assumes only for that group (aws:SourceArn = the group ARN) in this account', () => {
    template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
    const [groupId] = Object.keys(template.findResources('AWS::Scheduler::ScheduleGroup'));
    const roles = Object.values(template.findResources('AWS::IAM::Role')).filter((role) =>
      JSON.stringify(role.Properties.AssumeRolePolicyDocument).includes('scheduler.amazonaws.com'),
    );
    expect(roles).toHaveLength(1);
    expect(roles[0]!.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'scheduler.amazonaws.com' },
        // EventBridge Scheduler's confused-deputy guide: the value must be the schedule group's ARN, not a schedule's.
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } }, ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [groupId, 'Arn'] } } },
      },
    ]);
  });

  it('lets the scheduler role start the two workflows and nothing else', () => {
    const roles = template.findResources('AWS::IAM::Role', {
      Properties: { AssumeRolePolicyDocument: { Statement: [Match.objectLike({ Principal: { Service: 'scheduler.amazonaws.com' } })] } },
    });
    const [roleId] = Object.keys(roles);
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) => JSON.stringify(policy.Properties.Roles).includes(roleId!));
    const statements = policies.flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Action: string; Resource: unknown }[]);
    expect(new Set(statements.flatMap((s) => s.Action))).toEqual(new Set(['states:StartExecution']));
    const resourceList = statements.flatMap((s) => s.Resource);
    expect(resourceList).toHaveLength(2);
    const resources = JSON.stringify(resourceList);
    expect(resources).toContain('RollingUpgrade');
    expect(resources).toContain('GroupDeployment');
    expect(resources).not.toContain('"*"');
  });

  it('has an event bus the workflow functions publish to (EVENT_BUS_NAME, events:PutEvents on it)', () => {
    template.resourceCountIs('AWS::Events::EventBus', 1);
    // The REST API's function (index.handler) starts workflows; the workflows' activities publish. The
    // environment upgrade publishes nothing of its own: the rolling upgrades it starts do.
    const functions = Object.entries(template.findResources('AWS::Lambda::Function'))
      .filter(([id, fn]) => fn.Properties.Handler !== 'index.handler' && !id.startsWith('EnvironmentUpgradeFunctions'))
      .map(([, fn]) => fn);
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) expect(fn.Properties.Environment.Variables[ENVIRONMENT.eventBusName]).toEqual({ Ref: expect.stringMatching(/^EventsBus/) });
    const putEvents = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((policy) =>
      (policy.Properties.PolicyDocument.Statement as { Action: string; Resource: unknown }[]).filter((s) => s.Action === 'events:PutEvents'),
    );
    expect(putEvents.length).toBeGreaterThan(0);
    for (const statement of putEvents) expect(JSON.stringify(statement.Resource)).toContain('EventsBus');
  });

  it('outputs the bus, the group and the role for the --aws target', () => {
    const outputs = template.findOutputs('*');
    for (const key of [STACK_OUTPUTS.scheduleGroup, STACK_OUTPUTS.schedulerRoleArn, 'EventBusName']) expect(outputs[key]).toBeDefined();
  });
});

describe('RolloutWorkflows: schedules declared in its props', () => {
  const upgradeRequest = {
    startingLabel: 'compute',
    upgradingLabel: 'upgrading',
    failedLabel: 'failed',
    upgradeStepSize: 8,
    upgradeTemplateId: 'cos-2.4',
    workloadManagerType: 'slurm',
  };

  it('creates each in the schedule group, starting its workflow with the stored request through the group role', () => {
    const stack = new RolloutStack(testApp(), 'Declared', {
      schedules: [
        {
          name: 'weekly-compute',
          expression: 'cron(0 2 ? * SUN *)',
          timeZone: 'Europe/Paris',
          flexibleWindowMinutes: 30,
          workflow: 'rollingUpgrade',
          request: upgradeRequest,
        },
      ],
    });
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::Scheduler::Schedule', 1);
    const [schedule] = Object.values(template.findResources('AWS::Scheduler::Schedule')) as {
      Properties: Record<string, unknown> & { Target: { Arn: unknown; RoleArn: unknown; Input: string } };
    }[];
    expect(schedule!.Properties).toMatchObject({
      Name: 'weekly-compute',
      ScheduleExpression: 'cron(0 2 ? * SUN *)',
      ScheduleExpressionTimezone: 'Europe/Paris',
      FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 30 },
    });
    expect(JSON.parse(schedule!.Properties.Target.Input)).toEqual(upgradeRequest);
    expect(JSON.stringify(schedule!.Properties.Target.Arn)).toContain('RollingUpgrade');
    expect(JSON.stringify(schedule!.Properties.Target.RoleArn)).toContain('SchedulesRole');
  });

  it('refuses at synth a schedule whose request or expression is bad, naming the schedule and the field', () => {
    expect(
      () =>
        new RolloutStack(testApp(), 'BadRequest', {
          schedules: [{ name: 'nightly', expression: 'rate(1 day)', workflow: 'rollingUpgrade', request: { ...upgradeRequest, upgradeStepSize: 0 } }],
        }),
    ).toThrow(/schedule 'nightly'.*request\.upgradeStepSize/s);
    expect(
      () =>
        new RolloutStack(testApp(), 'BadExpression', {
          schedules: [{ name: 'nightly', expression: 'cron(99 * * * ? *)', workflow: 'rollingUpgrade', request: upgradeRequest }],
        }),
    ).toThrow(/schedule 'nightly'.*scheduleExpression/s);
  });
});
