/**
 * The hops of `rollout upgrade --mode window` from the command to the `scontrol update ... State=DRAIN`
 * it sends: the call chain (the tree's own stack frames and files) and the process or protocol
 * boundaries it crosses. `node bin/run-ts.js bench/cli-hops.ts [--tree DIR]`: DIR (default: this
 * checkout) is any checkout of the project with its node_modules, so that two trees are measured by the
 * same code (issue 27's before and after).
 *
 * It starts `rollout simulate --transport ssm` of the 64-node example from DIR in a child process (the
 * site: scontrol, sinfo and wwctl run on its simulated head node over its SSM endpoint), then runs DIR's
 * `cli/main.ts upgrade --site-config PROFILE --mode window ...` in this process, after wrapping, in this
 * process only (no file of DIR changes):
 * - `SsmTransport.prototype.run`: the stack when the first drain is handed to the transport;
 * - `LocalStepFunctions.prototype.start`: the stack when the engine starts the RollingUpgrade execution;
 * - `http.request`: the stack of a StartExecution sent over HTTP (the SDK's handler takes http.request
 *   from node:http lazily, so the wrapper is the one it calls);
 * - `http.Server.prototype.emit`: every HTTP request a server of this process receives (the CLI's own
 *   loopback endpoints; the site's are in the child).
 *
 * Node keeps async frames across awaits (`--async-stack-traces`, on by default) but not across a promise
 * chained with `.then` or a function that returns a promise without awaiting it; the report says where
 * each stack starts, and the chain is: [CLI to StartExecution over HTTP] + [to the engine's start] +
 * `LocalStepFunctions.start` (which chains the execution's run with `.then`: the stack is cut there)
 * + [the execution's run to the transport].
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { upgradeArgs } from '../scripts/upgrade-args';

interface Captured {
  name: string;
  stack: string[];
}

const DRAIN = /scontrol\b.*\bupdate\b.*State=DRAIN/i;
const self = fileURLToPath(import.meta.url);
const here = path.resolve(path.dirname(self), '..');
const treeFlag = process.argv.indexOf('--tree');
const tree = path.resolve(treeFlag > 0 ? process.argv[treeFlag + 1]! : here);

/** `rollout simulate` of DIR in a child process; resolves with the profile it wrote once it serves. */
async function startSite(workDir: string): Promise<{ profile: string; stop: () => void }> {
  const profile = path.join(workDir, 'profile.yaml');
  const args = ['bin/run-ts.js', 'cli/main.ts', 'simulate', '--site', 'examples/sites/rolling-upgrade-64.yaml', '--transport', 'ssm', '--profile-out', profile];
  const child = spawn(process.execPath, args, { cwd: tree, stdio: ['ignore', 'pipe', 'inherit'] });
  const firstLine = await new Promise<string | undefined>((resolve) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', () => resolve(undefined));
  });
  if (firstLine === undefined) throw new Error(`rollout simulate ended before serving (in ${tree})`);
  return { profile, stop: () => child.kill('SIGTERM') };
}

/** The tree's own frames (not node_modules, not node:internal, not this script), paths relative to it. */
function projectFrames(stack: readonly string[]): string[] {
  return stack
    .filter((line) => line.includes(tree) && !line.includes('/node_modules/') && !line.includes(self))
    .map((line) => line.replaceAll(`file://${tree}/`, '').replaceAll(`${tree}/`, ''));
}

const fileOf = (frame: string): string => /([^ (]+\.ts)(?::\d+:\d+)?\)?$/.exec(frame)?.[1] ?? frame;

