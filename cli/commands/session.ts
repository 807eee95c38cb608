import type { Command } from 'commander';
import { createInterface } from 'node:readline';
import { DeploymentNotFoundError, SessionGateError, SessionNotCancellableError, SessionNotFoundError, SessionNotStoppableError } from '../../core/errors';
import { cancelImpact } from '../../core/rolling-upgrade/cancel-decisions';
import { stepText } from '../../core/rolling-upgrade/step-plan';
import { formatWallInstant } from '../../core/time-format';
import { openSessions } from '../../local/open-runtime';
import type { ControlPlane } from '../../control-plane/control-plane';
import { listingJson, sessionViewJson } from '../../control-plane/reports/view-json';
import type { CancelResult, GateResult, SessionKind, SessionListing, SessionView, StopResult } from '../../control-plane/runtime';
import { unknownIdError } from '../unknown-id';
import { recordedRunSite, resumeCommand, rolloutCommand } from '../command-hints';
import { offerValues } from '../command-spec';
import { renderTable } from '../table';
import { addTargetOptions, connectTarget, remoteTarget, type TargetOptions } from '../control-plane-target';
import { showDeploymentProgress } from '../deployment-progress';
import { renderDeploymentSummary } from '../deployment-summary';
import { existingDataDir } from '../data-dir-option';
import { addLiveOption, LIVE_INTERVAL_MS, liveStateReader, liveWanted, showLiveView } from '../live-display';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { showSessionProgress } from '../progress';
import { renderSessionSummary } from '../summary';
import { runTargetOf, runWorkflow, type RunOptions, type WorkflowRun } from '../run-workflow';
import { deploymentRun } from './deploy';
import { upgradeRun } from './upgrade';
import { taskGraphRun } from './deploy-tasks';
import { showTaskRunProgress } from '../task-run-progress';
import { renderTaskRunSummary } from '../task-run-summary';

interface SessionOptions extends TargetOptions {
  dataDir?: string;
  json?: boolean;
  kind?: string;
  /** get: follow it live until it ends (as watch). */
  watch?: boolean;
  /** false: --no-live (watch: the line-per-change log on a terminal too). */
  live?: boolean;
  ids?: boolean;
}

/** The control plane the session commands read and change: a data directory's, a served one's, a stack's. */
type Sessions = ControlPlane;

const KINDS: readonly SessionKind[] = ['upgrade', 'deployment', 'tasks'];

/** Where the sessions are: a data directory, a running `rollout serve`, or a deployed stack. */
function sessionSource(command: Command): Command {
  return addTargetOptions(command.option('--data-dir <dir>', 'data directory of the sessions'));
}

/** `rollout session`: one small function per subcommand, registered in the order `--help` lists them. */
export function registerSessionCommands(program: Command): void {
  const session = program
    .command('session')
    .description(
      'Inspect, watch, cancel and resume upgrades, deployments and task runs: of a data directory, a `rollout serve` (--endpoint) or a deployed stack (--aws)',
    );
  for (const register of [
    registerList,
    registerGet,
    registerStatus,
    registerWatch,
    registerResume,
    registerPause,
    registerApprove,
    registerStop,
    registerCancel,
  ])
    register(session);
}

function registerList(session: Command): void {
  const list = sessionSource(session.command('list'))
    .description('List upgrades, deployments and task runs, newest first')
    .option('--kind <kind>', 'only upgrades, deployments or task runs (upgrade|deployment|tasks)')
    .option('--json', 'print JSON')
    .option('--ids', 'print only the ids, one a line (for scripts, and the shell completion of ids)');
  offerValues(list, '--kind', KINDS);
  list.action((options: SessionOptions) => withSessions(options, (sessions) => listSessions(sessions, options)));
}

async function listSessions(sessions: Sessions, options: SessionOptions): Promise<void> {
  const kind = options.kind;
  if (kind !== undefined && !KINDS.includes(kind as SessionKind))
    throw new CliError(`--kind must be one of ${KINDS.join(', ')}, got '${kind}'`, ExitCode.invalidInput);
  const listed = (await sessions.sessions()).filter((entry) => kind === undefined || entry.kind === kind);
  if (options.ids) process.stdout.write(listed.map((entry) => `${listingId(entry)}\n`).join(''));
  else if (options.json) process.stdout.write(`${JSON.stringify(listed.map(listingJson), null, 2)}\n`);
  else process.stdout.write(listed.length === 0 ? 'no sessions\n' : `${renderListing(listed)}\n`);
}

