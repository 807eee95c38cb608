/**
 * Runs shell commands on the site's admin or head node (where scontrol, sinfo, wwctl or nodeset
 * live): locally, or through SSM Run Command. The caller builds the command with every argument
 * quoted (adapters/site/commands/shell-quote.ts); the transport runs it with /bin/sh.
 */

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** The transport cut stdout short (SSM keeps 24,000 bytes and appends `--output truncated--`, which the SSM transport removes): parse nothing from it. */
  stdoutTruncated: boolean;
}

/**
 * The transport could not run a command or see it finish (SSM Failed/TimedOut/Cancelled, spawn error, ...).
 * Declared with the port: a caller (the task-graph activity) recognises it without knowing the adapter.
 */
export class CommandTransportError extends Error {
  override name = 'CommandTransportError';
  constructor(
    message: string,
    readonly details: {
      transport: 'local' | 'ssm';
      commandId?: string;
      instanceId?: string;
      status?: string;
      stderr?: string /** The transport's own call got no answer in time (not the command's status). */;
      timedOut?: boolean;
    },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface CommandTransport {
  /**
   * The site delivers each command's end to the control plane as a site event of kind `command` (SSM Run Command's
   * invocation status-change notifications, through an EventBridge rule): a wait for a command started with a
   * session's tag (a node's health check) may then park until it, the result read once after. Absent: such waits poll.
   */
  readonly notifiesCommandEnd?: boolean;
  /** Runs one shell script; a non-zero exit is a result, not an error. Throws CommandTransportError when it cannot run or finish. */
  run(script: string, options?: { timeoutSeconds?: number }): Promise<CommandResult>;
  /**
   * Starts a long command (a provisioner action) without waiting: the returned id is what `poll`
   * takes. Over SSM the id survives this process (it is the command and instance id); locally it
   * names a child of this process.
   */
  start(script: string, options?: { timeoutSeconds?: number; tag?: string }): Promise<string>;
  /**
   * The id of a command started since `since` (epoch ms) with `tag` (at most 100 characters), if
   * any: how a retry learns that an earlier attempt did start its command (over SSM, the
   * command's Comment, found with ListCommandInvocations; locally, only in this process).
   */
  findStarted(tag: string, since: number): Promise<string | undefined>;
  /** One look at a started command: undefined while it runs. Throws CommandTransportError for an unknown id or a command that could not finish. */
  poll(id: string): Promise<CommandResult | undefined>;
}
