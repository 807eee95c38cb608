import type { Command } from 'commander';
import { loadDocumentFile } from '../../adapters/document-file';
import type { ScheduledWorkflow } from '../../core/run-schedules/schedule';
import type { ControlPlane } from '../../control-plane/control-plane';
import { addTargetOptions, connectTarget, remoteTarget, type TargetOptions } from '../control-plane-target';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { renderTable } from '../table';

interface CreateOptions extends TargetOptions {
  upgrade?: string;
  deployment?: string;
  expression: string;
  timeZone?: string;
  flexibleWindow?: string;
  description?: string;
  deleteAfterCompletion?: boolean;
  json?: boolean;
}

const KIND: Record<ScheduledWorkflow, string> = { rollingUpgrade: 'upgrade', groupDeployment: 'deployment' };

export function registerScheduleCommands(program: Command): void {
  const schedule = program
    .command('schedule')
    .description(
      'Schedules that start an upgrade or a deployment with a stored request: EventBridge Scheduler on AWS (--aws), the local scheduler of a `rollout serve` (--endpoint)',
    );

  addTargetOptions(schedule.command('create'))
    .description('Create a schedule; its request is checked as the workflow checks it, before anything is created')
    .argument('<name>', 'schedule name (1-64 letters, digits, - _ .)')
    .option('--upgrade <file>', 'start a rolling upgrade with this request (JSON or YAML: the upgrade request fields)')
    .option('--deployment <file>', 'start a group deployment with this request (JSON or YAML: the deployment request fields)')
    .requiredOption(
      '--expression <expr>',
      "EventBridge's cron(min hour day-of-month month day-of-week year), rate(n minutes|hours|days) or at(yyyy-mm-ddThh:mm:ss) (not a maintenance window's 5-field cron)",
    )
    .option('--time-zone <tz>', 'IANA time zone of cron(...) and at(...) (default UTC)')
    .option('--flexible-window <minutes>', 'let the firing drift up to this many minutes (EventBridge FLEXIBLE mode; the local scheduler fires at the start)')
    .option('--description <text>', 'a description')
    .option('--delete-after-completion', 'delete the schedule after its last firing (one-time schedules)')
    .option('--json', 'print the created schedule as one JSON object')
    .action(async (name: string, options: CreateOptions) => {
      if ((options.upgrade === undefined) === (options.deployment === undefined))
        throw new CliError('give exactly one of --upgrade FILE and --deployment FILE', ExitCode.invalidInput);
      const workflow: ScheduledWorkflow = options.upgrade !== undefined ? 'rollingUpgrade' : 'groupDeployment';
      const request = await readRequest((options.upgrade ?? options.deployment)!);
      const flexibleWindowMinutes = options.flexibleWindow === undefined ? undefined : Number(options.flexibleWindow);
      if (flexibleWindowMinutes !== undefined && !Number.isFinite(flexibleWindowMinutes))
        throw new CliError(`--flexible-window must be a number of minutes, got '${options.flexibleWindow}'`, ExitCode.invalidInput);
      await withSchedules(options, async (client) => {
        const arn = await client.schedules.create({
          name,
          workflow,
          request,
          scheduleExpression: options.expression,
          ...(options.timeZone ? { timeZone: options.timeZone } : {}),
          ...(flexibleWindowMinutes !== undefined ? { flexibleWindowMinutes } : {}),
          ...(options.description ? { description: options.description } : {}),
          ...(options.deleteAfterCompletion ? { deleteAfterCompletion: true } : {}),
        });
        const created = { name, arn, kind: KIND[workflow], expression: options.expression, timeZone: options.timeZone ?? 'UTC' };
        process.stdout.write(
          options.json
            ? `${JSON.stringify(created, null, 2)}\n`
            : `created ${arn}: ${KIND[workflow]} on ${options.expression}${options.timeZone ? ` (${options.timeZone})` : ''}\n`,
        );
      });
    });

  addTargetOptions(schedule.command('list'))
    .description('List the schedules of the control plane')
    .option('--json', 'print JSON')
    .action(async (options: TargetOptions & { json?: boolean }) =>
      withSchedules(options, async (client) => {
        const listed = await client.schedules.list();
        const details = await Promise.all(listed.map((entry) => client.schedules.get(entry.name)));
        const rows = listed.map((entry, i) => ({
          name: entry.name,
          kind: entry.workflow ? KIND[entry.workflow] : entry.targetArn,
          state: entry.state,
          expression: details[i]?.ScheduleExpression,
          timeZone: details[i]?.ScheduleExpressionTimezone ?? 'UTC',
        }));
        if (options.json) {
          process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
          return;
        }
        process.stdout.write(
          rows.length === 0
            ? 'no schedules\n'
            : `${renderTable(
                ['NAME', 'KIND', 'STATE', 'EXPRESSION', 'TIME ZONE'],
                rows.map((row) => [row.name, row.kind ?? '', row.state ?? '', row.expression ?? '', row.timeZone]),
              )}\n`,
        );
      }),
    );

  addTargetOptions(schedule.command('delete'))
    .description('Delete a schedule (executions it started go on)')
    .argument('<name>', 'schedule name')
    .option('--json', 'print what was deleted as one JSON object')
    .action(async (name: string, options: TargetOptions & { json?: boolean }) =>
      withSchedules(options, async (client) => {
        if (!(await client.schedules.delete(name))) throw new CliError(`no schedule named '${name}'`, ExitCode.invalidInput);
        process.stdout.write(options.json ? `${JSON.stringify({ name, deleted: true }, null, 2)}\n` : `deleted ${name}\n`);
      }),
    );
}

/** Schedules live in a running control plane: a `rollout serve` or the deployed stack. */
async function withSchedules(options: TargetOptions, work: (client: ControlPlane) => Promise<void>): Promise<void> {
  const target = remoteTarget(options);
  if (!target) throw new CliError('schedules live in a running control plane: give --endpoint URL (a `rollout serve`) or --aws', ExitCode.invalidInput);
  const client = await connectTarget(target);
  try {
    await work(client);
  } finally {
    await client.close();
  }
}

/** The request file, read strictly (UTF-8, no duplicate keys, whole numbers in decimal): JSON when it ends in `.json`, YAML otherwise. */
function readRequest(file: string): Promise<unknown> {
  return loadDocumentFile(file, `request file ${file}`);
}
