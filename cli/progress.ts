import type { ControlPlane } from '../control-plane/control-plane';
import { repeatRender } from './repeat-render';
import { stepText } from '../core/rolling-upgrade/step-plan';
import { formatDuration, formatWallInstant } from '../core/time-format';

/**
 * Logs a running session's progress on stderr, one line per step change and each new message: what
 * a command shows with --no-live or without a terminal (a CI log; live-display.ts has the live view).
 * Reads through the control plane, as any second observer would.
 */
export function showSessionProgress(
  sessions: Pick<ControlPlane, 'progress'> & { now?: () => number },
  upgradeId: string,
  intervalMs = 250,
): { stop(): Promise<void> } {
  let lastLine = '';
  let lastMessage: string | undefined;

  const render = async () => {
    const snapshot = await sessions.progress(upgradeId);
    if (snapshot?.kind !== 'upgrade') return;
    const w = snapshot.window;
    // In flight against the cap (slot holders only), then the drained-ahead ones, then the phases of the nodes in flight.
    const phaseText = w
      ? Object.entries(w.phases)
          .filter(([, n]) => n > 0)
          .map(([phase, n]) => `${n} ${PHASE_WORDS[phase] ?? phase.toLowerCase()}`)
          .join(', ')
      : '';
    const windowText = w
      ? `window ${w.inFlight}/${w.cap} out of service${w.ahead > 0 ? `, ${w.ahead} drained ahead` : ''}${phaseText ? ` (${phaseText})` : ''}` +
        (w.halted ? `, halted (${w.halted})` : w.waiting ? `, waiting for ${w.waiting}` : '')
      : undefined;
    const eta = snapshot.estimate ? ` | ETA ${etaText(snapshot.estimate.endsAt, sessions.now?.(), snapshot.simulatedTime)}` : '';
    const stopping = snapshot.state === 'STOPPING' ? ' | stopping' : '';
    const where = windowText ?? stepText(snapshot.step, snapshot.steps);
    const done = snapshot.upgraded + snapshot.failed;
    const line = `${where} ${snapshot.stage}: ${done}/${snapshot.total} nodes done (upgraded ${snapshot.upgraded}, failed ${snapshot.failed})${stopping}${eta}`;
    if (snapshot.stage === 'STARTING' || line.split(':')[0] !== lastLine.split(':')[0]) {
      if (line !== lastLine) process.stderr.write(`${line}\n`);
      lastLine = line;
    }
    // The newest message, said once as soon as it is posted (e.g. that a group does not exist).
    if (snapshot.message !== undefined && snapshot.message !== lastMessage) process.stderr.write(`  ${snapshot.message}\n`);
    lastMessage = snapshot.message;
  };

  return repeatRender(render, intervalMs);
}

/** The window's phases as the display words them. */
const PHASE_WORDS: Record<string, string> = { DRAINING: 'draining', QUIESCED: 'quiet', BOOTING: 'booting', BOOTED: 'returning', CHECKING: 'checking' };

/**
 * On the wall clock: the end as a date (UTC) and how far off. On simulated time: how far off by the
 * simulated clock, which only a reader on that clock knows (the process running it); a remote reader
 * says simulated and gives no date.
 */
function etaText(endsAt: number, now: number | undefined, simulated: boolean | undefined): string {
  if (!simulated) return `${formatWallInstant(endsAt)} (in ${formatDuration(Math.max(0, (endsAt - Date.now()) / 1000))})`;
  const onItsClock = now !== undefined && Math.abs(endsAt - now) < 365 * 86_400_000 && Math.abs(now - Date.now()) > 86_400_000;
  return onItsClock ? `in ${formatDuration(Math.max(0, (endsAt - now) / 1000))} of simulated time` : 'on simulated time';
}
