/**
 * The compiled CLI's entry (dist/rollout.js): the command tree is read from the description the build
 * wrote beside it (dist/cli-spec.json), so that `--help`, `--version`, `completion` and a mistyped
 * option are answered in a fraction of a second; a command that runs loads the program (./main) and
 * is parsed again there, by the very program the description was taken from.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { commandFromSpec, eachCommand, type CommandSpec } from './command-spec';
import { completionScript, type CompletionShell } from './completion';
import { ExitCode } from './exit-codes';
import { oneLineParseErrors } from './parse-errors';
import { endQuietlyOnClosedPipe } from './quiet-pipe';

endQuietlyOnClosedPipe();
const spec = JSON.parse(readFileSync(new URL('./cli-spec.json', import.meta.url), 'utf8')) as CommandSpec;
const program = oneLineParseErrors(commandFromSpec(spec, new Command(spec.name).exitOverride()));
let reached: { path: string; args: unknown[] } | undefined;
eachCommand(program, (command, path) => {
  if (command.commands.length === 0) command.action((...args: unknown[]) => void (reached = { path: path.join(' '), args }));
});

try {
  await program.parseAsync(process.argv.slice(2), { from: 'user' });
  if (reached?.path === `${spec.name} completion`) process.stdout.write(completionScript(reached.args[0] as CompletionShell, spec));
  else if (reached) await import('./main');
} catch (err) {
  if (!(err instanceof CommanderError)) throw err;
  process.exitCode = err.exitCode === 0 ? ExitCode.completed : ExitCode.invalidInput;
}
