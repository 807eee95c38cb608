import type { Command } from 'commander';
import { SessionNotCancellableError, SessionNotFoundError } from '../../core/errors';
import { CancelNotSupportedError } from '../../engine/errors';
import { openSessions } from '../../engine/open-runtime';
import type { RolloutSessions, SessionListing } from '../../engine/runtime';
import { renderDeploymentSummary } from '../deployment-summary';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { renderSessionSummary } from '../summary';
import { runUpgradeWorkflow, type UpgradeRunOptions } from './upgrade';

interface SessionOptions {
  dataDir: string;
  json?: boolean;
}

export function registerSessionCommands(program: Command): void {
  const session = program.command('session').description('Inspect and cancel the upgrades and deployments kept in a data directory');

  session
    .command('list')
    .description('List upgrades and deployments, newest first')
    .requiredOption('--data-dir <dir>', 'data directory of the sessions')
    .option('--json', 'print JSON')
    .action(async (options: SessionOptions) =>
      withSessions(options, async (sessions) => {
        const listed = await sessions.sessions();
        if (options.json) {
          process.stdout.write(`${JSON.stringify(listed.map(listingJson), null, 2)}\n`);
          return;
        }
        if (listed.length === 0) {
          process.stdout.write('no sessions\n');
          return;
        }
        for (const entry of listed) process.stdout.write(`${listingLine(entry)}\n`);
      }),
    );

  session
    .command('get')
    .description('Show one upgrade (nodes and messages) or deployment (groups and nodes)')
    .argument('<id>', 'upgrade or deployment id')
    .requiredOption('--data-dir <dir>', 'data directory of the sessions')
    .option('--json', 'print it as one JSON object')
    .action(async (id: string, options: SessionOptions) =>
      withSessions(options, async (sessions) => {
        const found = await sessions.session(id);
        if (!found) throw new CliError(new SessionNotFoundError(id).message, ExitCode.notCompleted);
        const text = found.kind === 'upgrade' ? renderSessionSummary(found.report) : renderDeploymentSummary(found.report);
        process.stdout.write(options.json ? `${JSON.stringify(found.report, null, 2)}\n` : `${text}\n`);
      }),
    );

  session
    .command('resume')
    .description('Take over an upgrade whose process died: its execution carries on from the stored progress, with its own locks (same owner), even if their lease ran out')
    .argument('<id>', 'upgrade id')
    .requiredOption('--data-dir <dir>', 'data directory of the sessions')
    .option('--site <file>', 'simulated site file (YAML or JSON)')
    .option('--site-config <file>', 'site connection profile: run against the services it names')
    .option('--time-scale <n>', 'run on the wall clock sped up n times; without it, on virtual time')
    .option('--json', 'print the final session as one JSON object')
    .option('--site-state-out <file>', "write the simulated site's final state to this file")
    .action(async (id: string, options: UpgradeRunOptions & { dataDir: string }) => {
      process.exitCode = await runUpgradeWorkflow(options, { resumeUpgradeId: id });
    });

  session
    .command('cancel')
    .description('Cancel a running upgrade: CRUS deletion rules, then cleanup')
    .argument('<id>', 'upgrade id')
    .requiredOption('--data-dir <dir>', 'data directory of the sessions')
    .action(async (id: string, options: SessionOptions) =>
      withSessions(options, async (sessions) => {
        let running: boolean;
        try {
          ({ running } = await sessions.cancel(id));
        } catch (err) {
          if (err instanceof SessionNotFoundError || err instanceof SessionNotCancellableError || err instanceof CancelNotSupportedError) {
            throw new CliError(err.message, ExitCode.notCompleted);
          }
          throw err;
        }
        process.stdout.write(
          running
            ? `session ${id} is DELETING: the running upgrade applies the deletion rules and cleans up\n`
            : `session ${id} is DELETING, but no rollout process is running it: the deletion rules apply when it is resumed\n`,
        );
      }),
    );
}

/** An upgrade keeps the shape it always had (session fields, step and stage); both carry their kind. */
function listingJson(entry: SessionListing): Record<string, unknown> {
  if (entry.kind === 'upgrade') {
    const { progress, ...rest } = entry.session;
    return { ...rest, step: progress.step, stage: progress.stage };
  }
  const { state: _state, version: _version, ...rest } = entry.deployment;
  return { kind: 'GroupDeployment', ...rest };
}

function listingLine(entry: SessionListing): string {
  if (entry.kind === 'deployment') {
    const d = entry.deployment;
    return `${d.deploymentId}  ${d.status.padEnd(8)} deployment ${d.createdAt}  ${d.groupCount} group(s), ${d.nodeCount} node(s)`;
  }
  const s = entry.session;
  return (
    `${s.upgradeId}  ${s.state.padEnd(8)} ${s.completed ? 'completed ' : 'open      '} ${s.createdAt}  ` +
    `${s.startingLabel} -> ${s.upgradeTemplateId}  step ${s.progress.step + 1}/${s.stepCount || '?'} ${s.progress.stage}`
  );
}

async function withSessions(options: SessionOptions, action: (sessions: RolloutSessions) => Promise<void>): Promise<void> {
  const sessions = await openSessions({ dataDir: options.dataDir });
  try {
    await action(sessions);
  } finally {
    await sessions.close();
  }
}
