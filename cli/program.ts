import { Command, CommanderError } from 'commander';
import { InvalidInputError } from '../core/errors';
import { registerPlanCommands } from './commands/plan';
import { registerDeployCommand } from './commands/deploy';
import { registerEnvCommands } from './commands/env';
import { registerEventsCommand } from './commands/events';
import { registerScheduleCommands } from './commands/schedule';
import { registerServeCommand } from './commands/serve';
import { registerSessionCommands } from './commands/session';
import { registerSimulateCommand } from './commands/simulate';
import { registerUpgradeCommand } from './commands/upgrade';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';

/** The `rollout` command tree, fresh for each run (commander keeps parsed options on it). */
export function rolloutProgram(): Command {
  const program = new Command('rollout')
    .description('Rolling upgrades and group deployments of bare-metal fleets, as Step Functions workflows')
    .showHelpAfterError()
    .exitOverride();
  registerUpgradeCommand(program);
  registerDeployCommand(program);
  registerSessionCommands(program);
  registerPlanCommands(program);
  registerSimulateCommand(program);
  registerServeCommand(program);
  registerEnvCommands(program);
  registerScheduleCommands(program);
  registerEventsCommand(program);
  return program;
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
    return reportError(err);
  } finally {
    process.exitCode = before;
  }
}

function reportError(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : ExitCode.invalidInput;
  if (err instanceof InvalidInputError) {
    process.stderr.write(`error: ${err.message}\n`);
    return ExitCode.invalidInput;
  }
  if (err instanceof CliError) {
    process.stderr.write(`error: ${err.message}\n`);
    return err.exitCode;
  }
  process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return ExitCode.notCompleted;
}