function registerGet(session: Command): void {
  const get = sessionSource(session.command('get'))
    .description("Show one upgrade (nodes and messages), deployment (groups and nodes) or task run (each node's tasks and messages)")
    .argument('<id>', 'upgrade, deployment or task run id')
    .option('--json', 'print it as one JSON object')
    .option('--watch', 'follow it until it ends, as `rollout session watch ID` does (the live view on a terminal), then show it');
  addLiveOption(get).action((id: string, options: SessionOptions) =>
    withSessions(options, (sessions) => (options.watch ? watchSession(sessions, id, options) : showSession(sessions, id, options))),
  );
}

async function showSession(sessions: Sessions, id: string, options: SessionOptions): Promise<void> {
  const found = await sessions.session(id);
  if (!found) throw unknownIdError(id, options);
  process.stdout.write(options.json ? `${JSON.stringify(sessionViewJson(found), null, 2)}\n` : `${renderView(found, await viewHints(id, options))}\n`);
}

/** `rollout session status ID`: a run's state from its one item, whether it has ended, and whether an execution runs it now. */
function registerStatus(session: Command): void {
  sessionSource(session.command('status'))
    .description("Show an upgrade's, a deployment's or a task run's state, whether it has ended, and whether an execution runs it now")
    .argument('<id>', 'upgrade, deployment or task run id')
    .option('--json', 'print it as one JSON object: {id, kind, state, ended, running}')
    .action(async (id: string, options: SessionOptions) =>
      withSessions(options, async (sessions) => {
        const status = await sessions.status(id);
        if (!status) throw unknownIdError(id, options);
        const result = { id, ...status, running: await sessions.isRunning(status.kind, id) };
        const noun = status.kind === 'tasks' ? 'task run' : status.kind;
        process.stdout.write(
          options.json
            ? `${JSON.stringify(result, null, 2)}\n`
            : `${noun} ${id}: ${status.state}${status.ended ? ' (ended)' : ''}, ${result.running ? 'an execution runs it' : 'no execution runs it'}\n`,
        );
      }),
    );
}

function registerWatch(session: Command): void {
  const watch = sessionSource(session.command('watch'))
    .description(
      'Show the progress of an upgrade, a deployment or a task run until it ends (on a terminal the live view: the nodes in flight, redrawn in place), then its summary',
    )
    .argument('<id>', 'upgrade, deployment or task run id')
    .option('--json', 'print the final report as one JSON object');
  addLiveOption(watch).action((id: string, options: SessionOptions) => withSessions(options, (sessions) => watchSession(sessions, id, options)));
}

async function watchSession(sessions: Sessions, id: string, options: SessionOptions): Promise<void> {
  const found = await sessions.status(id);
  if (!found) throw unknownIdError(id, options);
  let followed = await followUntilEnded(sessions, id, found.kind, options);
  // The data directory's owner exited (the run ended, or its process died) and took its endpoint along:
  // the directory is read again, from its next owner or opened here, until it answers.
  let ownerStopped = false;
  for (let attempt = 1; followed === 'owner-gone'; attempt++) {
    ownerStopped = true;
    if (attempt > OWNER_RETRIES) {
      throw new CliError(
        `the process that owns the data directory ${options.dataDir} stopped answering, and the directory did not open after it: try again with ${rolloutCommand(['session', 'watch', id], options)}`,
        ExitCode.notCompleted,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, OWNER_RETRY_MS));
    followed = await reopened(options, (again) => followUntilEnded(again, id, found.kind, options));
  }
  const { ended, report } = followed;
  if (!report) throw new CliError(new SessionNotFoundError(id).message, ExitCode.notCompleted);
  const hints = await viewHints(id, options);
  process.stdout.write(options.json ? `${JSON.stringify(sessionViewJson(report), null, 2)}\n` : `${renderView(report, hints)}\n`);
  if (ended) return;
  if (ownerStopped) {
    throw new CliError(
      `the process that ran it stopped before it ended (the data directory ${options.dataDir} has no owner now): carry it on with ${hints.resumeCommand}`,
      ExitCode.notCompleted,
    );
  }
  process.stderr.write(`${found.kind} ${id} has not ended, but no execution runs it (stopped, or its process died): carry it on with ${hints.resumeCommand}\n`);
  process.exitCode = ExitCode.notCompleted;
}

