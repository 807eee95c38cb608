import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { acceptedInvocation, type Invocation, type InvocationStatus } from './head-node';

export interface LocalSsmAgentOptions {
  /** The instance ids this machine answers to, as managed instances do. */
  instanceIds: readonly string[];
  /** The environment the commands run in (the agent's: e.g. SLURM_CONF for a test cluster). Default: this process's. */
  env?: NodeJS.ProcessEnv;
}

interface Running {
  invocation: Invocation;
  child?: ChildProcess;
  /** Set once the command ended (or was stopped at its executionTimeout). */
  ended?: InvocationStatus;
}

/**
 * An SSM agent stand-in: runs `AWS-RunShellScript` commands on this machine, as the agent does on a
 * managed instance (aws/amazon-ssm-agent agent/plugins/runscript/runshellscript.go: the commands,
 * one a line, are written to `_script.sh` in the command's own folder and run with `sh -c <file>`;
 * agent/plugins/runscript/runscript.go: the exit code is the ResponseCode, past executionTimeout
 * the process is killed and the invocation is TimedOut). Its clock is the machine's: a real head
 * node's commands take the time they take. What the route answers (GetCommandInvocation's output
 * limits) is the route's, alike for this agent and the simulated head node.
 */
export class LocalSsmAgent {
  private readonly ids: ReadonlySet<string>;
  private readonly runs = new Map<string, Running>();
  private readonly workDir = mkdtempSync(path.join(tmpdir(), 'rollout-ssm-agent-'));
  private nextId = 1;
  /** Every command run, in order: what a test asserts reached the machine. */
  readonly commandLog: Invocation[] = [];

  constructor(private readonly options: LocalSsmAgentOptions) {
    this.ids = new Set(options.instanceIds);
  }

  owns(instanceId: string): boolean {
    return this.ids.has(instanceId);
  }

  /** SendCommand for one instance: the script starts now; GetCommandInvocation shows it InProgress until it ends. */
  send(instanceId: string, commands: readonly string[], executionTimeoutSeconds: number, comment?: string): Invocation {
    const now = Date.now();
    const commandId = `${String(this.nextId++).padStart(8, '0')}-0000-4000-8000-00000000a9e7`;
    const invocation = acceptedInvocation({ commandId, instanceId, commands, executionTimeoutSeconds, comment, now, running: true });
    const running: Running = { invocation };
    this.runs.set(commandId, running);
    this.commandLog.push(invocation);

    const dir = path.join(this.workDir, commandId);
    mkdirSync(dir, { recursive: true });
    const script = path.join(dir, '_script.sh');
    writeFileSync(script, `${invocation.commandLine}\n`, { mode: 0o700 });
    const child = spawn('sh', ['-c', script], { cwd: dir, env: this.options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    running.child = child;
    child.stdout!.on('data', (chunk: Buffer) => (invocation.stdout += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (invocation.stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      running.ended = 'TimedOut';
      killGroup(child);
    }, executionTimeoutSeconds * 1000);
    timer.unref();
    child.on('error', (err) => {
      clearTimeout(timer);
      invocation.stderr += String(err);
      invocation.exitCode = 127;
      invocation.doneAt = Date.now();
      running.ended ??= 'Failed';
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      invocation.exitCode = code ?? -1;
      invocation.doneAt = Date.now();
      running.ended ??= code === 0 ? 'Success' : 'Failed';
      running.child = undefined;
    });
    return invocation;
  }

  /** GetCommandInvocation: InProgress until the script ended. */
  get(commandId: string, instanceId: string): { invocation: Invocation; status: InvocationStatus } | undefined {
    const running = this.runs.get(commandId);
    if (!running || running.invocation.instanceId !== instanceId) return undefined;
    running.invocation.polls++;
    return { invocation: running.invocation, status: this.peek(running.invocation) };
  }

  peek(invocation: Invocation): InvocationStatus {
    return this.runs.get(invocation.commandId)?.ended ?? 'InProgress';
  }

  list(commandId?: string): Invocation[] {
    return [...this.runs.values()].map((r) => r.invocation).filter((i) => commandId === undefined || i.commandId === commandId);
  }

  /** Stops what still runs and removes the command folders. */
  close(): void {
    for (const running of this.runs.values()) if (running.child) killGroup(running.child);
    rmSync(this.workDir, { recursive: true, force: true });
  }
}

function killGroup(child: ChildProcess): void {
  try {
    // The script's own children too (detached: the group is the script's).
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
