import { performance } from 'node:perf_hooks';
import { causeMessage } from '../control-plane/execution-cause';
import type { RunKind, SessionStatus, WorkflowName } from '../control-plane/runtime';
import type { SiteSource } from '../local/open-runtime';
import { checkSiteOptions, connectRunTarget, remoteTarget, type TargetOptions } from './control-plane-target';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';
import { liveStateReader, liveWanted, logDisplay, showLiveView } from './live-display';
import { recordRunSite, resumeCommand, rolloutCommand } from './command-hints';
import { checkDetach, handleInterrupts, reportDetached } from './run-control';
import { loadSiteSource, writeSiteState, type SiteSourceOptions } from './site-source';
import { unknownIdError } from './unknown-id';

/**
 * One skeleton for every run the CLI starts or resumes and follows (`upgrade`, `deploy`,
 * `deploy --graph`, `session resume`): connect, start, show progress (live-display.ts: the live view
 * on a terminal, else the kind's log), handle Ctrl-C (run-control.ts), wait for the outcome, print
 * the report (summary or --json), and one exit status for one outcome
 * whatever the kind (the table in exit-codes.ts). Each command gives only what differs: its start,
 * its progress log, its report.
 */

/** The control plane a run goes to (the remote one, or the embedded one of this process). */
export type RunControlPlane = Awaited<ReturnType<typeof connectRunTarget>>;

/** Where and how a run goes and reports: the options `upgrade`, `deploy` and `session resume` share. */
export interface RunOptions extends SiteSourceOptions, TargetOptions {
  timeScale?: string;
  json?: boolean;
  siteStateOut?: string;
  dataDir?: string;
  detach?: boolean;
  /** false: --no-live (the line-per-change log on a terminal too). */
  live?: boolean;
}

/** The run's target, checked, with its site loaded once for the whole command (a remote control plane has its own). */
export interface RunTarget {
  remote: ReturnType<typeof remoteTarget>;
  source: SiteSource | undefined;
}

/** Checks the target options (exit 2 naming the flag) and loads the local site once. */
export async function runTargetOf(options: RunOptions): Promise<RunTarget> {
  const remote = remoteTarget(options);
  checkSiteOptions(options, remote !== undefined);
  checkDetach(options, remote !== undefined);
  return { remote, source: remote ? undefined : await loadSiteSource(options) };
}

/** How long a run took, for its summary: on the wall clock, and on the site's simulated clock when it has one. */
export interface RunTiming {
  realSeconds: number;
  simulatedSeconds?: number;
}

/** What a summary says besides the report: how long the run took, and the whole commands that carry it on or approve its batch. */
export interface SummaryContext extends RunTiming {
  resumeCommand: string;
  approveCommand: string;
}

/** A run that has ended, as the command reports it. */
export interface EndedRun {
  /** What --json prints. */
  json: unknown;
  summary(context: SummaryContext): string;
  /** Exit 0: the run ended as asked. */
  succeeded: boolean;
}

/** What one kind of run brings to the skeleton. */
export interface WorkflowRun {
  kind: RunKind;
  /** A new run of `workflow` with the typed request, or a resume of the run with this id. */
  start: { workflow: WorkflowName; input: unknown } | { resume: string };
  /** For a resume: whether a run in this state can be carried on (default: any state). */
  resumable?(status: SessionStatus): boolean;
  /**
   * The line said on stderr once the run has its id (`resumed`: a resume), if the kind says one;
   * `getCommand` shows the run from another terminal (none for a run kept in this process only: no --data-dir).
   */
  announce?(id: string, resumed: boolean, remote: boolean, getCommand: string | undefined): string;
  /** Its line-per-change log (--no-live, or no terminal); on a terminal the live view shows it, whatever its kind. */
  showProgress(controlPlane: RunControlPlane, id: string): { stop(): Promise<void> };
  /** The workflow's error for a run that ran and failed, which the report explains; any other error is said on stderr. */
  runFailedError?: string;
  /** The run's report; undefined when the workflow ended before creating the run. */
  endedRun(controlPlane: RunControlPlane, id: string): Promise<EndedRun | undefined>;
}

