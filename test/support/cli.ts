import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { runRollout } from '../../cli/program';
import { shellQuote } from '../../core/site/shell-quote';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'rollout.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `rollout ARGS` as its own process, as an operator would run it. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = process.env): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, CI: 'true' } });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, done };
}

export function runCli(args: string[]): Promise<CliResult> {
  return startCli(args).done;
}

/**
 * Runs a command line as the CLI printed it (`rollout session resume ID --data-dir ...`), pasted into
 * bash where `rollout` is this checkout's bin: the hint's quoting and flags as a user meets them.
 */
export function runPrinted(commandLine: string): Promise<CliResult> {
  if (!commandLine.startsWith('rollout ')) throw new Error(`not a rollout command: ${commandLine}`);
  const script = `rollout() { ${shellQuote(process.execPath)} ${shellQuote(BIN)} "$@"; }\n${commandLine}\n`;
  const child = spawn('bash', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: 'true' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Runs `rollout ARGS` inside the test process (no process start: the suite stays fast), with its
 * stdout and stderr captured. For what a second process or a signal must show, use runCli.
 */
export function runCliInProcess(args: string[]): Promise<CliResult> {
  // stdout and stderr are the process's: runs in one test process take turns.
  const run = inProcessTurn.then(() => captureRun(args));
  inProcessTurn = run.catch(() => undefined);
  return run;
}

let inProcessTurn: Promise<unknown> = Promise.resolve();

async function captureRun(args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const capture = (append: (text: string) => void) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
      const done = rest.find((arg): arg is () => void => typeof arg === 'function');
      done?.();
      return true;
    }) as typeof process.stdout.write;
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(capture((text) => (stdout += text)));
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(capture((text) => (stderr += text)));
  try {
    const code = await runRollout(args);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}
