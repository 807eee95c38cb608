/**
 * Strict patterns for every name that reaches a command line or a URL: node names, group labels,
 * boot templates / images, and reasons. Checked before anything is sent, so a hostile or mistyped
 * value (`; rm -rf /`, `$(id)`, `--help`, `../`) fails with an error naming the field and value
 * instead of reaching a shell. Quoting (adapters/site/commands/shell-quote.ts) is the second wall.
 */

import { InvalidInputError } from '../errors';

export type NameKind = 'node name' | 'group label' | 'boot template' | 'reason' | 'hostlist';

/** A name that must not reach a command or URL. Its `name` stays InvalidInputError so Catch rules match it. */
export class InvalidNameError extends InvalidInputError {
  constructor(
    readonly kind: NameKind,
    readonly field: string,
    readonly value: string,
    detail: string,
  ) {
    super(kind, [{ field, message: `${JSON.stringify(value)} ${detail}` }]);
  }
}

/**
 * Slurm node names, xnames (x3000c0s1b0n0) and hostnames: ASCII letters and digits first, then
 * letters, digits, `-`, `_`, `.`; at most 64 characters (HOST_NAME_MAX). The first character
 * being alphanumeric rules out option-like (`-x`), hidden and relative (`.`, `..`) names.
 */
const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** HSM group labels and Slurm partition / feature names: same alphabet, up to 128 characters, and `:` / `=` for `rack=x3000`. */
const LABEL = /^[A-Za-z0-9][A-Za-z0-9._:=-]{0,127}$/;
/** Boot templates, Warewulf images / containers, xCAT osimages: also `/` for `repo/image`, never `..` as a part. */
const TEMPLATE = /^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,254}$/;
/** Reasons: printable ASCII words; none of the characters a shell gives meaning to, even inside quotes. */
const REASON = /^[A-Za-z0-9][A-Za-z0-9 ._,:=+@/()-]{0,199}$/;

function check(kind: NameKind, pattern: RegExp, rule: string, value: unknown, field: string): string {
  if (typeof value !== 'string') throw new InvalidNameError(kind, field, String(value), 'is not a string');
  if (!pattern.test(value)) throw new InvalidNameError(kind, field, value, `is not a valid ${kind}: ${rule}`);
  if (kind !== 'reason' && value.split('/').some((part) => part === '..' || part === '.')) throw new InvalidNameError(kind, field, value, `is not a valid ${kind}: '..' is not allowed`);
  return value;
}

export function validNodeName(value: unknown, field = 'node'): string {
  return check('node name', NODE_NAME, 'letters, digits, `.`, `_`, `-`, starting with a letter or digit, at most 64 characters', value, field);
}

export function validLabel(value: unknown, field = 'label'): string {
  return check('group label', LABEL, 'letters, digits, `.`, `_`, `-`, `:`, `=`, starting with a letter or digit, at most 128 characters', value, field);
}

export function validTemplate(value: unknown, field = 'template'): string {
  return check('boot template', TEMPLATE, 'letters, digits, `.`, `_`, `-`, `:`, `/`, `+`, starting with a letter or digit, at most 255 characters', value, field);
}

export function validReason(value: unknown, field = 'reason'): string {
  return check('reason', REASON, 'printable words (letters, digits, space and . _ , : = + @ / ( ) -), starting with a letter or digit, at most 200 characters', value, field);
}

/** Every node name checked, the first bad one named by its index (`nodes[3]`). */
export function validNodeNames(values: readonly unknown[], field = 'nodes'): string[] {
  return values.map((v, i) => validNodeName(v, `${field}[${i}]`));
}
