import { RemovalPolicy } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { GROUP_DEPLOYMENT_FUNCTION_NAMES, LOG_MESSAGES, ROLLING_UPGRADE_FUNCTION_NAMES } from '../../contracts';
import { RolloutStack } from '../../infra/rollout-stack';
import { synthRolloutStack, testApp } from '../support/synth-stack';

type Resource = { Properties: Record<string, unknown>; DeletionPolicy?: string };
const template = synthRolloutStack();
const resources = (type: string) => template.findResources(type) as Record<string, Resource>;
const alarmDescribed = (start: string) =>
  Object.values(resources('AWS::CloudWatch::Alarm')).filter((a) => String(a.Properties.AlarmDescription).startsWith(start));

describe('RolloutStack monitoring', () => {
  it('counts the REST API function in the Lambda error and throttle alarms, with every workflow function', () => {
    const functionIds = Object.keys(resources('AWS::Lambda::Function'));
    expect(functionIds).toHaveLength(30);
    for (const kind of ['A Lambda error', 'A Lambda throttle']) {
      const alarmed = JSON.stringify(alarmDescribed(kind).map((a) => a.Properties.Metrics));
      for (const id of functionIds) expect({ kind, id, alarmed: alarmed.includes(`"${id}"`) }).toEqual({ kind, id, alarmed: true });
    }
    expect(JSON.stringify(alarmDescribed('A Lambda error').map((a) => a.Properties.AlarmDescription))).toContain('ApiHandler');
  });

  it("alarms when a schedule of the stack's group fails to start its workflow or is dropped", () => {
    const [alarm] = alarmDescribed('A schedule of');
    const [groupId] = Object.keys(resources('AWS::Scheduler::ScheduleGroup'));
    const metrics = (
      alarm!.Properties.Metrics as { MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: unknown[] }; Stat: string } }[]
    ).flatMap((m) => (m.MetricStat ? [m.MetricStat] : []));
    expect(metrics.map((m) => m.Metric.MetricName).sort()).toEqual(['InvocationDroppedCount', 'TargetErrorCount']);
    for (const m of metrics) {
      expect(m.Metric.Namespace).toBe('AWS/Scheduler');
      expect(m.Stat).toBe('Sum');
      expect(JSON.stringify(m.Metric.Dimensions)).toMatch(new RegExp(`"Name":"ScheduleGroup","Value":("BaremetalRollout-schedules"|\\{"Ref":"${groupId}"\\})`));
    }
  });

  it("counts refused PutEvents from every publishing function's log and alarms on them", () => {
    const filters = Object.values(resources('AWS::Logs::MetricFilter'));
    // The rolling-upgrade and group-deployment functions publish (21); the task-graph, environment-upgrade and REST API functions do not.
    const publishing = ROLLING_UPGRADE_FUNCTION_NAMES.length + GROUP_DEPLOYMENT_FUNCTION_NAMES.length;
    expect(publishing).toBe(21);
    expect(filters).toHaveLength(publishing);
    for (const filter of filters) {
      expect(filter.Properties.FilterPattern).toBe(`{ $.message = "${LOG_MESSAGES.statusEventsNotPublished}" }`);
      expect(filter.Properties.MetricTransformations).toEqual([
        { MetricNamespace: 'BaremetalRollout/BaremetalRollout', MetricName: 'StatusEventsNotPublished', MetricValue: '1' },
      ]);
    }
    const logGroups = new Set(filters.map((f) => JSON.stringify(f.Properties.LogGroupName)));
    expect(logGroups.size).toBe(publishing);
    const [alarm] = alarmDescribed('The event bus refused');
    expect(alarm!.Properties).toMatchObject({
      Namespace: 'BaremetalRollout/BaremetalRollout',
      MetricName: 'StatusEventsNotPublished',
      Statistic: 'Sum',
      Threshold: 1,
    });
  });

  it('applies the removal policy to the event bus and the schedule group (RETAIN by default)', () => {
    for (const type of ['AWS::Events::EventBus', 'AWS::Scheduler::ScheduleGroup']) {
      expect(Object.values(resources(type)).map((r) => r.DeletionPolicy)).toEqual(['Retain']);
    }
    const destroyed = Template.fromStack(new RolloutStack(testApp(), 'Disposable', { removalPolicy: RemovalPolicy.DESTROY }));
    for (const type of ['AWS::Events::EventBus', 'AWS::Scheduler::ScheduleGroup']) {
      expect(Object.values(destroyed.findResources(type) as Record<string, Resource>).map((r) => r.DeletionPolicy)).toEqual(['Delete']);
    }
  });
});
