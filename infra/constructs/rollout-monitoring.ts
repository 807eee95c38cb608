import { Duration } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';

/** A CloudWatch alarm on metric math takes at most 10 metrics. */
const MAX_METRICS_PER_ALARM = 10;
const PERIOD = Duration.minutes(5);

export interface RolloutMonitoringProps {
  /** The state machines, by name: one failed-executions alarm each. */
  stateMachines: Readonly<Record<string, IStateMachine>>;
  /** The functions, by name: errors and throttles summed per group of at most 10. */
  functions: Readonly<Record<string, IFunction>>;
  /** Where each alarm notifies (in and out of ALARM). Default: nowhere; the dashboard shows them. */
  alarmTopic?: ITopic;
  dashboardName?: string;
}

/**
 * Alarms on what needs a person: an execution that failed, timed out or was aborted (a session that
 * stopped with nodes possibly drained), a Lambda error (an activity that failed beyond its Retry), a
 * throttle (the account's concurrency is short); and a dashboard of executions and functions.
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
      alarm(`FunctionErrors${i + 1}`, `A Lambda error in ${names}: an activity failed (its Task's Retry may still recover it).`, sum('errors', group, (fn) => fn.metricErrors()));
      alarm(`FunctionThrottles${i + 1}`, `A Lambda throttle in ${names}: the account's or the function's concurrency is short.`, sum('throttles', group, (fn) => fn.metricThrottles()));
    });

    this.dashboard = new Dashboard(this, 'Dashboard', { ...(props.dashboardName ? { dashboardName: props.dashboardName } : {}), defaultInterval: Duration.days(1) });
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
