import type { Command } from 'commander';
import { SessionNotCancellableError, SessionNotFoundError } from '../../core/errors';
import { buildSessionReport } from '../reports/session-report';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { openSessionStore } from '../session-store-access';
import { renderSessionSummary } from '../summary';

interface SessionOptions {
  dataDir: string;
  json?: boolean;
}

export function registerSessionCommands(program: Command): void {
  const session = program.command('session').description('Inspect and cancel rolling-upgrade sessions kept in a data directory');

  session
    .command('list')
    .description('List sessions, newest first')
    .requiredOption('--data-dir <dir>', 'data directory of the sessions')
    .option('--json', 'print JSON')
    .action(async (options: SessionOptions) =>
      withStore(options, async (store) => {
        const sessions = await store.listSessions();
        if (options.json) {
          process.stdout.write(`${JSON.stringify(sessions.map(({ progress, ...rest }) => ({ ...rest, step: progress.step, stage: progress.stage })), null, 2)}\n`);
          return;
        }
        if (sessions.length === 0) {
          process.stdout.write('no sessions\n');
          return;
        }
        for (const s of sessions) {
          process.stdout.write(
            `${s.upgradeId}  ${s.state.padEnd(8)} ${s.completed ? 'completed ' : 'open      '} ${s.createdAt}  ` +
              `${s.startingLabel} -> ${s.upgradeTemplateId}  step ${s.progress.step + 1}/${s.stepCount || '?'} ${s.progress.stage}\n`,
          );
        }
      }),
    );

  session
    .command('get')
    .description('Show one session with its nodes and messages')
    .argument('<id>', 'upgrade id')
    .requiredOption('--data-dir <dir>', 'data directory of the sessions')
    .option('--json', 'print the session as one JSON object')
    .action(async (id: string, options: SessionOptions) =>
      withStore(options, async (store) => {
        const found = await store.getSession(id);
        if (!found) throw new CliError(new SessionNotFoundError(id).message, ExitCode.notCompleted);
        const report = await buildSessionReport(store, found);
        process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${renderSessionSummary(report)}\n`);
      }),
    );

  session
    .command('cancel')
    .description('Cancel a running session: CRUS deletion rules, then cleanup')
    .argument('<id>', 'upgrade id')
    .requiredOption('--data-dir <dir>', 'data directory of the sessions')
    .action(async (id: string, options: SessionOptions) =>
      withStore(options, async (store, live) => {
        try {
          await store.requestCancel(id);
        } catch (err) {
          if (err instanceof SessionNotFoundError || err instanceof SessionNotCancellableError) {
            throw new CliError(err.message, ExitCode.notCompleted);
          }
          throw err;
        }
        process.stdout.write(
          live
            ? `session ${id} is DELETING: the running upgrade applies the deletion rules and cleans up\n`
            : `session ${id} is DELETING, but no rollout process is running it: the deletion rules apply when it is resumed\n`,
        );
      }),
    );
}

async function withStore(
  options: SessionOptions,
  action: (store: Awaited<ReturnType<typeof openSessionStore>>['store'], live: boolean) => Promise<void>,
): Promise<void> {
  const access = await openSessionStore(options.dataDir);
  try {
    await action(access.store, access.live);
  } finally {
    await access.close();
  }
}
