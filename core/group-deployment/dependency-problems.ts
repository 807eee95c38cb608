/**
 * Checks a strategy's groups against each other, after (or beside) the schema: duplicate names and
 * unknown `depends_on` names (Shipyard's code silently overwrites or crashes on these) and cycles
 * (Shipyard's message, one per set of groups that depend on each other in a circle).
 */
import type { FieldProblem } from '../errors';
import { stronglyConnectedComponents } from '../graph/graph-algorithms';
import { groupFieldPath } from './strategy-problems';

/** The part of a group these checks need; `index` is its position in the document. */
export interface GroupDependencies {
  index: number;
  name: string;
  dependsOn: readonly string[];
}

export function findDependencyProblems(groups: readonly GroupDependencies[]): FieldProblem[] {
  const firstIndex = new Map<string, number>();
  const problems: FieldProblem[] = [];
  for (const group of groups) {
    const first = firstIndex.get(group.name);
    if (first === undefined) firstIndex.set(group.name, group.index);
    else {
      problems.push({
        field: `${groupFieldPath(group.index, group.name)}.name`,
        message: `duplicate group name '${group.name}' (first used by groups[${first}])`,
      });
    }
  }
  for (const group of groups) {
    group.dependsOn.forEach((dependency, k) => {
      if (!firstIndex.has(dependency)) {
        problems.push({
          field: `${groupFieldPath(group.index, group.name)}.depends_on[${k}]`,
          message: `unknown group '${dependency}'`,
        });
      }
    });
  }
  return [...problems, ...circularDependencyProblems(groups, firstIndex)];
}

function circularDependencyProblems(groups: readonly GroupDependencies[], firstIndex: ReadonlyMap<string, number>): FieldProblem[] {
  // Duplicated names share one vertex whose edges are the union of their depends_on.
  const edges = new Map<string, string[]>();
  for (const group of groups) {
    const known = group.dependsOn.filter((dependency) => firstIndex.has(dependency));
    edges.set(group.name, [...(edges.get(group.name) ?? []), ...known]);
  }
  const edgesFrom = (name: string) => edges.get(name) ?? [];
  const byDocumentOrder = (a: string, b: string) => (firstIndex.get(a) ?? 0) - (firstIndex.get(b) ?? 0);

  return stronglyConnectedComponents([...edges.keys()], edgesFrom)
    .filter((component) => component.length > 1 || edgesFrom(component[0] ?? '').includes(component[0] ?? ''))
    .map((component) => component.sort(byDocumentOrder))
    .sort((a, b) => byDocumentOrder(a[0] ?? '', b[0] ?? ''))
    .map((component) => {
      const first = component[0] ?? '';
      return {
        field: `${groupFieldPath(firstIndex.get(first) ?? 0, first)}.depends_on`,
        message: `The following are involved in a circular dependency: ${component.join(', ')}`,
      };
    });
}