const NOUN: Record<RunKind, string> = { upgrade: 'session', deployment: 'deployment', tasks: 'task run' };
const NOT_CREATED: Record<RunKind, string> = { upgrade: 'creating a session', deployment: 'creating the deployment', tasks: 'opening the task run' };

/** Runs `run` on the target and follows it to its end (or returns once it started, with --detach). Returns the exit code. */
export async function runWorkflow(options: RunOptions, target: RunTarget, run: WorkflowRun): Promise<number> {
  const controlPlane = await connectRunTarget(target.remote, target.source, options);
  try {
    const startedReal = performance.now();
    const startedSimulated = controlPlane.now();
    const resumed = 'resume' in run.start ? run.start.resume : undefined;
    if (resumed !== undefined) await checkResumable(controlPlane, run, resumed, options);
    const started = 'resume' in run.start ? await controlPlane.resume(run.kind, run.start.resume) : await controlPlane.run(run.start.workflow, run.start.input);
    const id = resumed ?? started.id;
    const remote = target.remote !== undefined;
    // The site a local run uses, for the hints of later commands on its data directory (`session stop` names the resume).
    if (!remote && options.dataDir) await recordRunSite(options.dataDir, id, options);
    if (options.detach) return reportDetached({ ...started, id, resumed: resumed !== undefined }, options);
    const getCommand = remote || options.dataDir ? rolloutCommand(['session', 'get', id], options) : undefined;
    const announcement = run.announce?.(id, resumed !== undefined, remote, getCommand);
    if (announcement) process.stderr.write(`${announcement}\n`);
    // On a terminal the live view (not remote: the embedded control plane runs it here, on the run's clock), else the kind's log.
    const progress = liveWanted(options) ? showLiveView(liveStateReader(controlPlane, run.kind, id, !remote)) : logDisplay(run.showProgress(controlPlane, id));
    const stopListening = handleInterrupts({ kind: run.kind, id }, controlPlane, options, remote, progress);
    let outcome: Awaited<typeof started.outcome>;
    try {
      outcome = await started.outcome;
    } finally {
      stopListening();
      // Before anything else is written: the live view is taken off the terminal.
      await progress.stop();
    }

    // The workflow's first state refused the input (a console start reaches it unchecked; here: what only the site knows).
    if (outcome.status === 'FAILED' && outcome.error === 'InvalidInputError') throw new CliError(causeMessage(outcome), ExitCode.invalidInput);
    if (options.siteStateOut) await writeSiteState(options.siteStateOut, target.source!, controlPlane);
    const ended = await run.endedRun(controlPlane, id);
    if (!ended) throw new CliError(`the workflow ended (${outcome.status}) before ${NOT_CREATED[run.kind]}: ${causeMessage(outcome)}`, ExitCode.notCompleted);
    if (options.json) process.stdout.write(`${JSON.stringify(ended.json, null, 2)}\n`);
    else {
      const simulated = controlPlane.siteState() ? { simulatedSeconds: (controlPlane.now() - startedSimulated) / 1000 } : {};
      const hints = { resumeCommand: resumeCommand(id, options), approveCommand: rolloutCommand(['session', 'approve', id], options) };
      process.stdout.write(`${ended.summary({ realSeconds: (performance.now() - startedReal) / 1000, ...simulated, ...hints })}\n`);
    }
    if (outcome.status === 'FAILED' && outcome.error !== run.runFailedError) {
      process.stderr.write(`error: the workflow failed (${outcome.error}): ${causeMessage(outcome)}\n`);
      return ExitCode.notCompleted;
    }
    return ended.succeeded ? ExitCode.completed : ExitCode.notCompleted;
  } finally {
    await controlPlane.close();
  }
}

/** A run to resume must exist as this kind (else exit 2, as any unknown id) and be resumable (else exit 1): said before any execution starts. */
async function checkResumable(controlPlane: RunControlPlane, run: WorkflowRun, id: string, options: RunOptions): Promise<void> {
  const found = await controlPlane.status(id);
  if (found?.kind !== run.kind) throw unknownIdError(id, options, `no ${NOUN[run.kind]} with id '${id}'`);
  if (run.resumable && !run.resumable(found))
    throw new CliError(`${NOUN[run.kind]} ${id} has ended (${found.state}): nothing to resume`, ExitCode.notCompleted);
}
