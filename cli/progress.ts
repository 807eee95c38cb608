import cliProgress from 'cli-progress';
import type { ControlPlane } from '../control-plane/control-plane';
import { repeatRender } from './repeat-render';
import { stepNumber, stepText } from '../core/rolling-upgrade/step-plan';
import { formatDuration, formatWallInstant } from '../core/time-format';

/**
 * Shows a running session's progress on stderr: a bar on a terminal, one line per step change
 * elsewhere (CI logs). Reads through the control plane, as any second observer would.
 */
export function showSessionProgress(
  sessions: Pick<ControlPlane, 'progress'> & { now?: () => number },
  upgradeId: string,
  intervalMs = 250,
): { stop(): Promise<void> } {
  const tty = process.stderr.isTTY === true;
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          stream: process.stderr,
          format: ' {bar} {value}/{total} nodes | {where} {stage} | upgraded {upgraded} failed {failed}{note}',
          hideCursor: true,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let started = false;
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
    // The newest message, shown as soon as it is posted (e.g. that a group does not exist): the bar carries it, a log gets it once.
    const note = snapshot.message === undefined ? '' : ` | ${snapshot.message.length > 100 ? `${snapshot.message.slice(0, 100)}...` : snapshot.message}`;
    const payload = {
      ...snapshot,
      note: `${stopping}${eta}${note}`,
      step: stepNumber(snapshot.step, snapshot.steps),
      where: windowText ?? stepText(snapshot.step, snapshot.steps),
    };
    const done = snapshot.upgraded + snapshot.failed;
    if (bar) {
      if (!started) bar.start(Math.max(snapshot.total, 1), done, payload);
      else bar.update(done, payload);
      bar.setTotal(Math.max(snapshot.total, 1));
      started = true;
    } else {
      const line = `${payload.where} ${snapshot.stage}: ${done}/${snapshot.total} nodes done (upgraded ${snapshot.upgraded}, failed ${snapshot.failed})${stopping}${eta}`;
      if (snapshot.stage === 'STARTING' || line.split(':')[0] !== lastLine.split(':')[0]) {
        if (line !== lastLine) process.stderr.write(`${line}\n`);
        lastLine = line;
      }
      if (snapshot.message !== undefined && snapshot.message !== lastMessage) process.stderr.write(`  ${snapshot.message}\n`);
    }
    lastMessage = snapshot.message;
  };

  const loop = repeatRender(render, intervalMs);
  return {
    async stop() {
      await loop.stop();
      bar?.stop();
    },
  };
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
