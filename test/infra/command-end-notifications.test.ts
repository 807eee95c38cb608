import { Template } from 'aws-cdk-lib/assertions';
import { ENVIRONMENT, TABLE_ACTIONS } from '../../contracts';
import { ENDED_INVOCATION_STATUSES, INVOCATION_STATUS_CHANGE } from '../../core/site/command-end-event';
import { parseSiteProfile, type SiteProfileInput } from '../../core/site/site-profile';
import { RolloutStack } from '../../infra/rollout-stack';
import { synthRolloutStack, testApp } from '../support/synth-stack';
import { getAttArn, TemplateQueries, type Statement } from '../support/template-queries';
import { tableGrantSpecs } from './table-grants.specs';

const HEAD_NODE = 'i-0123456789abcdef0';
const REBOOT_HEAD = 'mi-0123456789abcdef1';
/** scontrol and slurm-reboot over SSM: the profile's transport notifies (health checks run there), slurm-reboot's own too; the tasks' does not. */
const profile = (overrides: Partial<SiteProfileInput> = {}) =>
  parseSiteProfile({
    workloadManager: { type: 'scontrol' },
    bootService: { type: 'slurm-reboot', transport: { type: 'ssm', instanceIds: [REBOOT_HEAD, HEAD_NODE], region: 'eu-west-1', commandNotifications: true } },
    inventory: { type: 'slurm' },
    transport: { type: 'ssm', instanceIds: [HEAD_NODE], region: 'eu-west-1', commandNotifications: true },
    tasks: { transport: { type: 'ssm', instanceIds: ['i-0fedcba9876543210'], region: 'eu-west-1' } },
    ...overrides,
  });

const notifying = new TemplateQueries(() => Template.fromStack(new RolloutStack(testApp(), 'Notified', { siteProfile: profile() })));
beforeAll(() => notifying.template);

/** The rules on SSM's notifications in a template. */
const ssmRules = (template: Template) =>
  Object.values(template.findResources('AWS::Events::Rule')).filter((rule) =>
    JSON.stringify((rule as { Properties: { EventPattern?: unknown } }).Properties.EventPattern ?? {}).includes('aws.ssm'),
  );

