/**
 * A reader that stops reading (`rollout session list | head`) ends the process quietly, as a
 * command-line tool should: nothing is left to say to anyone. Any other write error is reported.
 */
export function endQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
}