/** How often, and how long apart, a watcher reads a data directory again once its owner went away (it may still be closing: 10 s in all). */
const OWNER_RETRIES = 40;
const OWNER_RETRY_MS = 250;

/**
 * Shows the run's progress until it has ended, or nothing runs it, then reads its report; 'owner-gone'
 * when the data directory's owner process went away meanwhile (its endpoint refuses: it exited).
 */
async function followUntilEnded(
  sessions: Sessions,
  id: string,
  kind: SessionKind,
  options: SessionOptions,
): Promise<{ ended: boolean; report: SessionView | undefined } | 'owner-gone'> {
  const pace = watchPace(sessions);
  // A second process: not on the run's clock (live-display.ts says what it shows of a simulated one).
  const live = liveWanted(options) ? showLiveView(liveStateReader(sessions, kind, id, false), process.stderr, pace.liveMs) : undefined;
  const display =
    live ??
    (kind === 'upgrade'
      ? showSessionProgress(sessions, id, pace.displayMs)
      : kind === 'deployment'
        ? showDeploymentProgress(sessions, id, pace.displayMs)
        : showTaskRunProgress(sessions, id, pace.displayMs));
  // Ctrl-C leaves the watch (the run goes on), the live view taken off the terminal first.
  const leave = () => {
    live?.clear();
    process.exit(ExitCode.interrupted);
  };
  if (live) process.once('SIGINT', leave);
  try {
    const { ended } = await untilEnded(sessions, id, kind, pace);
    // Read at once: a data directory's owner process may close its store moments after the run ends.
    return { ended, report: await sessions.session(id) };
  } catch (err) {
    if (options.dataDir && connectionLost(err)) return 'owner-gone';
    throw err;
  } finally {
    process.off('SIGINT', leave);
    await display.stop();
  }
}

/** The errors of a request to an endpoint whose process has gone (closed, or went while it answered). */
function connectionLost(err: unknown): boolean {
  const codes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']);
  const code = (value: unknown) => (value as { code?: unknown } | undefined)?.code;
  return codes.has(code(err) as string) || codes.has(code((err as { cause?: unknown } | undefined)?.cause) as string);
}

/** `action` on the data directory opened again (its next owner's endpoint, or the directory itself); 'owner-gone' while it does not answer yet. */
async function reopened<T>(options: SessionOptions, action: (sessions: Sessions) => Promise<T | 'owner-gone'>): Promise<T | 'owner-gone'> {
  try {
    const sessions = await openSessions({ dataDir: await existingDataDir(options.dataDir!) });
    try {
      return await action(sessions);
    } finally {
      await sessions.close();
    }
  } catch (err) {
    if (connectionLost(err)) return 'owner-gone';
    throw err;
  }
}

function registerResume(session: Command): void {
  const resume = addTargetOptions(session.command('resume'))
    .description(
      'Carry on an upgrade, a deployment or a task run whose process or execution died, from the store: an upgrade with {resumeUpgradeId} keeps its own locks (same owner), even if their lease ran out; a deployment with {resumeDeploymentId} starts its groups in flight again without re-running the site actions that ran; a task run with {resumeRunId} follows its tasks in flight (a reboot is found again by its boot session, not started again). A paused window is unpaused. Locally (--data-dir) or on --endpoint/--aws',
    )
    .argument('<id>', 'upgrade, deployment or task run id')
    .option('--data-dir <dir>', 'data directory of the sessions (a local takeover)')
    .option('--site <file>', 'simulated site file (YAML or JSON)')
    .option('--site-config <file>', 'site connection profile: run against the services it names')
    .option('--time-scale <n>', 'run on the wall clock sped up n times; without it, on virtual time')
    .option('--json', 'print the final session as one JSON object')
    .option('--site-state-out <file>', "write the simulated site's final state to this file")
    .option('--detach', 'with --endpoint/--aws: start the resume and return at once, printing the id and how to watch, stop or cancel it');
  addLiveOption(resume).action(async (id: string, options: RunOptions) => {
    process.exitCode = await resumeSession(id, options);
  });
}

/** The run the skeleton resumes, by the kind of the id. */
const RESUMED_RUN: Record<SessionKind, (start: { resume: string }) => WorkflowRun> = { upgrade: upgradeRun, deployment: deploymentRun, tasks: taskGraphRun };

