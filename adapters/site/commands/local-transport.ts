import { execFile, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { CommandTransportError, type CommandResult, type CommandTransport } from '../../../ports/command-transport';

export interface LocalTransportOptions {
  /** Default 600 s; a run's own timeoutSeconds wins. */
  timeoutSeconds?: number;
  /** Environment of the commands; default this process's (PATH finds scontrol). */
  env?: NodeJS.ProcessEnv;
}

const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

interface Started {
  child: ChildProcess;
  startedAt: number;
  tag?: string;
  /** Set once the child ended: its result, or why it could not finish. */
  outcome?: { result: CommandResult } | { error: CommandTransportError };
}

/**
 * Runs commands on this host with `/bin/sh -c` (an admin or head node with scontrol on PATH).
 * Started commands are children of this process: their ids mean nothing to another process.
 */
export class LocalTransport implements CommandTransport {
  private readonly started = new Map<string, Started>();

  constructor(private readonly options: LocalTransportOptions = {}) {}

  run(script: string, options: { timeoutSeconds?: number } = {}): Promise<CommandResult> {
    return new Promise((resolve, reject) => {
      this.spawn(script, options, (outcome) => ('result' in outcome ? resolve(outcome.result) : reject(outcome.error)));
    });
  }

  async start(script: string, options: { timeoutSeconds?: number; tag?: string } = {}): Promise<string> {
    const id = randomUUID();
    const entry: Started = {
      child: this.spawn(script, options, (outcome) => void (entry.outcome = outcome)),
      startedAt: Date.now(),
      ...(options.tag ? { tag: options.tag } : {}),
    };
    this.started.set(id, entry);
    return id;
  }

  async findStarted(tag: string, since: number): Promise<string | undefined> {
    for (const [id, entry] of this.started) if (entry.tag === tag && entry.startedAt >= since) return id;
    return undefined;
  }

  /** Polling a finished command again answers the same (the caller may fail to store it the first time). */
  async poll(id: string): Promise<CommandResult | undefined> {
    const entry = this.started.get(id);
    if (!entry) throw new CommandTransportError(`no local command ${id} was started by this process`, { transport: 'local' });
    if (!entry.outcome) return undefined;
    if ('error' in entry.outcome) throw entry.outcome.error;
    return entry.outcome.result;
  }

  private spawn(script: string, { timeoutSeconds }: { timeoutSeconds?: number }, done: (outcome: NonNullable<Started['outcome']>) => void): ChildProcess {
    const timeout = (timeoutSeconds ?? this.options.timeoutSeconds ?? 600) * 1000;
    return execFile(
      '/bin/sh',
      ['-c', script],
      { timeout, maxBuffer: MAX_OUTPUT_BYTES, env: this.options.env ?? process.env, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') {
          const why = err.killed ? `timed out after ${timeout / 1000} s` : err.message;
          done({
            error: new CommandTransportError(
              `local command ${why}`,
              { transport: 'local', status: err.killed ? 'TimedOut' : 'Failed', stderr },
              { cause: err },
            ),
          });
          return;
        }
        done({ result: { exitCode: err ? (err.code as number) : 0, stdout, stderr, stdoutTruncated: false } });
      },
    );
  }
}
