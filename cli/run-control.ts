import type { RunKind } from '../control-plane/runtime';
import type { ControlPlane } from '../control-plane/control-plane';
import { describeError } from '../core/errors';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';
import type { RunDisplay } from './live-display';
import { resumeCommand, rolloutCommand, type InvocationOptions } from './command-hints';

/**
 * What Ctrl-C and `--detach` do to a run the CLI follows, one rule for `upgrade`, `deploy` and
 * `deploy --graph`:
 * - the embedded control plane runs in this process: the first Ctrl-C stops the session (nodes in
 *   flight finish, nothing new starts, the rest is left as it was) and the run ends STOPPED with its
 *   summary; a second Ctrl-C leaves at once (the session stays as stored: `session resume` carries it on);
 * - a client of a remote control plane (`--endpoint`, `--aws`) only follows a run that goes on
 *   without it: Ctrl-C detaches, saying how to watch, stop or cancel it;
 * - `--detach` starts the run and returns at once (a remote control plane only: the embedded one
 *   would end with the process).
 */

const NOUN: Record<RunKind, string> = { upgrade: 'upgrade', deployment: 'deployment', tasks: 'task run' };

/** How to watch, stop or cancel a run that goes on without this process. */
export function followHints(kind: RunKind, id: string, options: InvocationOptions): string {
  const watch = `  watch:  ${rolloutCommand(['session', 'watch', id], options)}`;
  if (kind === 'tasks') return watch;
  return [
    watch,
    `  stop:   ${rolloutCommand(['session', 'stop', id], options)}    (what is in flight finishes; resume later)`,
    `  cancel: ${rolloutCommand(['session', 'cancel', id], options)}`,
  ].join('\n');
}

/** `--detach` needs a control plane that outlives this process. */
export function checkDetach(options: { detach?: boolean }, remote: boolean): void {
  if (options.detach && !remote) {
    throw new CliError(
      '--detach needs --endpoint URL or --aws: the embedded control plane (--site, --site-config) runs in this process and would end with it (start `rollout serve` and give --endpoint)',
      ExitCode.invalidInput,
    );
  }
}

/** Prints what `--detach` started or resumed (the id, or with --json `{id, kind, executionArn}`) and how to follow it. */
export function reportDetached(
  run: { id: string; kind: RunKind; executionArn: string; resumed: boolean },
  options: InvocationOptions & { json?: boolean },
): number {
  if (options.json) process.stdout.write(`${JSON.stringify({ id: run.id, kind: run.kind, executionArn: run.executionArn })}\n`);
  else process.stdout.write(`${NOUN[run.kind]} ${run.id} ${run.resumed ? 'resumed' : 'started'}\n${followHints(run.kind, run.id, options)}\n`);
  return ExitCode.completed;
}

/**
 * Handles Ctrl-C while the CLI follows `id` (see the rules above), saying what it does through the
 * run's display (above the live view, which a process about to leave takes off first). Returns the
 * function that stops listening, once the run has ended.
 */
export function handleInterrupts(
  run: { kind: RunKind; id: string },
  sessions: Pick<ControlPlane, 'stop'>,
  options: InvocationOptions,
  remote: boolean,
  display: Pick<RunDisplay, 'say' | 'clear'>,
): () => void {
  let interrupted = false;
  const noun = NOUN[run.kind];
  const leave = (text: string) => {
    display.clear();
    process.stderr.write(`\n${text}\n`);
    process.exit(ExitCode.interrupted);
  };
  const onInterrupt = () => {
    if (remote) leave(`detached: ${noun} ${run.id} goes on without this process\n${followHints(run.kind, run.id, options)}`);
    if (interrupted) {
      leave(`leaving at once: ${noun} ${run.id} is left as stored (carry it on with ${resumeCommand(run.id, options)})`);
    }
    interrupted = true;
    display.say(`stopping ${noun} ${run.id}: what is in flight finishes, nothing new starts (Ctrl-C again to leave at once)`);
    sessions.stop(run.id).catch((err: unknown) => display.say(`error: the stop failed: ${describeError(err)}`));
  };
  process.on('SIGINT', onInterrupt);
  return () => process.off('SIGINT', onInterrupt);
}
