import type { CommandSpec, OptionSpec } from './command-spec';

/** The shells `rollout completion SHELL` writes a script for. */
export const COMPLETION_SHELLS = ['bash', 'zsh'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

/**
 * A completion script for the command tree: subcommands, options, the choices of an option that has
 * them, files after an option that takes a file and directories after one that takes a directory.
 * Generated from the program's own description, so it never drifts from it.
 */
export function completionScript(shell: CompletionShell, root: CommandSpec): string {
  return shell === 'bash' ? bashScript(root) : zshScript(root);
}

interface Node {
  path: string;
  spec: CommandSpec;
}

function nodes(spec: CommandSpec, parent?: string): Node[] {
  const path = parent === undefined ? spec.name : `${parent} ${spec.name}`;
  return [{ path, spec }, ...spec.commands.flatMap((child) => nodes(child, path))];
}

interface Flag {
  names: string[];
  /** The value's placeholder (`file`, `dir`, `n`...), absent for a switch. */
  value?: string;
  choices?: string[];
  repeatable: boolean;
  description: string;
}

function flag(option: OptionSpec): Flag {
  const value = (/<([^>]+)>/.exec(option.flags) ?? /\[([^\]]+)\]/.exec(option.flags))?.[1];
  return {
    names: option.flags.split(/[ ,|]+/).filter((word) => word.startsWith('-')),
    ...(value !== undefined ? { value: value.replace(/\.\.\.$/, '') } : {}),
    ...(option.choices || option.values ? { choices: option.choices ?? option.values } : {}),
    repeatable: Array.isArray(option.defaultValue),
    description: option.description,
  };
}

const allFlags = (spec: CommandSpec): Flag[] => [
  ...spec.options.filter((option) => !option.hidden).map(flag),
  { names: ['-h', '--help'], repeatable: false, description: 'display help for command' },
  ...(spec.version !== undefined ? [{ names: ['-V', '--version'], repeatable: false, description: 'output the version number' }] : []),
];

/**
 * Ids are completed by asking `ROOT session list --ids` with the options of the line that say where the
 * sessions are (--data-dir, --endpoint, --aws ...): those `session list` takes, but its own filters.
 */
const ID_SOURCE = ['session', 'list'];
const ID_SOURCE_OWN = ['--kind', '--json', '--ids', '-h', '--help'];

function idSourceFlags(root: CommandSpec): { valued: string[]; switches: string[] } {
  let spec: CommandSpec | undefined = root;
  for (const name of ID_SOURCE) spec = spec?.commands.find((child) => child.name === name);
  const flags = spec ? allFlags(spec).filter((f) => !f.names.some((name) => ID_SOURCE_OWN.includes(name))) : [];
  return {
    valued: flags.filter((f) => f.value !== undefined).flatMap((f) => f.names),
    switches: flags.filter((f) => f.value === undefined).flatMap((f) => f.names),
  };
}

/** A command whose argument is a session id it reads from a data directory or a control plane. */
const takesId = (spec: CommandSpec) =>
  spec.arguments.some((argument) => argument.name === 'id') && spec.options.some((option) => /--data-dir|--endpoint/.test(option.flags));

const isDir = (value: string) => /^dir/.test(value);
const isFile = (value: string) => /file|path/.test(value);

