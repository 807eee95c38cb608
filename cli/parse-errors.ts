import type { Command, Option } from 'commander';
import { eachCommand } from './command-spec';

/** Commander's hook for a missing mandatory option: it calls it once per option, and the first call throws. */
type MissingOptionHook = { missingMandatoryOptionValue(option: Option): void };

/**
 * Commander's parse errors (an unknown or missing option, a missing argument, an unknown command) as
 * one line that says where the rest is, instead of the error followed by the whole help.
 */
export function oneLineParseErrors(root: Command): Command {
  eachCommand(root, (command, path) => {
    command.showHelpAfterError(false).configureOutput({
      outputError: (text, write) => write(`${parseErrorLine(text)} (see '${path.join(' ')} --help')\n`),
    });
    // All the missing options in one message, not one per try (the hook is commander's own, replaced on this command only).
    (command as unknown as MissingOptionHook).missingMandatoryOptionValue = () =>
      command.error(missingOptionsLine(command), { code: 'commander.missingMandatoryOptionValue' });
  });
  return root;
}

/**
 * `error: required options '--starting-label <label>', '--template <id>' not specified`: every mandatory
 * option without a value, and, for a command that runs on a site, the site it needs (which commander
 * cannot require: one of several options, checked after the parse) when none of them was given.
 */
function missingOptionsLine(command: Command): string {
  const missing: string[] = [];
  const given = new Set<string>();
  for (let at: Command | null = command; at; at = at.parent) {
    for (const option of at.options) {
      if (at.getOptionValue(option.attributeName()) === undefined) {
        if (option.mandatory) missing.push(`'${option.flags}'`);
      } else if (option.long) given.add(option.long);
    }
  }
  const siteFlags = command.options
    .filter((option) => option.long && SITE_FLAGS.includes(option.long))
    .sort((a, b) => SITE_FLAGS.indexOf(a.long!) - SITE_FLAGS.indexOf(b.long!));
  const needsSite = siteFlags.some((option) => option.long === '--site') && siteFlags.some((option) => option.long === '--site-config');
  if (needsSite && !siteFlags.some((option) => given.has(option.long!))) {
    const flags = siteFlags.map((option) => `'${option.flags}'`);
    missing.push(`one of ${flags.slice(0, -1).join(', ')} or ${flags.at(-1)}`);
  }
  if (missing.length === 1) return `error: required option ${missing[0]} not specified`;
  return `error: required options ${missing.slice(0, -1).join(', ')} and ${missing.at(-1)} not specified`;
}

/** The options that name the site a command runs on: a simulated site, a profile, or a remote control plane that has its own. */
const SITE_FLAGS: readonly string[] = ['--site', '--site-config', '--endpoint', '--aws'];

/** `error: unknown option '--sitee'\n(Did you mean --site?)` -> `error: unknown option '--sitee' (did you mean --site?)`. */
function parseErrorLine(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .join(' ')
    .replace('(Did you mean', '(did you mean');
}