async function measure(): Promise<void> {
  Error.stackTraceLimit = Infinity;
  const load = (file: string) => import(pathToFileURL(path.join(tree, file)).href);
  const { SsmTransport } = (await load('adapters/site/commands/ssm-transport.ts')) as {
    SsmTransport: { prototype: { run: (script: string, ...rest: unknown[]) => unknown } };
  };
  const { LocalStepFunctions } = (await load('local/local-step-functions.ts')) as {
    LocalStepFunctions: { prototype: { start: (arn: string, ...rest: unknown[]) => unknown } };
  };
  // The SFN client as the tree resolves it (one module instance with the CLI's).
  const sfnModule = createRequire(path.join(tree, 'package.json')).resolve('@aws-sdk/client-sfn');
  const { SFNClient } = (await import(pathToFileURL(sfnModule).href)) as {
    SFNClient: { prototype: { send: (command: object, ...rest: unknown[]) => unknown } };
  };

  const captured = new Map<string, Captured>();
  const capture = (name: string) => {
    if (!captured.has(name))
      captured.set(name, {
        name,
        stack: (new Error(name).stack ?? '')
          .split('\n')
          .slice(1)
          .map((line) => line.trim()),
      });
  };
  const served = new Map<string, number>();
  const sdkCommands = new Map<string, number>();
  const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

  const run = SsmTransport.prototype.run;
  SsmTransport.prototype.run = function (this: unknown, script: string, ...rest: unknown[]) {
    if (DRAIN.test(script)) capture('drain');
    return run.call(this, script, ...rest);
  };
  const start = LocalStepFunctions.prototype.start;
  LocalStepFunctions.prototype.start = function (this: unknown, arn: string, ...rest: unknown[]) {
    if (arn.includes('RollingUpgrade')) capture('engineStart');
    return start.call(this, arn, ...rest);
  };
  const send = SFNClient.prototype.send;
  SFNClient.prototype.send = function (this: unknown, command: object, ...rest: unknown[]) {
    count(sdkCommands, command.constructor.name);
    return send.call(this, command, ...rest);
  };
  const request = http.request;
  http.request = function (this: unknown, ...args: unknown[]) {
    const options = (typeof args[0] === 'object' && !(args[0] instanceof URL) ? args[0] : args[1]) as { headers?: Record<string, unknown> } | undefined;
    if (options?.headers?.['x-amz-target'] === 'AWSStepFunctions.StartExecution') capture('httpStartExecution');
    return (request as (...a: unknown[]) => http.ClientRequest).apply(this, args);
  } as typeof http.request;
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]) {
    if (event === 'request') {
      const incoming = args[0] as http.IncomingMessage;
      count(served, String(incoming.headers['x-amz-target'] ?? `${incoming.method} ${incoming.url?.replace(/\?.*/, '')}`));
    }
    return (emit as (event: string | symbol, ...rest: unknown[]) => boolean).call(this, event, ...args);
  } as typeof http.Server.prototype.emit;

  const workDir = mkdtempSync(path.join(tmpdir(), 'cli-hops-'));
  const site = await startSite(workDir);
  try {
    process.argv = [process.argv[0]!, path.join(tree, 'cli/main.ts'), ...upgradeArgs({ siteConfig: site.profile, mode: 'window', json: true })];
    // The CLI's --json session goes to stdout: kept out of the report.
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      await load('cli/main.ts');
    } finally {
      process.stdout.write = write;
    }
  } finally {
    site.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
  process.stdout.write(`${report(tree, captured, served, sdkCommands)}\n`);
}

function report(treeDir: string, captured: Map<string, Captured>, served: Map<string, number>, sdkCommands: Map<string, number>): string {
  const lines = [`== cli hops: rollout upgrade --mode window to the first scontrol drain, tree ${treeDir} (exit ${process.exitCode ?? 0})`];
  const chain: string[] = [];
  const segments = [
    ['httpStartExecution', 'the CLI to StartExecution over HTTP'],
    ['engineStart', 'to the engine starting RollingUpgrade'],
    ['drain', "the execution's run to the transport"],
  ] as const;
  for (const [name, what] of segments) {
    const found = captured.get(name);
    if (!found) {
      lines.push(`-- ${what}: not reached`);
      continue;
    }
    const frames = projectFrames(found.stack);
    const library = found.stack.filter((line) => line.includes('/node_modules/')).length;
    lines.push(`-- ${what}: ${frames.length} project frames in ${new Set(frames.map(fileOf)).size} files, ${library} node_modules frames; the stack starts at`);
    lines.push(`   ${found.stack.at(-1)}`, ...frames.map((frame) => `   ${frame}`));
    chain.push(...frames);
    if (name !== 'engineStart') continue;
    // The wrapped start: it chains the execution's run with .then, which cuts the stack.
    lines.push('   + at LocalStepFunctions.start (local/local-step-functions.ts): the run is chained with .then; the stack is cut here');
    chain.push('at LocalStepFunctions.start (local/local-step-functions.ts)');
  }
  lines.push(`-- the chain: ${chain.length} project frames in ${new Set(chain.map(fileOf)).size} files`);
  const tally = (map: Map<string, number>) => [...map].map(([key, n]) => `${key} ${n}`).join(', ') || 'none';
  lines.push(
    `-- loopback HTTP: StartExecution over HTTP ${captured.has('httpStartExecution') ? 'yes' : 'no'}; requests served in this process: ${tally(served)}`,
  );
  lines.push(`-- SFN SDK commands sent: ${tally(sdkCommands)}`);
  return lines.join('\n');
}

await measure();
