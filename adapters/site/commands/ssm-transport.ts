import {
  GetCommandInvocationCommand,
  ListCommandInvocationsCommand,
  SSMClient,
  SendCommandCommand,
  type GetCommandInvocationCommandOutput,
  type SSMClientConfig,
} from '@aws-sdk/client-ssm';
import { describeError } from '../../../core/errors';
import { readSsmStdout, SSM_STDOUT_BYTES } from '../../../core/site/ssm-output';
import { CommandTransportError, type CommandResult, type CommandTransport } from '../../../ports/command-transport';

/** GetCommandInvocation's StandardOutputContent holds at most this many bytes, the marker included (core/site/ssm-output.ts). */
export const SSM_OUTPUT_LIMIT = SSM_STDOUT_BYTES;

export interface SsmTransportOptions {
  /**
   * The head node(s) with scontrol, as SSM managed instances. Commands go to the first one; when SSM
   * refuses it (InvalidInstanceId: not managed, offline), the next one is tried and kept from then on.
   * List the primary head node first and its backup after it.
   */
  instanceIds: readonly string[];
  region?: string;
  /** Override for the simulator (`rollout simulate` prints it) or a VPC endpoint. */
  endpoint?: string;
  credentials?: SSMClientConfig['credentials'];
  /** Or a client built elsewhere (then region/endpoint/credentials are ignored). */
  client?: SSMClient;
  /** SSM's executionTimeout per command (it runs on the site's clock, on the instance); default 600 s. */
  timeoutSeconds?: number;
  /**
   * How long one SSM API call (SendCommand, GetCommandInvocation, ListCommandInvocations) may take in
   * all, the SDK's own retries included, before it is given up with a CommandTransportError saying so:
   * default 10 s, as the HTTP connectors'. An endpoint that never answers costs this much, not the
   * Lambda's (or the Task's) 15 minutes.
   */
  requestTimeoutMs?: number;
  /** How long a connection to the SSM endpoint may take to open; default 3 s (within requestTimeoutMs). */
  connectionTimeoutMs?: number;
  /** First and largest wait between GetCommandInvocation polls; default 200 ms and 5 s. */
  pollIntervalMs?: number;
  maxPollIntervalMs?: number;
  /** Waits; injectable so tests and the simulator need not sleep. */
  sleep?: (ms: number) => Promise<void>;
  /** SSM's status-change notifications of these commands reach the control plane (CommandTransport.notifiesCommandEnd). */
  notifiesCommandEnd?: boolean;
}

/** Counts of what went over the wire: what `npm run bench -- --only=ssm` reports. */
export interface SsmTransportStats {
  sendCommand: number;
  getCommandInvocation: number;
  listCommandInvocations: number;
  outputBytes: number;
}

/** `since` is on the caller's clock, AWS lists by its own: look this much earlier (a tag names one action, so a wider window finds nothing else). */
const CLOCK_SKEW_MS = 5 * 60_000;
const TERMINAL = new Set(['Success', 'Failed', 'TimedOut', 'Cancelled']);
/** Retries of InvocationDoesNotExist right after SendCommand and of throttling, each. */
const MAX_RETRIES = 8;
/** An SSM API call's deadline, as the HTTP connectors' (adapters/site/http-json-client.ts DEFAULT_TIMEOUT_MS). */
export const DEFAULT_SSM_REQUEST_TIMEOUT_MS = 10_000;
const DEFAULT_SSM_CONNECTION_TIMEOUT_MS = 3_000;

/** Runs commands on a head node through SSM Run Command (AWS-RunShellScript) and polls their result. */
export class SsmTransport implements CommandTransport {
  readonly stats: SsmTransportStats = { sendCommand: 0, getCommandInvocation: 0, listCommandInvocations: 0, outputBytes: 0 };
  private readonly client: SSMClient;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly requestTimeoutMs: number;
  private instance = 0;
  readonly notifiesCommandEnd: boolean;

