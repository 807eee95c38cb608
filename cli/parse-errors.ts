import type { Command } from 'commander';
import { eachCommand } from './command-spec';

/**
 * Commander's parse errors (an unknown or missing option, a missing argument, an unknown command) as
 * one line that says where the rest is, instead of the error followed by the whole help.
 */
export function oneLineParseErrors(root: Command): Command {
  eachCommand(root, (command, path) => {
    command.showHelpAfterError(false).configureOutput({
      outputError: (text, write) => write(`${parseErrorLine(text)} (see '${path.join(' ')} --help')\n`),
    });
  });
  return root;
}

/** `error: unknown option '--sitee'\n(Did you mean --site?)` -> `error: unknown option '--sitee' (did you mean --site?)`. */
function parseErrorLine(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .join(' ')
    .replace('(Did you mean', '(did you mean');
}
