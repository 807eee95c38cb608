import type { ArgumentSpec, CommandSpec, OptionSpec } from '../../cli/command-spec';
import { EXIT_CODE_MEANINGS, ExitCode } from '../../cli/exit-codes';
import { anchor, code, document, generatedNotice, table } from './markdown';

/**
 * docs/reference/cli.md: every command of `rollout` with its usage, arguments and options, from the
 * command tree as data (cli/command-spec.ts) taken from the live program; and the exit statuses.
 */
export function cliReference(program: CommandSpec): { markdown: string; undescribed: string[]; commands: number; options: number } {
  const commands: { path: string[]; spec: CommandSpec }[] = [];
  const walk = (spec: CommandSpec, path: string[]) => {
    commands.push({ path, spec });
    for (const sub of spec.commands) walk(sub, [...path, sub.name]);
  };
  walk(program, [program.name]);
  const undescribed: string[] = [];
  const blocks = [
    generatedNotice('the `rollout` program (cli/program.ts, described by cli/command-spec.ts) and cli/exit-codes.ts'),
    '# `rollout` command reference',
    `Every command and option of \`rollout\`, as \`rollout ... --help\` gives them. Every command also takes ${code('-h, --help')}; ${code('rollout --version')} prints the version.`,
    '## Commands',
    commands.map(({ path }) => `${'  '.repeat(path.length - 1)}- [${code(path.join(' '))}](#${anchor(path.join(' '))})`).join('\n'),
  ];
  let options = 0;
  for (const { path, spec } of commands) {
    const shown = spec.options.filter((option) => !option.hidden);
    options += shown.length;
    blocks.push(commandMarkdown(path, spec, shown));
    if (spec.description.trim() === '') undescribed.push(`${path.join(' ')} (the command)`);
    for (const argument of spec.arguments) if (argument.description.trim() === '') undescribed.push(`${path.join(' ')} <${argument.name}>`);
    for (const option of shown) if (option.description.trim() === '') undescribed.push(`${path.join(' ')} ${option.flags}`);
  }
  blocks.push(exitCodes());
  return { markdown: document(blocks), undescribed, commands: commands.length, options };
}

function commandMarkdown(path: string[], spec: CommandSpec, options: OptionSpec[]): string {
  const blocks = [`## ${path.join(' ')}`, spec.description, `Usage: ${code(usage(path, spec))}`];
  if (spec.aliases.length > 0) blocks.push(`Aliases: ${spec.aliases.map((alias) => code(alias)).join(', ')}`);
  if (spec.commands.length > 0) {
    blocks.push(`Commands: ${spec.commands.map((sub) => `[${code(sub.name)}](#${anchor([...path, sub.name].join(' '))})`).join(', ')}`);
  }
  if (spec.arguments.length > 0) {
    blocks.push(
      table(
        ['Argument', 'Required', 'Description', 'Values'],
        spec.arguments.map((argument) => [code(argumentUsage(argument)), argument.required ? 'yes' : 'no', argument.description, choices(argument.choices)]),
      ),
    );
  }
  if (options.length > 0) {
    blocks.push(
      table(
        ['Option', 'Description', 'Default', 'Values', 'Required'],
        options.map((option) => [code(option.flags), option.description, defaultOf(option), values(option), option.mandatory ? 'yes' : 'no']),
      ),
    );
  }
  return blocks.join('\n\n');
}

function usage(path: string[], spec: CommandSpec): string {
  const words = [...path];
  if (spec.options.some((option) => !option.hidden) || path.length > 1) words.push('[options]');
  if (spec.commands.length > 0) words.push('<command>');
  words.push(...spec.arguments.map(argumentUsage));
  return words.join(' ');
}

function argumentUsage(argument: ArgumentSpec): string {
  const name = argument.variadic ? `${argument.name}...` : argument.name;
  return argument.required ? `<${name}>` : `[${name}]`;
}

function defaultOf(option: OptionSpec): string {
  if (option.defaultValueDescription !== undefined) return option.defaultValueDescription;
  if (option.defaultValue === undefined) return '';
  if (Array.isArray(option.defaultValue) && option.defaultValue.length === 0) return '';
  return code(Array.isArray(option.defaultValue) ? option.defaultValue.join(',') : String(option.defaultValue));
}

function choices(list: readonly string[] | undefined): string {
  return list && list.length > 0 ? list.map((value) => code(value)).join(', ') : '';
}

/** The values the parser checks (choices), or those shell completion offers for an option the command checks itself. */
function values(option: OptionSpec): string {
  return choices(option.choices ?? option.values);
}

function exitCodes(): string {
  const rows = (Object.keys(ExitCode) as (keyof typeof ExitCode)[]).map((name) => [code(String(ExitCode[name])), code(name), EXIT_CODE_MEANINGS[name]]);
  return ['## Exit statuses', 'Every command ends with one of these (cli/exit-codes.ts).', table(['Status', 'Name', 'Meaning'], rows)].join('\n\n');
}