  constructor(private readonly options: SsmTransportOptions) {
    this.notifiesCommandEnd = options.notifiesCommandEnd ?? false;
    if (options.instanceIds.length === 0) throw new Error('SsmTransport needs at least one instance id');
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_SSM_REQUEST_TIMEOUT_MS;
    const connectionTimeout = Math.min(options.connectionTimeoutMs ?? DEFAULT_SSM_CONNECTION_TIMEOUT_MS, this.requestTimeoutMs);
    this.client =
      options.client ??
      new SSMClient({
        region: options.region,
        endpoint: options.endpoint,
        credentials: options.credentials,
        // Each attempt bounded too (the SDK only warns about a slow answer unless told to throw).
        requestHandler: { connectionTimeout, requestTimeout: this.requestTimeoutMs, throwOnRequestTimeout: true },
      });
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /**
   * One SSM API call with its deadline: the whole call (the SDK's retries included) is aborted at
   * `requestTimeoutMs`, and the error says which call timed out after how long.
   */
  private async call<Output>(
    what: string,
    send: (options: { abortSignal: AbortSignal }) => Promise<Output>,
    details: Omit<CommandTransportError['details'], 'transport'> = {},
  ): Promise<Output> {
    const deadline = AbortSignal.timeout(this.requestTimeoutMs);
    try {
      return await send({ abortSignal: deadline });
    } catch (err) {
      const name = errorName(err);
      if (deadline.aborted || name === 'TimeoutError' || name === 'AbortError') {
        throw new CommandTransportError(
          `SSM ${what} timed out after ${this.requestTimeoutMs} ms: the SSM endpoint did not answer`,
          { transport: 'ssm', ...details, timedOut: true },
          { cause: err },
        );
      }
      throw err;
    }
  }

  async run(script: string, { timeoutSeconds }: { timeoutSeconds?: number } = {}): Promise<CommandResult> {
    const { commandId, instanceId } = await this.send(script, timeoutSeconds ?? this.options.timeoutSeconds ?? 600);
    return this.result(commandId, instanceId, await this.waitFor(commandId, instanceId));
  }

  /** Sends the command, `tag` as its Comment; the id is `<commandId>/<instanceId>`, all GetCommandInvocation needs. */
  async start(script: string, { timeoutSeconds, tag }: { timeoutSeconds?: number; tag?: string } = {}): Promise<string> {
    const { commandId, instanceId } = await this.send(script, timeoutSeconds ?? this.options.timeoutSeconds ?? 600, tag);
    return `${commandId}/${instanceId}`;
  }

  /** ListCommandInvocations since `since`, on our instances, for the one whose Comment is `tag`. */
  async findStarted(tag: string, since: number): Promise<string | undefined> {
    const instances = new Set(this.options.instanceIds);
    let nextToken: string | undefined;
    for (let attempt = 0; ; ) {
      let out;
      try {
        this.stats.listCommandInvocations++;
        const filter = {
          Filters: [{ key: 'InvokedAfter' as const, value: new Date(since - CLOCK_SKEW_MS).toISOString() }],
          MaxResults: 50,
          ...(nextToken ? { NextToken: nextToken } : {}),
        };
        out = await this.call('ListCommandInvocations', (options) => this.client.send(new ListCommandInvocationsCommand(filter), options));
      } catch (err) {
        if (err instanceof CommandTransportError) throw err;
        if (errorName(err) === 'ThrottlingException' && attempt++ < MAX_RETRIES) {
          await this.sleep(this.backoff(attempt));
          continue;
        }
        throw new CommandTransportError(`SSM ListCommandInvocations failed: ${errorName(err)}: ${describeError(err)}`, { transport: 'ssm' }, { cause: err });
      }
      const found = (out.CommandInvocations ?? []).find((i) => i.Comment === tag && i.InstanceId !== undefined && instances.has(i.InstanceId));
      if (found?.CommandId) return `${found.CommandId}/${found.InstanceId}`;
      nextToken = out.NextToken;
      if (!nextToken) return undefined;
    }
  }

  async poll(id: string): Promise<CommandResult | undefined> {
    const [commandId, instanceId] = id.split('/');
    if (!commandId || !instanceId) throw new CommandTransportError(`not an SSM invocation id: ${id}`, { transport: 'ssm' });
    let missing = 0;
    for (let attempt = 0; ; attempt++) {
      let out: GetCommandInvocationCommandOutput;
      try {
        this.stats.getCommandInvocation++;
        out = await this.call(
          `GetCommandInvocation ${commandId} on ${instanceId}`,
          (options) => this.client.send(new GetCommandInvocationCommand({ CommandId: commandId, InstanceId: instanceId }), options),
          { commandId, instanceId },
        );
      } catch (err) {
        // A call that timed out says so; the command ended TimedOut, Cancelled, ...: its own error, with its status, not a failed poll.
        if (err instanceof CommandTransportError) throw err;
        const name = errorName(err);
        // Right after SendCommand the invocation may not be visible yet: running, as far as we know.
        if (name === 'InvocationDoesNotExist' && ++missing <= 1) return undefined;
        if (name === 'ThrottlingException' && attempt < MAX_RETRIES) {
          await this.sleep(this.backoff(attempt));
          continue;
        }
        throw new CommandTransportError(
          `SSM GetCommandInvocation ${commandId} on ${instanceId} failed: ${name}: ${describeError(err)}`,
          { transport: 'ssm', commandId, instanceId },
          { cause: err },
        );
      }
      // Outside the try: a command that ended TimedOut or Cancelled is reported as such (its status in the error's details).
      return out.Status && TERMINAL.has(out.Status) ? this.result(commandId, instanceId, out) : undefined;
    }
  }

  private result(commandId: string, instanceId: string, invocation: GetCommandInvocationCommandOutput): CommandResult {
    const { stdout, truncated } = readSsmStdout(invocation.StandardOutputContent ?? '');
    const stderr = invocation.StandardErrorContent ?? '';
    this.stats.outputBytes += Buffer.byteLength(invocation.StandardOutputContent ?? '', 'utf8') + Buffer.byteLength(stderr, 'utf8');
    const details = { transport: 'ssm' as const, commandId, instanceId, status: invocation.Status, stderr };
    // AWS-RunShellScript reports a non-zero exit as Failed with the exit code: a result, not a transport failure.
    const exitCode = invocation.ResponseCode ?? -1;
    if (invocation.Status === 'Success' || (invocation.Status === 'Failed' && exitCode >= 0)) {
      return { exitCode, stdout, stderr, stdoutTruncated: truncated };
    }
    throw new CommandTransportError(
      `SSM command ${commandId} on ${instanceId} ended ${invocation.Status}${invocation.StatusDetails ? ` (${invocation.StatusDetails})` : ''}: ${stderr.trim().slice(0, 500) || 'no stderr'}`,
      details,
    );
  }

  private async send(script: string, timeoutSeconds: number, comment?: string): Promise<{ commandId: string; instanceId: string }> {
    for (let attempt = 0; ; attempt++) {
      const instanceId = this.options.instanceIds[this.instance]!;
      try {
        this.stats.sendCommand++;
        const request = new SendCommandCommand({
          DocumentName: 'AWS-RunShellScript',
          InstanceIds: [instanceId],
          Parameters: { commands: [script], executionTimeout: [String(timeoutSeconds)] },
          TimeoutSeconds: 60,
          ...(comment ? { Comment: comment } : {}),
        });
        const out = await this.call(`SendCommand to ${instanceId}`, (options) => this.client.send(request, options), { instanceId });
        const commandId = out.Command?.CommandId;
        if (!commandId) throw new CommandTransportError('SSM SendCommand answered no CommandId', { transport: 'ssm', instanceId });
        return { commandId, instanceId };
      } catch (err) {
        const name = errorName(err);
        if (name === 'InvalidInstanceId' && this.instance + 1 < this.options.instanceIds.length) {
          this.instance++;
          continue;
        }
        if (name === 'ThrottlingException' && attempt < MAX_RETRIES) {
          await this.sleep(this.backoff(attempt));
          continue;
        }
        if (err instanceof CommandTransportError) throw err;
        throw new CommandTransportError(
          `SSM SendCommand to ${instanceId} failed: ${name}: ${describeError(err)}`,
          { transport: 'ssm', instanceId },
          { cause: err },
        );
      }
    }
  }

  private async waitFor(commandId: string, instanceId: string): Promise<GetCommandInvocationCommandOutput> {
    let missing = 0;
    let throttled = 0;
    for (let attempt = 0; ; attempt++) {
      await this.sleep(this.backoff(attempt));
      try {
        this.stats.getCommandInvocation++;
        const out = await this.call(
          `GetCommandInvocation ${commandId} on ${instanceId}`,
          (options) => this.client.send(new GetCommandInvocationCommand({ CommandId: commandId, InstanceId: instanceId }), options),
          { commandId, instanceId },
        );
        if (out.Status && TERMINAL.has(out.Status)) return out;
      } catch (err) {
        if (err instanceof CommandTransportError) throw err;
        const name = errorName(err);
        // Right after SendCommand the invocation may not be visible yet.
        if (name === 'InvocationDoesNotExist' && ++missing <= MAX_RETRIES) continue;
        if (name === 'ThrottlingException' && ++throttled <= MAX_RETRIES) continue;
        throw new CommandTransportError(
          `SSM GetCommandInvocation ${commandId} on ${instanceId} failed: ${name}: ${describeError(err)}`,
          { transport: 'ssm', commandId, instanceId },
          { cause: err },
        );
      }
    }
  }

  private backoff(attempt: number): number {
    const first = this.options.pollIntervalMs ?? 200;
    return Math.min(first * 2 ** Math.min(attempt, 10), this.options.maxPollIntervalMs ?? 5000);
  }
}

function errorName(err: unknown): string {
  return (err as { name?: unknown } | null)?.name && typeof (err as { name: unknown }).name === 'string' ? (err as { name: string }).name : 'Error';
}
