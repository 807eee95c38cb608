/**
 * One node, two names. On Cray CSM, Slurm names a node by its NID (`nid000006`) while HSM and BOS
 * name it by its xname (`x3000c0s19b1n0`); HSM's components carry the `NID` that joins them. The
 * session's identity of a node is the inventory's name (what the starting group lists, what BOS
 * boots); the workload manager's name is derived from the node's nid by a pattern (CSM's
 * `nid{nid:06}`), or is the same name where both services agree.
 */

/** CSM's Slurm node names: `nid` and the NID on six digits (Cray-HPE/docs-csm operations/boot_orchestration/Rolling_Upgrades.md: `nid00000[6-7]`). */
export const CSM_NID_NAME_PATTERN = 'nid{nid:06}';

/** A pattern such as `nid{nid:06}`: a prefix, the nid (zero-padded to `width`, 0 for none), a suffix. */
export interface NidNamePattern {
  text: string;
  prefix: string;
  width: number;
  suffix: string;
}

const PLACEHOLDER = /\{nid(?::0(\d))?\}/;

/** Parses `nid{nid:06}` / `node{nid}`; an error message (to be given a field by the caller) when it is not one. */
export function parseNidNamePattern(text: string): NidNamePattern | string {
  const matches = text.match(new RegExp(PLACEHOLDER.source, 'g')) ?? [];
  if (matches.length !== 1) return 'must hold {nid} (or {nid:0N}, the nid zero-padded to N digits) exactly once, e.g. nid{nid:06}';
  const [placeholder] = matches as [string];
  const at = text.indexOf(placeholder);
  const prefix = text.slice(0, at);
  const suffix = text.slice(at + placeholder.length);
  const width = Number(PLACEHOLDER.exec(placeholder)![1] ?? 0);
  if (!/^[A-Za-z][A-Za-z0-9._-]*$/.test(prefix) || !/^[A-Za-z0-9._-]*$/.test(suffix)) {
    return 'the text around {nid} must be a node-name prefix (letters first; letters, digits, `.`, `_`, `-`)';
  }
  return { text, prefix, width, suffix };
}

/** The workload manager's name of the node with this nid. */
export function nidName(pattern: NidNamePattern, nid: number): string {
  return `${pattern.prefix}${String(nid).padStart(pattern.width, '0')}${pattern.suffix}`;
}

/** The nid a workload-manager name stands for under `pattern`, or undefined when it does not follow it. */
export function nidOfName(pattern: NidNamePattern, name: string): number | undefined {
  if (!name.startsWith(pattern.prefix) || !name.endsWith(pattern.suffix)) return undefined;
  const digits = name.slice(pattern.prefix.length, name.length - pattern.suffix.length);
  if (!/^\d+$/.test(digits) || (pattern.width > 0 && digits.length < pattern.width)) return undefined;
  const nid = Number(digits);
  return nidName(pattern, nid) === name ? nid : undefined;
}

/**
 * HSM's node xname (Cray-HPE/hms-xname xnametypes/hmstypes.go, the `node` entry of
 * hmsCompRecognitionTable: `xXcCsSbBnN`, cabinet up to 4 digits, chassis 0-7), as SMD checks every
 * member id it is given (IsHMSCompIDValid).
 */
export const NODE_XNAME_PATTERN = /^x([0-9]{1,4})c([0-7])s([0-9]+)b([0-9]+)n([0-9]+)$/;

export function isNodeXname(name: string): boolean {
  return NODE_XNAME_PATTERN.test(name);
}

/**
 * How a node is shown where both names matter: `x3000c0s19b1n0 (nid000006)`; the inventory's name
 * alone where the workload manager's is the same or unknown.
 */
export function bothNames(name: string, wlmName: string | undefined): string {
  return wlmName === undefined || wlmName === name ? name : `${name} (${wlmName})`;
}
