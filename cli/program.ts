import { Argument, Command, CommanderError } from 'commander';
import packageJson from '../package.json';
import { InvalidInputError, RolloutError, describeError } from '../core/errors';
import { registerPlanCommands } from './commands/plan';
import { registerRelayCommands } from './commands/relay';
import { registerReportCommand } from './commands/report';
import { registerDeployCommand } from './commands/deploy';
import { registerEnvCommands } from './commands/env';
import { registerEventsCommand } from './commands/events';
import { registerScheduleCommands } from './commands/schedule';
import { registerServeCommand } from './commands/serve';
import { registerSessionCommands } from './commands/session';
import { registerSimulateCommand } from './commands/simulate';
import { registerUpgradeCommand } from './commands/upgrade';
import { DataDirDamagedError } from '../local/errors';
import { describeCommand } from './command-spec';
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from './completion';
import { CliError } from './errors';
import { oneLineParseErrors } from './parse-errors';
import { ExitCode } from './exit-codes';

/** The `rollout` command tree, fresh for each run (commander keeps parsed options on it). */
export function rolloutProgram(): Command {
  const program = new Command('rollout')
    .description('Rolling upgrades and group deployments of bare-metal fleets, as Step Functions workflows')
    .version(packageJson.version)
    .option('--debug', 'show the stack trace of an error (for a bug report)')
    .exitOverride();
  registerUpgradeCommand(program);
  registerDeployCommand(program);
  registerSessionCommands(program);
  registerPlanCommands(program);
  registerReportCommand(program);
  registerSimulateCommand(program);
  registerServeCommand(program);
  registerEnvCommands(program);
  registerScheduleCommands(program);
  registerEventsCommand(program);
  registerRelayCommands(program);
  program
    .command('completion')
    .description('Print the shell completion script for bash or zsh, e.g. `source <(rollout completion bash)` in ~/.bashrc')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(COMPLETION_SHELLS))
    .action((shell: CompletionShell) => void process.stdout.write(completionScript(shell, describeCommand(program))));
  return oneLineParseErrors(program);
}

/**
 * Runs `rollout ARGS` (the arguments after the program name) and returns its exit code; errors are
 * reported on stderr. The bin runs it once per process; tests run it in-process.
 */
export async function runRollout(args: readonly string[]): Promise<number> {
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    await rolloutProgram().parseAsync([...args], { from: 'user' });
    // Commands that end with a status other than 0 set it as they finish (their summary is out by then).
    return Number(process.exitCode ?? ExitCode.completed);
  } catch (err) {
    return reportError(err, args.includes('--debug'));
  } finally {
    process.exitCode = before;
  }
}

/**
 * Reports an error on stderr and returns the exit status: one line naming the problem, never a stack
 * trace (a stack is for a bug report: `--debug` adds it). Ours (RolloutError) say what to do; anything
 * else is named as unexpected. Also the bin's last resort for an error no command caught.
 */
export function reportError(err: unknown, debug: boolean): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : ExitCode.invalidInput;
  const expected = err instanceof RolloutError;
  process.stderr.write(`error: ${expected ? err.message : `${errorLine(err)}${debug ? '' : ' (unexpected: --debug shows the stack trace)'}`}\n`);
  const stack = (err as { stack?: unknown } | null)?.stack;
  if (debug && typeof stack === 'string') process.stderr.write(`${stack}\n`);
  if (err instanceof InvalidInputError || err instanceof DataDirDamagedError) return ExitCode.invalidInput;
  if (err instanceof CliError) return err.exitCode;
  return ExitCode.notCompleted;
}

/** An unexpected error as one line: its name when it says something, its message, and its cause (fetch's "fetch failed" says nothing alone). */
function errorLine(err: unknown): string {
  const { name, message, cause } = (err ?? {}) as { name?: unknown; message?: unknown; cause?: unknown };
  if (typeof message !== 'string') return String(err);
  const why = cause === undefined ? '' : describeError(cause);
  const line = `${typeof name === 'string' && name !== 'Error' ? `${name}: ` : ''}${message}${why && !message.includes(why) ? `: ${why}` : ''}`.replace(
    /\s*\n\s*/g,
    ' ',
  );
  return line.length > 500 ? `${line.slice(0, 500)}...` : line;
}
