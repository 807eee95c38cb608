import { execFile } from 'node:child_process';
import type { CommandResult, CommandTransport } from '../../../ports/command-transport';
import { CommandTransportError } from './command-errors';

export interface LocalTransportOptions {
  /** Default 600 s; a run's own timeoutSeconds wins. */
  timeoutSeconds?: number;
  /** Environment of the commands; default this process's (PATH finds scontrol). */
  env?: NodeJS.ProcessEnv;
}

const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** Runs commands on this host with `/bin/sh -c` (an admin or head node with scontrol on PATH). */
export class LocalTransport implements CommandTransport {
  constructor(private readonly options: LocalTransportOptions = {}) {}

  run(script: string, { timeoutSeconds }: { timeoutSeconds?: number } = {}): Promise<CommandResult> {
    const timeout = (timeoutSeconds ?? this.options.timeoutSeconds ?? 600) * 1000;
    return new Promise((resolve, reject) => {
      execFile('/bin/sh', ['-c', script], { timeout, maxBuffer: MAX_OUTPUT_BYTES, env: this.options.env ?? process.env, encoding: 'utf8' }, (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') {
          const why = err.killed ? `timed out after ${timeout / 1000} s` : err.message;
          reject(new CommandTransportError(`local command ${why}`, { transport: 'local', status: err.killed ? 'TimedOut' : 'Failed', stderr }, { cause: err }));
          return;
        }
        resolve({ exitCode: err ? (err.code as number) : 0, stdout, stderr, stdoutTruncated: false });
      });
    });
  }
}