describe("SSM's command notifications (a profile's ssm transport with commandNotifications)", () => {
  const [functionId, fn] = [notifying.functionId('CommandEnds'), () => notifying.resources[notifying.functionId('CommandEnds')]!];

  it("a rule on the default bus takes an ended invocation's status change on the notifying instances, and nothing else", () => {
    const [, rule] = notifying.onlyOne('AWS::Events::Rule');
    expect(rule.Properties).not.toHaveProperty('EventBusName');
    expect(rule.Properties.EventPattern).toEqual({
      source: ['aws.ssm'],
      'detail-type': [INVOCATION_STATUS_CHANGE],
      detail: {
        status: ['Success', 'Failed', 'TimedOut', 'Cancelled', 'DeliveryTimedOut', 'Undeliverable', 'Terminated'],
        // The transport's and slurm-reboot's (once), not the tasks' transport, which does not notify.
        'instance-id': [HEAD_NODE, REBOOT_HEAD],
      },
    });
    expect([...ENDED_INVOCATION_STATUSES].sort()).toEqual((rule.Properties.EventPattern as { detail: { status: string[] } }).detail.status.sort());
    // Its one target, retried within the hour a notification is worth (then the backstop poll has read the check).
    expect(rule.Properties.Targets).toEqual([
      { Arn: getAttArn(functionId), Id: 'Target0', RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 8 } },
    ]);
    notifying.template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: getAttArn(functionId),
      Principal: 'events.amazonaws.com',
    });
  });

  it('its target is lambdas/entrypoints/command-ends.ts as the other functions are built, told the table and the rolling upgrade only', () => {
    expect(fn().Properties).toMatchObject({
      Handler: 'index.CommandEnds',
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      MemorySize: 512,
      Timeout: 30,
      TracingConfig: { Mode: 'Active' },
      LoggingConfig: { LogGroup: { Ref: expect.stringMatching(/^CommandEndsHandlerLogs/) } },
    });
    const [rollingUpgradeId] = notifying.stateMachine('Notified-RollingUpgrade');
    expect((fn().Properties.Environment as { Variables: unknown }).Variables).toEqual({
      [ENVIRONMENT.tableName]: { Ref: notifying.onlyOne('AWS::DynamoDB::Table')[0] },
      [ENVIRONMENT.rollingUpgradeStateMachineArn]: { Ref: rollingUpgradeId },
      NODE_OPTIONS: '--enable-source-maps',
    });
    notifying.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: functionId },
      MaximumEventAgeInSeconds: 3600,
      MaximumRetryAttempts: 2,
    });
  });

  it("may read a command's invocation (the one action on *, beside X-Ray's), wake a rolling upgrade, write its own log group; nothing else", () => {
    const statements: Statement[] = notifying.statementsOf(fn());
    const onAnything = statements.filter((statement) => statement.Resource === '*').flatMap((statement) => [statement.Action].flat());
    expect(onAnything.sort()).toEqual(['ssm:GetCommandInvocation', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    const [rollingUpgradeId] = notifying.stateMachine('Notified-RollingUpgrade');
    const states = statements.filter((statement) => [statement.Action].flat().some((action) => action.startsWith('states:')));
    expect(states).toEqual([expect.objectContaining({ Action: 'states:SendTaskSuccess', Resource: { Ref: rollingUpgradeId } })]);
    const services = new Set(statements.flatMap((statement) => [statement.Action].flat().map((action) => action.split(':')[0])));
    expect([...services].sort()).toEqual(['dynamodb', 'logs', 'ssm', 'states', 'xray']);
    expect(statements.flatMap((statement) => [statement.Action].flat()).filter((action) => action.startsWith('ssm:'))).toEqual(['ssm:GetCommandInvocation']);
  });

  it("is counted in the functions' error and throttle alarms", () => {
    const alarmed = JSON.stringify(
      Object.values(notifying.template.findResources('AWS::CloudWatch::Alarm'))
        .filter((alarm) => /^A Lambda (error|throttle)/.test(String((alarm as { Properties: { AlarmDescription: string } }).Properties.AlarmDescription)))
        .map((alarm) => (alarm as { Properties: { Metrics: unknown } }).Properties.Metrics),
    );
    expect(alarmed.match(new RegExp(`"${functionId}"`, 'g'))).toHaveLength(2);
  });

  it("holds the stack to the transports' region: a template rule when the stack's region is the deploy's", () => {
    const rules = (notifying.template.toJSON() as { Rules: Record<string, { Assertions: { Assert: unknown; AssertDescription: string }[] }> }).Rules;
    const region = Object.entries(rules).filter(([id]) => id.startsWith('CommandEndsNotificationsRegion'));
    expect(region).toHaveLength(1);
    expect(region[0]![1].Assertions).toEqual([
      {
        Assert: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'eu-west-1'] },
        AssertDescription: expect.stringContaining('transport.commandNotifications, bootService.transport.commandNotifications in the site profile'),
      },
    ]);
  });

  it("refuses, naming the fields, a stack in another region than the notifying transports', or transports in two regions", () => {
    expect(() => new RolloutStack(testApp(), 'Elsewhere', { siteProfile: profile(), env: { region: 'us-east-1', account: '123456789012' } })).toThrow(
      "Invalid site profile for the stack: transport.commandNotifications: SSM's notifications reach the rule of their own region only: the transport is in eu-west-1, the stack in us-east-1",
    );
    const here = new RolloutStack(testApp(), 'Here', { siteProfile: profile(), env: { region: 'eu-west-1', account: '123456789012' } });
    expect(ssmRules(Template.fromStack(here))).toHaveLength(1);
    const split = profile({ transport: { type: 'ssm', instanceIds: [HEAD_NODE], region: 'us-east-1', commandNotifications: true } });
    expect(() => new RolloutStack(testApp(), 'Split', { siteProfile: split })).toThrow(
      "Invalid site profile for the stack: transport.commandNotifications: SSM's notifications reach one region's rule: the notifying transports are in us-east-1, eu-west-1 (this one in us-east-1); bootService.transport.commandNotifications: SSM's notifications reach one region's rule: the notifying transports are in us-east-1, eu-west-1 (this one in eu-west-1)",
    );
  });

  it('is not in a stack whose profile asks for no notifications, nor in one without a profile', () => {
    const quiet = profile({
      transport: { type: 'ssm', instanceIds: [HEAD_NODE], region: 'eu-west-1' },
      bootService: { type: 'slurm-reboot' },
    });
    for (const template of [Template.fromStack(new RolloutStack(testApp(), 'Quiet', { siteProfile: quiet })), synthRolloutStack()]) {
      expect(ssmRules(template)).toEqual([]);
      expect(
        Object.values(template.findResources('AWS::Lambda::Function')).map((f) => (f as { Properties: { Handler: string } }).Properties.Handler),
      ).not.toContain('index.CommandEnds');
      expect(Object.keys((template.toJSON() as { Rules?: object }).Rules ?? {}).filter((id) => id.startsWith('CommandEnds'))).toEqual([]);
    }
  });

  // Every function of TABLE_ACTIONS is in this stack, CommandEnds with them.
  describe('table grants', () => tableGrantSpecs(notifying, Object.keys(TABLE_ACTIONS)));
});
