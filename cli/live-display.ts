import type { Command } from 'commander';
import type { ControlPlane } from '../control-plane/control-plane';
import type { RunKind } from '../control-plane/runtime';
import { LiveRegion, type TerminalOut } from './live-region';
import { deploymentLiveState, taskRunLiveState, upgradeLiveState } from './live-state';
import { renderLiveView, type LiveState } from './live-view';
import { repeatRender } from './repeat-render';

/**
 * How a command that follows a run shows it on stderr: the live view (live-view.ts) redrawn in place
 * on a terminal, or, with --no-live or no terminal (a pipe, a CI log), the line-per-change log of
 * each kind (progress.ts, deployment-progress.ts, task-run-progress.ts).
 */

/** A progress display a command follows a run with. */
export interface RunDisplay {
  /** Stops it once the run has ended: a log says its last line; the live view is cleared, for the summary that follows. */
  stop(): Promise<void>;
  /** Says one line to the operator (a Ctrl-C notice) without drawing over the display. */
  say(text: string): void;
  /** Takes the display off the terminal at once, for a process about to leave (a second Ctrl-C). */
  clear(): void;
}

/** The redraw pace: at most once a second. */
export const LIVE_INTERVAL_MS = 1000;

/** `--no-live`, for every command that follows a run. */
export function addLiveOption(command: Command): Command {
  return command.option('--no-live', 'print one line per change instead of the live view redrawn in place (also without a terminal)');
}

/** Whether to show the live view: asked for (not --no-live) and stderr is a terminal. */
export function liveWanted(options: { live?: boolean }): boolean {
  return options.live !== false && process.stderr.isTTY === true;
}

/** A log display as a RunDisplay: a said line goes to stderr between its own, after a line break (a terminal echoed `^C` where the cursor was). */
export function logDisplay(display: { stop(): Promise<void> }): RunDisplay {
  return { stop: () => display.stop(), say: (text) => process.stderr.write(`\n${text}\n`), clear: () => undefined };
}

/**
 * Reads the live state of run `id` through the control plane, as any observer would: its progress
 * (the run's item) and its report (the nodes). `ownClock`: this process runs the run (the embedded
 * control plane), so the control plane's clock is the run's, simulated or not.
 */
export function liveStateReader(
  controlPlane: Pick<ControlPlane, 'progress' | 'session' | 'liveUpgrade' | 'now' | 'siteState'>,
  kind: RunKind,
  id: string,
  ownClock: boolean,
): () => Promise<{ state: LiveState; now: number } | undefined> {
  return async () => {
    const state = await readLiveState(controlPlane, kind, id);
    if (!state) return undefined;
    // This process runs it: the control plane's clock is the run's, a simulated site's when it has one.
    if (ownClock) return { state: { ...state, simulated: state.simulated || controlPlane.siteState() !== undefined }, now: controlPlane.now() };
    // A second process: an upgrade on simulated time is shown as of its newest stored instant (its clock is not ours);
    // a deployment or task run does not say which clock it is on, so its elapsed time is left out.
    if (state.simulated) return { state, now: state.asOf ?? controlPlane.now() };
    if (kind !== 'upgrade') {
      const { startedAt: _startedAt, ...rest } = state;
      return { state: rest, now: Date.now() };
    }
    return { state, now: Date.now() };
  };
}

/** The live state of run `id`: an upgrade's from its nodes in flight alone (not its whole report: a fleet of 10,000 is read each second). */
async function readLiveState(
  controlPlane: Pick<ControlPlane, 'progress' | 'session' | 'liveUpgrade'>,
  kind: RunKind,
  id: string,
): Promise<LiveState | undefined> {
  if (kind === 'upgrade') {
    const live = await controlPlane.liveUpgrade(id);
    return live?.progress.kind === 'upgrade' ? upgradeLiveState(live.progress, live.report) : undefined;
  }
  const [progress, view] = await Promise.all([controlPlane.progress(id), controlPlane.session(id)]);
  if (!progress || !view || progress.kind !== view.kind || progress.kind !== kind) return undefined;
  return progress.kind === 'deployment' && view.kind === 'deployment'
    ? deploymentLiveState(progress, view.report)
    : progress.kind === 'tasks' && view.kind === 'tasks'
      ? { ...taskRunLiveState(progress, view.report), startedAt: Date.parse(view.report.createdAt) }
      : undefined;
}

/** Shows the live view of what `read` returns on `out` (a terminal), redrawn every `intervalMs`, the first frame at once. */
export function showLiveView(
  read: () => Promise<{ state: LiveState; now: number } | undefined>,
  out: TerminalOut = process.stderr,
  intervalMs = LIVE_INTERVAL_MS,
): RunDisplay {
  const region = new LiveRegion(out);
  let ended = false;
  const render = async () => {
    if (ended) return;
    const seen = await read();
    // Nothing is drawn once stopping: the region is cleared for the summary that follows.
    if (!seen || ended) return;
    const { columns, rows } = region.size();
    // One column and one row spare: a line as wide as the terminal wraps early on some terminals, and the cursor's own line must not scroll the frame.
    region.draw(renderLiveView(seen.state, columns - 1, rows - 1, seen.now));
  };
  const first = render().catch(() => undefined);
  const loop = repeatRender(() => first.then(render), intervalMs);
  return {
    async stop() {
      ended = true;
      await first;
      await loop.stop();
      region.clear();
    },
    say: (text) => region.say(text),
    clear() {
      ended = true;
      region.clear();
    },
  };
}
