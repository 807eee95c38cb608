/**
 * Strict patterns for every name that reaches a command line or a URL: node names, group labels,
 * boot templates / images, and reasons. Checked before anything is sent, so a hostile or mistyped
 * value (`; rm -rf /`, `$(id)`, `--help`, `../`) fails with an error naming the field and value
 * instead of reaching a shell. Quoting (adapters/site/commands/shell-quote.ts) is the second wall.
 */

import { z } from 'zod';
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
export const NODE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const NODE_NAME_RULE = 'letters, digits, `.`, `_`, `-`, starting with a letter or digit, at most 64 characters';
/**
 * Group labels as any inventory may have them (Slurm partitions and features allow `=`): same
 * alphabet, up to 128 characters, and `:` / `=`. Rules out spaces, unicode, `/`, `,`, `.` and `..`.
 * HSM's own, narrower rule (`rack:x3000`, never `rack=x3000`) is the HSM connector's labelProblem.
 */
export const LABEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:=-]{0,127}$/;
export const LABEL_RULE = 'letters, digits, `.`, `_`, `-`, `:`, `=`, starting with a letter or digit, at most 128 characters';
/** Boot templates, Warewulf images / containers, xCAT osimages: also `/` for `repo/image`, never `..` as a part. */
const TEMPLATE = /^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,254}$/;
const TEMPLATE_RULE = 'letters, digits, `.`, `_`, `-`, `:`, `/`, `+`, starting with a letter or digit, at most 255 characters';
/** Reasons: printable ASCII words; none of the characters a shell gives meaning to, even inside quotes. */
const REASON = /^[A-Za-z0-9][A-Za-z0-9 ._,:=+@/()-]{0,199}$/;

function check(kind: NameKind, pattern: RegExp, rule: string, value: unknown, field: string): string {
  if (typeof value !== 'string') throw new InvalidNameError(kind, field, String(value), 'is not a string');
  if (!pattern.test(value)) throw new InvalidNameError(kind, field, value, `is not a valid ${kind}: ${rule}`);
  if (kind !== 'reason' && value.split('/').some((part) => part === '..' || part === '.'))
    throw new InvalidNameError(kind, field, value, `is not a valid ${kind}: '..' is not allowed`);
  return value;
}

export function validNodeName(value: unknown, field = 'node'): string {
  return check('node name', NODE_NAME_PATTERN, NODE_NAME_RULE, value, field);
}

export function validLabel(value: unknown, field = 'label'): string {
  return check('group label', LABEL_PATTERN, LABEL_RULE, value, field);
}

export function validTemplate(value: unknown, field = 'template'): string {
  return check('boot template', TEMPLATE, TEMPLATE_RULE, value, field);
}

export function validReason(value: unknown, field = 'reason'): string {
  return check(
    'reason',
    REASON,
    'printable words (letters, digits, space and . _ , : = + @ / ( ) -), starting with a letter or digit, at most 200 characters',
    value,
    field,
  );
}

/** Whether `value` may be sent as a reason (the non-throwing form of validReason). */
export function isValidReason(value: string): boolean {
  return REASON.test(value);
}

/** The longest reason read from Slurm that a run gives back (slurmctld sets any non-empty reason; this bounds the command line). */
export const SITE_REASON_MAX = 1024;
/** C0 and C1 control characters and DEL: a newline would split `scontrol -o show node`'s one line per node. */
const hasControl = (value: string): boolean =>
  [...value].some((c) => {
    const code = c.codePointAt(0)!;
    return code < 0x20 || (code >= 0x7f && code <= 0x9f);
  });
const SITE_REASON_RULE = `any printable text (no control characters or newlines), not blank, at most ${SITE_REASON_MAX} characters`;

/**
 * Why a reason Slurm itself holds (an admin's, read back from the site) cannot be given back as it
 * was set; undefined when it can. Slurm's update_node (src/slurmctld/node_mgr.c) sets any non-empty
 * reason, and the connectors quote it whole (shellQuote, scontrolReason, a JSON body), so `#`, quotes,
 * `$()`, backticks, `;` and non-ASCII travel byte for byte; only what the site's own listings cannot
 * carry back is refused. A reason from user input (flags, requests, task parameters) is held to
 * validReason's strict pattern instead.
 */
export function siteReasonProblem(value: string): string | undefined {
  if (value.trim() === '') return 'is blank';
  if (value.length > SITE_REASON_MAX) return `is longer than ${SITE_REASON_MAX} characters`;
  if (hasControl(value)) return 'holds a control character or a newline';
  return undefined;
}

/**
 * A reason that may reach a connector: one a run writes (its claims, failure reasons, the strict
 * pattern of user input, checked where the input enters) or an admin's given back as Slurm returned it.
 */
export function validSiteReason(value: unknown, field = 'reason'): string {
  if (typeof value !== 'string') throw new InvalidNameError('reason', field, String(value), 'is not a string');
  const problem = siteReasonProblem(value);
  if (problem !== undefined) throw new InvalidNameError('reason', field, value, `is not a valid reason: ${SITE_REASON_RULE}; it ${problem}`);
  return value;
}

/** Every node name checked, the first bad one named by its index (`nodes[3]`). */
export function validNodeNames(values: readonly unknown[], field = 'nodes'): string[] {
  return values.map((v, i) => validNodeName(v, `${field}[${i}]`));
}

/** A value shown in a message: quoted, and cut short, so a 10,000-character name does not flood the terminal. */
function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value);
}

/** zod: a string matching `pattern`, with messages naming `field` (a path prefix is added by the caller's schema). */
function patterned(kind: NameKind, pattern: RegExp, rule: string, field: string | undefined) {
  const subject = field ?? kind;
  return z.string({ error: (issue) => (issue.input === undefined ? `${subject} is required` : `${subject} must be a string`) }).superRefine((value, ctx) => {
    if (value.trim() === '') ctx.addIssue({ code: 'custom', message: `${subject} must not be empty` });
    else if (!pattern.test(value)) ctx.addIssue({ code: 'custom', message: `${field ? `${field} ` : ''}${shown(value)} is not a valid ${kind}: ${rule}` });
    else if (value.split('/').some((part) => part === '..' || part === '.'))
      ctx.addIssue({ code: 'custom', message: `${field ? `${field} ` : ''}${shown(value)} is not a valid ${kind}: '..' is not allowed` });
  });
}

/** A boot template (BOS session template, Warewulf image, xCAT osimage) in a zod schema; messages name `field` when given. */
export function bootTemplate(field?: string) {
  return patterned('boot template', TEMPLATE, TEMPLATE_RULE, field);
}

/** A group label checked by LABEL_PATTERN in a zod schema; messages name `field` when given. */
export function groupLabel(field?: string) {
  return patterned('group label', LABEL_PATTERN, LABEL_RULE, field);
}

/** A boot template (an image name) checked as validTemplate checks it, in a zod schema; messages name `field` when given. */
export function bootTemplateName(field?: string) {
  return patterned('boot template', TEMPLATE, 'letters, digits, `.`, `_`, `-`, `:`, `/`, `+`, starting with a letter or digit, at most 255 characters', field);
}

/** A node name checked by NODE_NAME_PATTERN in a zod schema; messages name `field` when given. */
export function nodeName(field?: string) {
  return patterned('node name', NODE_NAME_PATTERN, NODE_NAME_RULE, field);
}
