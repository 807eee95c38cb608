import { Argument, Command, Option } from 'commander';

/**
 * The `rollout` command tree as data: names, descriptions, arguments and options, without the
 * actions. The build writes it beside the compiled CLI (dist/cli-spec.json), so that `--help`,
 * `--version`, `completion` and every parse error are answered without loading the commands' code;
 * shell completion is generated from it. It is taken from the live program, so it cannot drift.
 */
export interface CommandSpec {
  name: string;
  description: string;
  version?: string;
  aliases: string[];
  arguments: ArgumentSpec[];
  options: OptionSpec[];
  commands: CommandSpec[];
}

export interface ArgumentSpec {
  name: string;
  description: string;
  required: boolean;
  variadic: boolean;
  choices?: string[];
}

export interface OptionSpec {
  flags: string;
  description: string;
  mandatory: boolean;
  hidden: boolean;
  /** JSON-safe defaults only (a function's default is left to the full program). */
  defaultValue?: string | number | boolean | string[];
  defaultValueDescription?: string;
  choices?: string[];
  /** Values shell completion offers for an option the command checks itself (offerValues); not checked by the parser. */
  values?: string[];
}

type VersionedCommand = Command & { _version?: string; _versionOptionName?: string };

const offered = new WeakMap<Option, readonly string[]>();

/**
 * The values shell completion offers for `flag` of `command`, for an option the command checks
 * itself (the request's schema, whose error names the field): commander's `choices` would check them
 * first, with its own message, so they are only described.
 */
export function offerValues(command: Command, flag: string, values: readonly string[]): Command {
  const option = command.options.find((candidate) => candidate.long === flag);
  if (!option) throw new Error(`${command.name()} has no option ${flag}`);
  offered.set(option, values);
  return command;
}

export function describeCommand(command: Command): CommandSpec {
  const version = (command as VersionedCommand)._version;
  const versionFlag = (command as VersionedCommand)._versionOptionName;
  return {
    name: command.name(),
    description: command.description(),
    ...(version !== undefined ? { version } : {}),
    aliases: command.aliases(),
    arguments: command.registeredArguments.map((argument) => ({
      name: argument.name(),
      description: argument.description,
      required: argument.required,
      variadic: argument.variadic,
      ...(argument.argChoices ? { choices: [...argument.argChoices] } : {}),
    })),
    options: command.options
      .filter((option) => option.attributeName() !== versionFlag)
      .map((option) => ({
        flags: option.flags,
        description: option.description,
        mandatory: option.mandatory,
        hidden: option.hidden,
        ...(isJsonDefault(option.defaultValue) ? { defaultValue: option.defaultValue } : {}),
        ...(option.defaultValueDescription !== undefined ? { defaultValueDescription: option.defaultValueDescription } : {}),
        ...(option.argChoices ? { choices: [...option.argChoices] } : {}),
        ...(offered.has(option) ? { values: [...offered.get(option)!] } : {}),
      })),
    commands: command.commands.map(describeCommand),
  };
}

/** A command tree that parses and helps as the described one does; its commands have no actions. */
export function commandFromSpec(spec: CommandSpec, command: Command = new Command(spec.name)): Command {
  command.description(spec.description);
  if (spec.version !== undefined) command.version(spec.version);
  if (spec.aliases.length > 0) command.aliases(spec.aliases);
  for (const argument of spec.arguments) {
    const name = argument.variadic ? `${argument.name}...` : argument.name;
    const made = new Argument(argument.required ? `<${name}>` : `[${name}]`, argument.description);
    command.addArgument(argument.choices ? made.choices(argument.choices) : made);
  }
  for (const option of spec.options) {
    const made = new Option(option.flags, option.description);
    if (option.defaultValue !== undefined) made.default(option.defaultValue, option.defaultValueDescription);
    if (option.choices) made.choices(option.choices);
    if (option.mandatory) made.makeOptionMandatory();
    if (option.hidden) made.hideHelp();
    command.addOption(made);
  }
  for (const sub of spec.commands) commandFromSpec(sub, command.command(sub.name));
  return command;
}

/** Every command of the tree with the words that name it (`['rollout', 'session', 'list']`). */
export function eachCommand(root: Command, visit: (command: Command, path: string[]) => void, path: string[] = []): void {
  const here = [...path, root.name()];
  visit(root, here);
  for (const child of root.commands) eachCommand(child, visit, here);
}

function isJsonDefault(value: unknown): value is OptionSpec['defaultValue'] {
  if (Array.isArray(value)) return value.every((item) => typeof item === 'string');
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}