/** Returns the exit code (set only where it is not 0: a resume that only unpaused a running window leaves it). */
async function resumeSession(id: string, options: RunOptions): Promise<number | undefined> {
  if (!remoteTarget(options) && !options.dataDir) {
    throw new CliError('resume needs the sessions: give --data-dir DIR (a local takeover) or --endpoint URL / --aws', ExitCode.invalidInput);
  }
  // A window paused by `rollout session pause` is unpaused first; when a process still runs it, that is all.
  let kind: SessionKind | undefined;
  let resumedRunning = false;
  await withSessions(options, async (sessions) => {
    const found = await sessions.session(id);
    kind = found?.kind;
    if (found?.kind !== 'upgrade' || !found.report.paused) return;
    const result = await sessions.gate(id, 'unpause');
    if (result.wakeError) process.stderr.write(`${notWoken(result.wakeError)}\n`);
    resumedRunning = result.running;
  });
  if (kind === undefined) throw unknownIdError(id, options);
  if (resumedRunning) {
    process.stdout.write(
      options.json
        ? `${JSON.stringify({ id, action: 'unpause', running: true }, null, 2)}\n`
        : `session ${id} resumed: the running upgrade starts new nodes again\n`,
    );
    return undefined;
  }
  return runWorkflow(options, await runTargetOf(options), RESUMED_RUN[kind]({ resume: id }));
}

function registerPause(session: Command): void {
  sessionSource(session.command('pause'))
    .description('Mode window: start no new node (nodes in flight finish) until `rollout session resume ID`')
    .argument('<id>', 'upgrade id')
    .option('--json', 'print the outcome as one JSON object: {id, action, running}')
    .action((id: string, options: SessionOptions) => withSessions(options, (sessions) => pauseSession(sessions, id, options)));
}

async function pauseSession(sessions: Sessions, id: string, options: SessionOptions): Promise<void> {
  const result = await gateOrExit(sessions, id, 'pause', options);
  const resume = resumeCommand(id, options, await recordedRunSite(options.dataDir, id));
  process.stdout.write(
    options.json
      ? `${JSON.stringify(result, null, 2)}\n`
      : result.running
        ? `session ${id} paused: no new node starts; nodes in flight finish. Resume with: ${rolloutCommand(['session', 'resume', id], options)}\n`
        : `session ${id} paused; no rollout process is running it. This lifts the pause and takes it over: ${resume}\n`,
  );
}

function registerApprove(session: Command): void {
  sessionSource(session.command('approve'))
    .description('Mode window: approve the batch the session is waiting for (approval: each-batch, pauseAfterBatches)')
    .argument('<id>', 'upgrade id')
    .option('--json', 'print the outcome as one JSON object: {id, action, batch, running}')
    .action((id: string, options: SessionOptions) => withSessions(options, (sessions) => approveSession(sessions, id, options)));
}

