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

  private readonly alarmTopic: ITopic | undefined;

  constructor(scope: Construct, id: string, props: RolloutMonitoringProps) {
    super(scope, id);
    this.alarmTopic = props.alarmTopic;
    const machines = Object.entries(props.stateMachines);
    this.alarmOnExecutions(machines);
    this.alarmOnFunctions(Object.entries(props.functions));
    if (props.scheduleGroupName) this.alarmOnSchedules(props.scheduleGroupName);
    this.alarmOnUnpublishedEvents(Object.entries(props.publisherLogGroups ?? {}));
    this.dashboard = new Dashboard(this, 'Dashboard', {
      ...(props.dashboardName ? { dashboardName: props.dashboardName } : {}),
      defaultInterval: Duration.days(1),
    });
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 }));
    this.dashboard.addWidgets(...executionWidgets(machines));
    this.dashboard.addWidgets(...functionWidgets(Object.entries(props.functions)));
  }

  /** One alarm at 1 or more in a period, notifying the topic (in and out of ALARM) when there is one. */
  private alarm(alarmId: string, description: string, metric: IMetric): Alarm {
    const created = new Alarm(this, alarmId, {
      metric,
      alarmDescription: description,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    if (this.alarmTopic) {
      created.addAlarmAction(new SnsAction(this.alarmTopic));
      created.addOkAction(new SnsAction(this.alarmTopic));
    }
    this.alarms.push(created);
    return created;
  }

  private alarmOnExecutions(machines: [string, IStateMachine][]): void {
    for (const [name, machine] of machines) {
      this.alarm(
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
  }

  private alarmOnFunctions(functions: [string, IFunction][]): void {
    const sum = (label: string, group: [string, IFunction][], metric: (fn: IFunction) => IMetric) =>
      new MathExpression({
        expression: group.map((_, i) => `m${i}`).join(' + '),
        usingMetrics: Object.fromEntries(group.map(([, fn], i) => [`m${i}`, metric(fn)])),
        period: PERIOD,
        label,
      });
    chunk(functions, MAX_METRICS_PER_ALARM).forEach((group, i) => {
      const names = group.map(([name]) => name).join(', ');
      this.alarm(
        `FunctionErrors${i + 1}`,
        `A Lambda error in ${names}: an activity failed (its Task's Retry may still recover it).`,
        sum('errors', group, (fn) => fn.metricErrors()),
      );
      this.alarm(
        `FunctionThrottles${i + 1}`,
        `A Lambda throttle in ${names}: the account's or the function's concurrency is short.`,
        sum('throttles', group, (fn) => fn.metricThrottles()),
      );
    });
  }

  private alarmOnSchedules(scheduleGroupName: string): void {
    const scheduler = (metricName: string) =>
      new Metric({ namespace: 'AWS/Scheduler', metricName, dimensionsMap: { ScheduleGroup: scheduleGroupName }, statistic: 'Sum', period: PERIOD });
    this.alarm(
      'SchedulesFailed',
      `A schedule of ${scheduleGroupName} did not start its workflow: StartExecution failed (the role, the input) or the invocation was dropped after its retries.`,
      new MathExpression({
        expression: 'errors + dropped',
        usingMetrics: { errors: scheduler('TargetErrorCount'), dropped: scheduler('InvocationDroppedCount') },
        period: PERIOD,
        label: 'schedule invocations failed',
      }),
    );
  }

  private alarmOnUnpublishedEvents(publishers: [string, ILogGroup][]): void {
    if (publishers.length === 0) return;
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
    this.alarm(
      'StatusEventsNotPublished',
      'The event bus refused status events (after a retry): rules and subscribers missed them; the sessions themselves went on (the store is the truth).',
      new Metric({ namespace, metricName, statistic: 'Sum', period: PERIOD }),
    );
  }
}

/** The dashboard's row of executions: started, succeeded, and failed, timed out or aborted, per state machine. */
function executionWidgets(machines: [string, IStateMachine][]): GraphWidget[] {
  return [
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
  ];
}

/** The dashboard's row of functions: invocations, errors, throttles and duration, one line per function. */
function functionWidgets(functions: [string, IFunction][]): GraphWidget[] {
  const perFunction = (title: string, metric: (fn: IFunction, name: string) => IMetric) =>
    new GraphWidget({ title, left: functions.map(([name, fn]) => metric(fn, name)), width: 6 });
  return [
    perFunction('Lambda invocations', (fn, label) => fn.metricInvocations({ label, period: PERIOD })),
    perFunction('Lambda errors', (fn, label) => fn.metricErrors({ label, period: PERIOD })),
    perFunction('Lambda throttles', (fn, label) => fn.metricThrottles({ label, period: PERIOD })),
    perFunction('Lambda duration p90 (ms)', (fn, label) => fn.metricDuration({ label, period: PERIOD, statistic: 'p90' })),
  ];
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}
