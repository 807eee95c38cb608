import type { Command } from 'commander';
import { SessionGateError, SessionNotCancellableError, SessionNotFoundError } from '../../core/errors';
import { CancelNotSupportedError } from '../../engine/errors';
import { RolloutClient } from '../../engine/client/rollout-client';
import { openSessions } from '../../engine/open-runtime';
import type { GateResult, RolloutSessions, SessionKind, SessionListing } from '../../engine/runtime';
import { addTargetOptions, connectTarget, remoteTarget, type TargetOptions } from '../control-plane-target';
import { showDeploymentProgress } from '../deployment-progress';
import { renderDeploymentSummary } from '../deployment-summary';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { showSessionProgress } from '../progress';
import { renderSessionSummary } from '../summary';
import { runUpgradeWorkflow, type UpgradeRunOptions } from './upgrade';

interface SessionOptions extends TargetOptions {
  dataDir?: string;
  json?: boolean;
  kind?: string;
}

const KINDS: readonly SessionKind[] = ['upgrade', 'deployment'];
const WATCH_POLL_MS = 250;

/** Where the sessions are: a data directory, a running `rollout serve`, or a deployed stack. */
function sessionSource(command: Command): Command {
  return addTargetOptions(command.option('--data-dir <dir>', 'data directory of the sessions'));
}

