import { Match } from 'aws-cdk-lib/assertions';
import { ENVIRONMENT } from '../../contracts';
import { STACK_OUTPUTS } from '../../engine/client/targets';
import { synthRolloutStack } from '../support/synth-stack';

const template = synthRolloutStack();

describe('RolloutStack: schedules and events', () => {
  it('has a schedule group and a role the scheduler assumes, for this group\'s schedules only', () => {
    template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          Match.objectLike({
            Principal: { Service: 'scheduler.amazonaws.com' },
            Condition: Match.objectLike({ ArnLike: { 'aws:SourceArn': Match.anyValue() }, StringEquals: { 'aws:SourceAccount': Match.anyValue() } }),
          }),
        ],
      },
    });
  });

  it('lets the scheduler role start the two workflows and nothing else', () => {
    const roles = template.findResources('AWS::IAM::Role', { Properties: { AssumeRolePolicyDocument: { Statement: [Match.objectLike({ Principal: { Service: 'scheduler.amazonaws.com' } })] } } });
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

  it('has an event bus the functions publish to (EVENT_BUS_NAME, events:PutEvents on it)', () => {
    template.resourceCountIs('AWS::Events::EventBus', 1);
    const functions = Object.values(template.findResources('AWS::Lambda::Function'));
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
