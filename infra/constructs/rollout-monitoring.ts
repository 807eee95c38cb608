import { Duration, Stack } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, MetricFilter, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { LOG_MESSAGES } from '../../contracts';

/** A CloudWatch alarm on metric math takes at most 10 metrics. */
const MAX_METRICS_PER_ALARM = 10;
const PERIOD = Duration.minutes(5);

export interface RolloutMonitoringProps {
  /** The state machines, by name: one failed-executions alarm each. */
  stateMachines: Readonly<Record<string, IStateMachine>>;
  /** The functions, by name: errors and throttles summed per group of at most 10. */
  functions: Readonly<Record<string, IFunction>>;
  /** Log groups of the functions that publish status events: a refused PutEvents is counted from their logs. */
  publisherLogGroups?: Readonly<Record<string, ILogGroup>>;
  /** The EventBridge Scheduler group: a schedule whose StartExecution failed or was dropped alarms. */
  scheduleGroupName?: string;
  /** Where each alarm notifies (in and out of ALARM). Default: nowhere; the dashboard shows them. */
  alarmTopic?: ITopic;
  dashboardName?: string;
}

/**
 * Alarms on what needs a person: an execution that failed, timed out or was aborted (a session that
 * stopped with nodes possibly drained), a Lambda error (an activity that failed beyond its Retry, or
 * the REST API's function), a throttle (the account's concurrency is short), a schedule that did not
 * start its workflow, status events the bus refused; and a dashboard of executions and functions.
 */
export class RolloutMonitoring extends Construct {
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: RolloutMonitoringProps) {
    super(scope, id);
    const alarm = (alarmId: string, description: string, metric: IMetric) => {
      const created = new Alarm(this, alarmId, {
        metric,
        alarmDescription: description,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      if (props.alarmTopic) {
        created.addAlarmAction(new SnsAction(props.alarmTopic));
        created.addOkAction(new SnsAction(props.alarmTopic));
      }
      this.alarms.push(created);
      return created;
    };

    const machines = Object.entries(props.stateMachines);
    for (const [name, machine] of machines) {
      alarm(
        `${name}ExecutionsFailed`,
        `${name}: an execution failed, timed out or was aborted. Its session may have left nodes drained or locked: \`rollout session get\`, then resume or cancel.`,
        new MathExpression({
          expression: 'failed + timedOut + aborted',
          usingMetrics: { failed: machine.metricFailed(), timedOut: machine.metricTimedOut(), aborted: machine.metricAborted() },
          period: PERIOD,
          label: `${name} executions failed`,
        }),
      );
    }

    const functionGroups = chunk(Object.entries(props.functions), MAX_METRICS_PER_ALARM);
    const sum = (label: string, group: [string, IFunction][], metric: (fn: IFunction) => IMetric) =>
      new MathExpression({
        expression: group.map((_, i) => `m${i}`).join(' + '),
        usingMetrics: Object.fromEntries(group.map(([, fn], i) => [`m${i}`, metric(fn)])),
        period: PERIOD,
        label,
      });
    functionGroups.forEach((group, i) => {
      const names = group.map(([name]) => name).join(', ');
      alarm(
        `FunctionErrors${i + 1}`,
        `A Lambda error in ${names}: an activity failed (its Task's Retry may still recover it).`,
        sum('errors', group, (fn) => fn.metricErrors()),
      );
      alarm(
        `FunctionThrottles${i + 1}`,
        `A Lambda throttle in ${names}: the account's or the function's concurrency is short.`,
        sum('throttles', group, (fn) => fn.metricThrottles()),
      );
    });

    if (props.scheduleGroupName) {
      const scheduler = (metricName: string) =>
        new Metric({ namespace: 'AWS/Scheduler', metricName, dimensionsMap: { ScheduleGroup: props.scheduleGroupName! }, statistic: 'Sum', period: PERIOD });
      alarm(
        'SchedulesFailed',
        `A schedule of ${props.scheduleGroupName} did not start its workflow: StartExecution failed (the role, the input) or the invocation was dropped after its retries.`,
        new MathExpression({
          expression: 'errors + dropped',
          usingMetrics: { errors: scheduler('TargetErrorCount'), dropped: scheduler('InvocationDroppedCount') },
          period: PERIOD,
          label: 'schedule invocations failed',
        }),
      );
    }

    const publishers = Object.entries(props.publisherLogGroups ?? {});
    if (publishers.length > 0) {
      // Every publisher's log lines count into one metric of the stack (one namespace per stack: two stacks never mix).
      const namespace = `BaremetalRollout/${Stack.of(this).stackName}`;
      const metricName = 'StatusEventsNotPublished';
      for (const [name, logGroup] of publishers) {
        new MetricFilter(this, `${name}EventsNotPublished`, {
          logGroup,
          filterPattern: FilterPattern.stringValue('$.message', '=', LOG_MESSAGES.statusEventsNotPublished),
          metricNamespace: namespace,
          metricName,
          metricValue: '1',
        });
      }
      alarm(
        'StatusEventsNotPublished',
        'The event bus refused status events (after a retry): rules and subscribers missed them; the sessions themselves went on (the store is the truth).',
        new Metric({ namespace, metricName, statistic: 'Sum', period: PERIOD }),
      );
    }

    this.dashboard = new Dashboard(this, 'Dashboard', {
      ...(props.dashboardName ? { dashboardName: props.dashboardName } : {}),
      defaultInterval: Duration.days(1),
    });
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 }));
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Executions started',
        left: machines.map(([name, machine]) => machine.metricStarted({ label: name, period: PERIOD })),
        width: 8,
      }),
      new GraphWidget({
        title: 'Executions succeeded',
        left: machines.map(([name, machine]) => machine.metricSucceeded({ label: name, period: PERIOD })),
        width: 8,
      }),
      new GraphWidget({
        title: 'Executions failed, timed out, aborted',
        left: machines.flatMap(([name, machine]) => [
          machine.metricFailed({ label: `${name} failed`, period: PERIOD }),
          machine.metricTimedOut({ label: `${name} timed out`, period: PERIOD }),
          machine.metricAborted({ label: `${name} aborted`, period: PERIOD }),
        ]),
        width: 8,
      }),
    );
    const functions = Object.entries(props.functions);
    const perFunction = (title: string, metric: (fn: IFunction, name: string) => IMetric) =>
      new GraphWidget({ title, left: functions.map(([name, fn]) => metric(fn, name)), width: 6 });
    this.dashboard.addWidgets(
      perFunction('Lambda invocations', (fn, label) => fn.metricInvocations({ label, period: PERIOD })),
      perFunction('Lambda errors', (fn, label) => fn.metricErrors({ label, period: PERIOD })),
      perFunction('Lambda throttles', (fn, label) => fn.metricThrottles({ label, period: PERIOD })),
      perFunction('Lambda duration p90 (ms)', (fn, label) => fn.metricDuration({ label, period: PERIOD, statistic: 'p90' })),
    );
  }
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}
