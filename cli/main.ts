import '../engine/polyfills';
import { Command, CommanderError } from 'commander';
import { InvalidInputError } from '../core/errors';
import { registerPlanCommands } from './commands/plan';
import { registerDeployCommand } from './commands/deploy';
import { registerServeCommand } from './commands/serve';
import { registerSessionCommands } from './commands/session';
import { registerSimulateCommand } from './commands/simulate';
import { registerUpgradeCommand } from './commands/upgrade';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';

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

try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.exitCode = reportError(err);
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