/** A word as one single-quoted shell word. */
const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** A description cut to fit a completion menu. */
function brief(text: string): string {
  const first = text.split(/;\s| \(/)[0]!.trim();
  return first.length <= 70 ? first : `${first.slice(0, 67).replace(/\s+\S*$/, '')}...`;
}

function bashScript(root: CommandSpec): string {
  const all = nodes(root);
  const parents = all.filter((node) => node.path !== root.name).map((node) => `"${node.path}"`);
  const cases = all.map(({ path, spec }) => {
    const flags = allFlags(spec);
    const valued = flags.filter((f) => f.value !== undefined);
    const names = (pick: (f: Flag) => boolean) =>
      valued
        .filter(pick)
        .flatMap((f) => f.names)
        .join('|');
    const valueCases = [
      ...valued
        .filter((f) => f.choices)
        .map((f) => `        ${f.names.join('|')}) COMPREPLY=($(compgen -W ${quote(f.choices!.join(' '))} -- "$cur")); return ;;`),
      ...[
        [names((f) => !f.choices && isDir(f.value!)), 'compopt -o filenames; COMPREPLY=($(compgen -d -- "$cur")); '],
        [names((f) => !f.choices && !isDir(f.value!) && isFile(f.value!)), 'compopt -o filenames; COMPREPLY=($(compgen -f -- "$cur")); '],
        // A value no list can offer (a label, a count, a URL): nothing rather than the words of the command.
        [names((f) => !f.choices && !isDir(f.value!) && !isFile(f.value!)), ''],
      ]
        .filter(([words]) => words !== '')
        .map(([words, reply]) => `        ${words}) ${reply}return ;;`),
    ];
    const words = [...spec.commands.map((child) => child.name), ...flags.flatMap((f) => f.names)].join(' ');
    const ids = takesId(spec) ? `" $(_${root.name}_ids)"` : '';
    return [
      `    "${path}")`,
      ...(valueCases.length > 0 ? ['      case "$prev" in', ...valueCases, '      esac'] : []),
      `      COMPREPLY=($(compgen -W ${quote(words)}${ids} -- "$cur")) ;;`,
    ].join('\n');
  });
  const source = idSourceFlags(root);
  return `# bash completion for ${root.name}, generated by \`${root.name} completion bash\` from its command tree.
# Load it with: source <(${root.name} completion bash)   (or write it to a file your ~/.bashrc sources)
_${root.name}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmdpath="${root.name}" i
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "$cmdpath \${COMP_WORDS[i]}" in
      ${parents.join('|')}) cmdpath="$cmdpath \${COMP_WORDS[i]}" ;;
    esac
  done
  case "$cmdpath" in
${cases.join('\n')}
  esac
}
# The ids of the sessions the line names (--data-dir, --endpoint ...): nothing without one.
_${root.name}_ids() {
  local i args=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
      ${source.valued.join('|')}) args+=("\${COMP_WORDS[i]}" "\${COMP_WORDS[i+1]}") ;;
      ${source.switches.join('|')}) args+=("\${COMP_WORDS[i]}") ;;
    esac
  done
  ((\${#args[@]})) && ${root.name} ${ID_SOURCE.join(' ')} --ids "\${args[@]}" 2>/dev/null
}
complete -F _${root.name} ${root.name}
`;
}

/** A zsh `_arguments` spec piece: brackets and colons are special there. */
const zshText = (text: string) => text.replace(/\\/g, '\\\\').replace(/([[\]:])/g, '\\$1');

function zshScript(root: CommandSpec): string {
  const all = nodes(root);
  const parents = all.filter((node) => node.path !== root.name).map((node) => `"${node.path}"`);
  const cases = all.map(({ path, spec }) => {
    const specs = allFlags(spec).flatMap((f) => {
      const action =
        f.value === undefined
          ? ''
          : f.choices
            ? `:${f.value}:(${f.choices.join(' ')})`
            : isDir(f.value)
              ? `:${f.value}:_files -/`
              : isFile(f.value)
                ? `:${f.value}:_files`
                : `:${zshText(f.value)}: `;
      return f.names.map((name) => quote(`${f.repeatable ? '*' : ''}${name}[${zshText(brief(f.description))}]${action}`));
    });
    const lines = [`    "${path}")`];
    if (spec.commands.length > 0) {
      const items = spec.commands.map((child) => quote(`${child.name.replace(/:/g, '\\:')}:${brief(child.description)}`));
      lines.push(`      local -a subcommands=(${items.join(' ')})`);
      specs.push(quote('1: :{_describe command subcommands}'), quote('*:: :_default'));
    } else {
      spec.arguments.forEach((argument, index) => {
        const position = argument.variadic ? '*' : String(index + 1);
        const action = argument.choices ? `(${argument.choices.join(' ')})` : argument.name === 'id' && takesId(spec) ? `_${root.name}_ids` : ' ';
        specs.push(quote(`${position}:${zshText(argument.name)}:${action}`));
      });
    }
    lines.push(`      _arguments -S ${specs.join(' ')} ;;`);
    return lines.join('\n');
  });
  const source = idSourceFlags(root);
  return `#compdef ${root.name}
# zsh completion for ${root.name}, generated by \`${root.name} completion zsh\` from its command tree.
# Load it with: source <(${root.name} completion zsh)   (after compinit), or write it as _${root.name} into a directory of your $fpath
_${root.name}() {
  local cmdpath="${root.name}" depth=1 i
  for ((i = 2; i < CURRENT; i++)); do
    case "$cmdpath \${words[i]}" in
      ${parents.join('|')}) cmdpath="$cmdpath \${words[i]}"; depth=$i ;;
    esac
  done
  shift $((depth - 1)) words
  (( CURRENT -= depth - 1 ))
  case "$cmdpath" in
${cases.join('\n')}
  esac
}
# The ids of the sessions the line names (--data-dir, --endpoint ...): nothing without one.
_${root.name}_ids() {
  local i; local -a args ids
  for ((i = 1; i < CURRENT; i++)); do
    case "\${words[i]}" in
      ${source.valued.join('|')}) args+=("\${words[i]}" "\${words[i+1]}") ;;
      ${source.switches.join('|')}) args+=("\${words[i]}") ;;
    esac
  done
  (( \${#args} )) || return 1
  ids=(\${(f)"$(${root.name} ${ID_SOURCE.join(' ')} --ids "\${args[@]}" 2>/dev/null)"})
  compadd -a ids
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _${root.name} "$@"
else
  compdef _${root.name} ${root.name}
fi
`;
}