async function approveSession(sessions: Sessions, id: string, options: SessionOptions): Promise<void> {
  const result = await gateOrExit(sessions, id, 'approve', options);
  if (options.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else
    process.stdout.write(
      `session ${id}: batch ${result.batch} approved${result.running ? '' : ' (no rollout process is running it: it starts when the session is resumed)'}\n`,
    );
  if (result.wakeError) process.stderr.write(`${notWoken(result.wakeError)}\n`);
}

function registerStop(session: Command): void {
  sessionSource(session.command('stop'))
    .description(
      'Stop an upgrade, a deployment or a task run: what is in flight finishes (nodes rebooting, site actions, tasks), nothing new starts, nodes not started are left exactly as they were (a drain not yet followed by a reboot is lifted); it ends STOPPED and `rollout session resume ID` carries it on',
    )
    .argument('<id>', 'upgrade, deployment or task run id')
    .option('--json', 'print the result as one JSON object')
    .action((id: string, options: SessionOptions) => withSessions(options, (sessions) => stopSession(sessions, id, options)));
}

async function stopSession(sessions: Sessions, id: string, options: SessionOptions): Promise<void> {
  let result: StopResult;
  try {
    result = await sessions.stop(id);
  } catch (err) {
    if (err instanceof SessionNotFoundError || err instanceof DeploymentNotFoundError)
      throw unknownIdError(id, options, `no upgrade, deployment or task run with id '${id}'`);
    if (err instanceof SessionNotStoppableError) throw new CliError(err.message, ExitCode.notCompleted);
    throw err;
  }
  if (options.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else process.stdout.write(`${stopMessage(result, resumeCommand(id, options, await recordedRunSite(options.dataDir, id)))}\n`);
  if (result.wakeError) process.stderr.write(`${notWoken(result.wakeError)}\n`);
}

function registerCancel(session: Command): void {
  sessionSource(session.command('cancel'))
    .description(
      'Cancel an upgrade (CRUS deletion rules, then cleanup: after the first boot, lock-step fails every node not yet upgraded, untouched ones included; it asks first, or give --yes) a deployment (no group or batch starts after it; actions in flight finish; it ends CANCELLED) or a task run (no task starts after it; tasks in flight finish; its own drains are lifted; it ends CANCELLED). To end a run without failing nodes, use `rollout session stop`',
    )
    .argument('<id>', 'upgrade, deployment or task run id')
    .option('--json', 'print the outcome as one JSON object: {id, kind, state, running}')
    .option('--yes', 'cancel without asking, even when the deletion rules fail nodes that were never started (needed without a terminal)')
    .action((id: string, options: SessionOptions & { yes?: boolean }) => withSessions(options, (sessions) => cancelSession(sessions, id, options)));
}

async function cancelSession(sessions: Sessions, id: string, options: SessionOptions & { yes?: boolean }): Promise<void> {
  await confirmCancel(sessions, id, options);
  let result: CancelResult;
  try {
    result = await sessions.cancel(id);
  } catch (err) {
    // An id that names no session is bad input (exit 2); a session that cannot be cancelled now is not.
    if (err instanceof SessionNotFoundError || err instanceof DeploymentNotFoundError) throw unknownIdError(id, options, err.message);
    if (err instanceof SessionNotCancellableError) throw new CliError(err.message, ExitCode.notCompleted);
    throw err;
  }
  process.stdout.write(
    options.json
      ? `${JSON.stringify(result, null, 2)}\n`
      : `${cancelMessage(result, resumeCommand(id, options, await recordedRunSite(options.dataDir, id)))}\n`,
  );
  if (result.wakeError) process.stderr.write(`${notWoken(result.wakeError)}\n`);
}

/**
 * Before a cancel fails nodes that were never started (CRUS's rule for a lock-step session past its
 * first boot), it says how many and asks; without a terminal it is refused unless --yes. A cancel
 * that fails nothing untouched (a window, step 0 before its boot, a deployment) does not ask.
 */
async function confirmCancel(sessions: Sessions, id: string, options: SessionOptions & { yes?: boolean }): Promise<void> {
  if (options.yes) return;
  const found = await sessions.session(id);
  if (found?.kind !== 'upgrade') return;
  const stored = {
    ...found.report,
    mode: found.report.controls.mode,
    nodeCount: Object.keys(found.report.nodes).length,
    planTaken: found.report.stepCount > 0,
    progress: found.report.progress,
  };
  const { untouched, inFlight } = cancelImpact(stored);
  if (untouched === 0) return;
  const what =
    `cancelling ${id} fails ${untouched} node(s) that were never started` +
    (inFlight > 0 ? `, and those of the step in flight (up to ${inFlight}) not yet back,` : '') +
    ` by CRUS's deletion rules (State=FAIL in Slurm, into the failed group '${found.report.failedLabel}'). To end it and leave them as they are, use: ${rolloutCommand(['session', 'stop', id], options)}`;
  if (!process.stdin.isTTY) throw new CliError(`${what}; give --yes to cancel anyway (no terminal to ask on)`, ExitCode.invalidInput);
  const answer = await ask(`${what}.\nCancel anyway? [y/N] `);
  if (!/^y(es)?$/i.test(answer.trim())) throw new CliError('not cancelled', ExitCode.notCompleted);
}

/**
 * Asks on the terminal; a closed input (Ctrl-D, Ctrl-C) answers ''. The answer is settled before the
 * interface closes: closing fires 'close', whose '' would otherwise win and make every answer a no.
 */
function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  return new Promise((resolve) => {
    rl.on('close', () => resolve(''));
    rl.question(question, (answer) => {
      resolve(answer);
      rl.close();
    });
  });
}

/** What a stop request leads to: the running workflow applies it, or (nothing runs it) it is stopped as it stands. */
function stopMessage({ id, kind, state, running }: StopResult, resume: string): string {
  const noun = kind === 'tasks' ? 'task run' : kind;
  if (!running) return `${noun} ${id} is ${state}, but no execution runs it (stopped, or its process died): nothing is in flight; carry it on with: ${resume}`;
  return `${noun} ${id} is ${state}: what is in flight finishes, nothing new starts, and it ends STOPPED; then carry it on with: ${resume}`;
}

/** The whole commands a report names: the resume (with the site the run used, for a data directory), the approval. */
async function viewHints(id: string, options: SessionOptions): Promise<{ resumeCommand: string; approveCommand: string }> {
  return {
    resumeCommand: resumeCommand(id, options, await recordedRunSite(options.dataDir, id)),
    approveCommand: rolloutCommand(['session', 'approve', id], options),
  };
}

/** The text of one session's report. */
function renderView(found: SessionView, hints: { resumeCommand: string; approveCommand: string }): string {
  if (found.kind === 'upgrade') return renderSessionSummary(found.report, hints);
  if (found.kind === 'deployment') return renderDeploymentSummary(found.report, hints);
  const messages = found.report.messages.length > 0 ? `\n\n  Messages:\n${found.report.messages.map((m) => `    ${m}`).join('\n')}` : '';
  return `${renderTaskRunSummary(found.report, hints)}${messages}`;
}

/** What a cancel request leads to: the running workflow applies it, or nothing does until the session is resumed. */
function cancelMessage({ id, kind, state, running }: CancelResult, resume: string): string {
  const applies =
    kind === 'upgrade'
      ? 'the running upgrade applies the deletion rules and cleans up'
      : kind === 'deployment'
        ? 'the running deployment starts no group or batch any more; actions in flight finish, then it ends CANCELLED'
        : 'the running task run starts no task any more; tasks in flight finish, its own drains are lifted, then it ends CANCELLED';
  if (running) return `${kind} ${id} is ${state}: ${applies}`;
  return `${kind} ${id} is ${state}, but no execution runs it (stopped, or its process died): the cancel applies when it is resumed: ${resume}`;
}

const listingId = (entry: SessionListing): string =>
  entry.kind === 'upgrade' ? entry.session.upgradeId : entry.kind === 'deployment' ? entry.deployment.deploymentId : entry.taskRun.runId;

/**
 * Where an upgrade is, steps counted from 1 (`step 2 of 3 BOOTING`); a session past its last step shows
 * its last, a window has none. A cancelled one says where the cancel found it, not COMPLETE (its closing stage).
 */
function whereText(s: Extract<SessionListing, { kind: 'upgrade' }>['session']): string {
  const step = s.mode === 'window' ? 'window' : s.stepCount ? stepText(s.progress.step, s.stepCount) : 'step ?';
  if (s.state === 'DELETED' || s.state === 'DELETING') {
    const cancel = s.state === 'DELETED' ? 'cancelled' : 'cancelling';
    return s.mode === 'window' ? `window ${cancel}` : `${cancel} at ${step}`;
  }
  return `${step} ${s.progress.stage}`;
}

/**
 * The listing as a table with a header. CREATED is the wall clock: a run on simulated time (an upgrade,
 * a deployment, a task run) shows when it was created on the wall clock (its simulated instants are not
 * dates), marked `(sim)`.
 */
function renderListing(listed: readonly SessionListing[]): string {
  const rows = listed.map((entry): string[] => {
    if (entry.kind === 'tasks') {
      const r = entry.taskRun;
      return [r.runId, 'tasks', r.status, createdText(r), `${r.nodeCount} node(s)`, `${r.counts.ACTIVE} task(s) done, ${r.counts.ERROR} failed`];
    }
    if (entry.kind === 'deployment') {
      const d = entry.deployment;
      return [d.deploymentId, 'deployment', d.status, createdText(d), `${d.groupCount} group(s), ${d.nodeCount} node(s)`, ''];
    }
    const s = entry.session;
    const done = (s.progress.counts?.upgraded ?? 0) + (s.progress.counts?.failed ?? 0);
    return [s.upgradeId, 'upgrade', s.state, createdText(s), `${s.startingLabel} -> ${s.upgradeTemplateId}`, `${whereText(s)}, ${done}/${s.nodeCount} done`];
  });
  return renderTable(['ID', 'KIND', 'STATE', 'CREATED', 'WHAT', 'PROGRESS'], rows);
}

/** CREATED: a wall-clock date; a run on simulated time its wall-clock creation, marked `(sim)`, or `simulated` (stored without it). */
function createdText(run: { createdAt: string; simulatedTime?: boolean; wallCreatedAt?: string }): string {
  if (!run.simulatedTime) return formatWallInstant(run.createdAt);
  return run.wallCreatedAt ? `${formatWallInstant(run.wallCreatedAt)} (sim)` : 'simulated';
}

/**
 * How watch polls: a local table and control plane every quarter second; a deployed stack (no
 * endpoint override) gently: from 1 s, backing off to 15 s while nothing changes (the session item,
 * ListExecutions with its low API quota), the progress line every 2 s from the counts on the session item.
 * The live view reads the run's nodes in flight too (an upgrade's; a deployment's or task run's report): once a second, on a stack every 10 s.
 */
interface WatchPace {
  firstMs: number;
  maxMs: number;
  displayMs: number;
  liveMs: number;
}

const LOCAL_PACE: WatchPace = { firstMs: 250, maxMs: 250, displayMs: 250, liveMs: LIVE_INTERVAL_MS };
const AWS_PACE: WatchPace = { firstMs: 1000, maxMs: 15_000, displayMs: 2000, liveMs: 10_000 };

function watchPace(sessions: Sessions): WatchPace {
  return sessions.onAws ? AWS_PACE : LOCAL_PACE;
}

/** The AWS errors that mean "ask again later", which the SDK's own retries did not absorb. */
const THROTTLING = new Set([
  'ThrottlingException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'LimitExceededException',
]);

/**
 * Polls until the session has ended (any end state: READY, DELETED, HALTED; SUCCEEDED, FAILED,
 * CANCELLED), or until nothing runs it any more (its own executions, not any of the workflow's; a
 * data directory: no live process that runs workflows owns it): `ended: false` then.
 */
async function untilEnded(sessions: Sessions, id: string, kind: SessionKind, pace: WatchPace): Promise<{ ended: boolean }> {
  let wait = pace.firstMs;
  let last: string | undefined;
  for (;;) {
    try {
      const status = await sessions.status(id);
      if (!status) throw new CliError(new SessionNotFoundError(id).message, ExitCode.invalidInput);
      if (status.ended) return { ended: true };
      if (!(await sessions.isRunning(kind, id))) {
        // The execution may have ended between the two reads: its end state is written before it ends.
        return { ended: (await sessions.status(id))?.ended ?? false };
      }
      const seen = JSON.stringify(status);
      wait = seen === last ? Math.min(Math.ceil(wait * 1.5), pace.maxMs) : pace.firstMs;
      last = seen;
    } catch (err) {
      if (!(err instanceof Error && THROTTLING.has(err.name))) throw err;
      wait = Math.min(wait * 2, pace.maxMs);
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** The gate is stored but the parked workflow did not hear of it: the same command sends the stored token again. */
function notWoken(why: string): string {
  return `stored, but the workflow waiting for its operator could not be woken (${why}): run the command again to send its task token again`;
}

async function gateOrExit(sessions: Sessions, id: string, action: 'pause' | 'unpause' | 'approve', options: SessionOptions): Promise<GateResult> {
  try {
    return await sessions.gate(id, action);
  } catch (err) {
    if (err instanceof SessionNotFoundError) throw unknownIdError(id, options, err.message);
    if (err instanceof SessionGateError) throw new CliError(err.message, ExitCode.notCompleted);
    throw err;
  }
}

async function withSessions(options: SessionOptions, action: (sessions: Sessions) => Promise<void>): Promise<void> {
  const target = remoteTarget(options);
  if (target && options.dataDir) throw new CliError('give --data-dir or a control plane (--endpoint, --aws), not both', ExitCode.invalidInput);
  if (!target && !options.dataDir) throw new CliError('where are the sessions? give --data-dir DIR, --endpoint URL or --aws', ExitCode.invalidInput);
  const sessions = target ? await connectTarget(target) : await openSessions({ dataDir: await existingDataDir(options.dataDir!) });
  try {
    await action(sessions);
  } finally {
    await sessions.close();
  }
}
