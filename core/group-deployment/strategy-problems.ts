/**
 * Turns schema issues into FieldProblems that name the group as well as its index, so an operator
 * can find it in a long document: `groups[2] (compute-nodes-1).success_criteria.percent_successful_nodes`.
 */
import type { z } from 'zod';
import type { FieldProblem } from '../errors';
import { KNOWN_KEYS } from './strategy-schema';

type StrategyIssue = z.ZodError['issues'][number];

/** The name of `groups[index]` in the raw input when it has a usable one. */
export type GroupNameAt = (index: number) => string | undefined;

export function groupNamesIn(rawGroups: unknown): GroupNameAt {
  return (index) => {
    const group: unknown = Array.isArray(rawGroups) ? rawGroups[index] : undefined;
    const name: unknown = group !== null && typeof group === 'object' ? (group as { name?: unknown }).name : undefined;
    return typeof name === 'string' && name.trim() !== '' ? name : undefined;
  };
}

/** `groups[3] (compute-nodes-1)`, or `groups[3]` when the group has no usable name. */
export function groupFieldPath(index: number, name: string | undefined): string {
  return name === undefined ? `groups[${index}]` : `groups[${index}] (${name})`;
}

/** Like formatPath (../validation), plus the group's name after `groups[i]` (bare or under `data`). */
export function formatStrategyPath(path: readonly PropertyKey[], groupNameAt: GroupNameAt): string {
  return path
    .map((part, i) => {
      if (typeof part !== 'number') return i === 0 ? String(part) : `.${String(part)}`;
      const isGroupIndex = path[i - 1] === 'groups' && (i === 1 || (i === 2 && path[0] === 'data'));
      return isGroupIndex ? groupFieldPath(part, groupNameAt(part)).slice('groups'.length) : `[${part}]`;
    })
    .join('');
}

function knownKeysAt(path: readonly PropertyKey[], rootKeys: readonly string[]): readonly string[] | undefined {
  const last = path.at(-1);
  const parent = path.at(-2);
  if (last === undefined) return rootKeys;
  if (typeof last === 'number') {
    if (parent === 'groups') return KNOWN_KEYS.group;
    if (parent === 'selectors') return KNOWN_KEYS.selector;
    return undefined;
  }
  if (last === 'success_criteria') return KNOWN_KEYS.successCriteria;
  if (last === 'strategy') return KNOWN_KEYS.strategy;
  if (last === 'data') return KNOWN_KEYS.data;
  return undefined;
}

/** One problem per issue, and one per unknown key (naming the keys that were expected). */
export function strategyIssueProblems(issues: readonly StrategyIssue[], groupNameAt: GroupNameAt, rootKeys: readonly string[]): FieldProblem[] {
  return issues.flatMap((issue) => {
    if (issue.code !== 'unrecognized_keys') {
      return [{ field: formatStrategyPath(issue.path, groupNameAt), message: issue.message }];
    }
    const known = knownKeysAt(issue.path, rootKeys);
    const message = known ? `unknown key (expected one of: ${known.join(', ')})` : 'unknown key';
    return issue.keys.map((key) => ({ field: formatStrategyPath([...issue.path, key], groupNameAt), message }));
  });
}