export function registerSessionCommands(program: Command): void {
  const session = program
    .command('session')
    .description('Inspect, watch, cancel and resume upgrades and deployments: of a data directory, a `rollout serve` (--endpoint) or a deployed stack (--aws)');

  sessionSource(session.command('list'))
    .description('List upgrades and deployments, newest first')
    .option('--kind <kind>', 'only upgrades or only deployments (upgrade|deployment)')
    .option('--json', 'print JSON')
    .action(async (options: SessionOptions) =>
      withSessions(options, async (sessions) => {
        const kind = options.kind;
        if (kind !== undefined && !KINDS.includes(kind as SessionKind)) throw new CliError(`--kind must be one of ${KINDS.join(', ')}, got '${kind}'`, ExitCode.invalidInput);
        const listed = (await sessions.sessions()).filter((entry) => kind === undefined || entry.kind === kind);
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

  sessionSource(session.command('get'))
    .description('Show one upgrade (nodes and messages) or deployment (groups and nodes)')
    .argument('<id>', 'upgrade or deployment id')
    .option('--json', 'print it as one JSON object')
    .action(async (id: string, options: SessionOptions) =>
      withSessions(options, async (sessions) => {
        const found = await sessions.session(id);
        if (!found) throw new CliError(new SessionNotFoundError(id).message, ExitCode.notCompleted);
        const text = found.kind === 'upgrade' ? renderSessionSummary(found.report) : renderDeploymentSummary(found.report);
        process.stdout.write(options.json ? `${JSON.stringify(found.report, null, 2)}\n` : `${text}\n`);
      }),
    );

  sessionSource(session.command('watch'))
    .description('Show the progress of an upgrade or a deployment until it ends, then its summary')
    .argument('<id>', 'upgrade or deployment id')
    .option('--json', 'print the final report as one JSON object')
    .action(async (id: string, options: SessionOptions) =>
      withSessions(options, async (sessions) => {
        const found = await sessions.session(id);
        if (!found) throw new CliError(new SessionNotFoundError(id).message, ExitCode.notCompleted);
        const display = found.kind === 'upgrade' ? showSessionProgress(sessions, id) : showDeploymentProgress(sessions, id);
        const report = await untilEnded(sessions, id, found.kind);
        await display.stop();
        const text = report.kind === 'upgrade' ? renderSessionSummary(report.report) : renderDeploymentSummary(report.report);
        process.stdout.write(options.json ? `${JSON.stringify(report.report, null, 2)}\n` : `${text}\n`);
      }),
    );

  addTargetOptions(session.command('resume'))
    .description(
      'Take over an upgrade whose process or execution died: a new execution with {resumeUpgradeId} carries on from the stored progress with its own locks (same owner), even if their lease ran out. Locally (--data-dir) or on --endpoint/--aws',
    )
    .argument('<id>', 'upgrade id')
    .option('--data-dir <dir>', 'data directory of the sessions (a local takeover)')
    .option('--site <file>', 'simulated site file (YAML or JSON)')
    .option('--site-config <file>', 'site connection profile: run against the services it names')
    .option('--time-scale <n>', 'run on the wall clock sped up n times; without it, on virtual time')
    .option('--json', 'print the final session as one JSON object')
    .option('--site-state-out <file>', "write the simulated site's final state to this file")
    .action(async (id: string, options: UpgradeRunOptions & TargetOptions) => {
      if (!remoteTarget(options) && !options.dataDir) {
        throw new CliError('resume needs the sessions: give --data-dir DIR (a local takeover) or --endpoint URL / --aws', ExitCode.invalidInput);
      }
      // A window paused by `rollout session pause` is unpaused first; when a process still runs it, that is all.
      let resumedRunning = false;
      await withSessions(options, async (sessions) => {
        const found = await sessions.session(id);
        if (found?.kind !== 'upgrade' || !found.report.paused) return;
        const result = await sessions.gate(id, 'unpause');
        if (result.wakeError) process.stderr.write(`${notWoken(result.wakeError)}\n`);
        resumedRunning = result.running;
      });
      if (resumedRunning) {
        process.stdout.write(`session ${id} resumed: the running upgrade starts new nodes again\n`);
        return;
      }
      process.exitCode = await runUpgradeWorkflow(options, { resumeUpgradeId: id });
    });

  sessionSource(session.command('pause'))
    .description('Mode window: start no new node (nodes in flight finish) until `rollout session resume ID`')
    .argument('<id>', 'upgrade id')
    .action(async (id: string, options: SessionOptions) =>
      withSessions(options, async (sessions) => {
        const result = await gateOrExit(sessions, id, 'pause');
        process.stdout.write(
          result.running
            ? `session ${id} paused: no new node starts; nodes in flight finish. Resume with: rollout session resume ${id}\n`
            : `session ${id} paused; no rollout process is running it. \`rollout session resume ${id}\` lifts the pause and takes it over\n`,
        );
      }),
    );

  sessionSource(session.command('approve'))
    .description('Mode window: approve the batch the session is waiting for (approval: each-batch, pauseAfterBatches)')
    .argument('<id>', 'upgrade id')
    .action(async (id: string, options: SessionOptions) =>
      withSessions(options, async (sessions) => {
        const result = await gateOrExit(sessions, id, 'approve');
        process.stdout.write(`session ${id}: batch ${result.batch} approved${result.running ? '' : ' (no rollout process is running it: it starts when the session is resumed)'}\n`);
        if (result.wakeError) process.stderr.write(`${notWoken(result.wakeError)}\n`);
      }),
    );

  sessionSource(session.command('cancel'))
    .description('Cancel a running upgrade: CRUS deletion rules, then cleanup')
    .argument('<id>', 'upgrade id')
    .action(async (id: string, options: SessionOptions) =>
      withSessions(options, async (sessions) => {
        let running: boolean;
        let wakeError: string | undefined;
        try {
          ({ running, wakeError } = await sessions.cancel(id));
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
        if (wakeError) process.stderr.write(`${notWoken(wakeError)}\n`);
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

/** The session's report once it has ended: an upgrade completed or deleted, a deployment no longer running, or no execution left running. */
async function untilEnded(sessions: RolloutSessions, id: string, kind: SessionKind) {
  for (;;) {
    const found = await sessions.session(id);
    if (!found) throw new CliError(new SessionNotFoundError(id).message, ExitCode.notCompleted);
    if (found.kind === 'upgrade' && (found.report.completed || found.report.state === 'DELETED')) return found;
    if (found.kind === 'deployment' && found.report.status !== 'RUNNING') return found;
    // Through the Step Functions API: a session no execution runs any more (stopped, failed) has ended too.
    if (sessions instanceof RolloutClient && (await sessions.executions(kind === 'upgrade' ? 'rollingUpgrade' : 'groupDeployment', 'RUNNING')).length === 0) {
      return (await sessions.session(id)) ?? found;
    }
    await new Promise((resolve) => setTimeout(resolve, WATCH_POLL_MS));
  }
}

/** The gate is stored but the parked workflow did not hear of it: the same command sends the stored token again. */
function notWoken(why: string): string {
  return `stored, but the workflow waiting for its operator could not be woken (${why}): run the command again to send its task token again`;
}

async function gateOrExit(sessions: RolloutSessions, id: string, action: 'pause' | 'unpause' | 'approve'): Promise<GateResult> {
  try {
    return await sessions.gate(id, action);
  } catch (err) {
    if (err instanceof SessionNotFoundError || err instanceof SessionGateError) throw new CliError(err.message, ExitCode.notCompleted);
    throw err;
  }
}

async function withSessions(options: SessionOptions, action: (sessions: RolloutSessions) => Promise<void>): Promise<void> {
  const target = remoteTarget(options);
  if (target && options.dataDir) throw new CliError('give --data-dir or a control plane (--endpoint, --aws), not both', ExitCode.invalidInput);
  if (!target && !options.dataDir) throw new CliError('where are the sessions? give --data-dir DIR, --endpoint URL or --aws', ExitCode.invalidInput);
  const sessions = target ? await connectTarget(target) : await openSessions({ dataDir: options.dataDir! });
  try {
    await action(sessions);
  } finally {
    await sessions.close();
  }
}
