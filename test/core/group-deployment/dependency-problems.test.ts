import { InvalidInputError } from '../../../core/errors';
import { findDependencyProblems } from '../../../core/group-deployment/dependency-problems';
import { parseDeploymentStrategy } from '../../../core/group-deployment/parse-strategy';
import { planDeployment } from '../../../core/group-deployment/deployment-plan';
import type { StrategyGroup } from '../../../core/group-deployment/strategy';
import { thrownBy } from '../../support/deployment-runs';

const deps = (...groups: [string, string[]][]) => groups.map(([name, dependsOn], index) => ({ index, name, dependsOn }));

describe('findDependencyProblems', () => {
  it('accepts a well-formed graph, including repeated dependencies', () => {
    expect(findDependencyProblems(deps(['a', []], ['b', ['a', 'a']], ['c', ['a', 'b']]))).toEqual([]);
  });

  it('reports each duplicate group name at its later definitions', () => {
    expect(findDependencyProblems(deps(['a', []], ['b', []], ['a', []], ['a', []]))).toEqual([
      { field: 'groups[2] (a).name', message: "duplicate group name 'a' (first used by groups[0])" },
      { field: 'groups[3] (a).name', message: "duplicate group name 'a' (first used by groups[0])" },
    ]);
  });

  it('names the group and the unknown dependency', () => {
    expect(findDependencyProblems(deps(['a', []], ['compute', ['a', 'ntp-nod']]))).toEqual([
      { field: 'groups[1] (compute).depends_on[1]', message: "unknown group 'ntp-nod'" },
    ]);
  });

  it('reports a group that depends on itself', () => {
    expect(findDependencyProblems(deps(['a', ['a']]))).toEqual([
      { field: 'groups[0] (a).depends_on', message: 'The following are involved in a circular dependency: a' },
    ]);
  });

  it('reports each cycle separately, its groups in document order, and leaves bystanders out', () => {
    const problems = findDependencyProblems(deps(['ok', []], ['c', ['b']], ['x', ['y']], ['a', ['c', 'ok']], ['b', ['a']], ['y', ['x']], ['after', ['a']]));
    expect(problems).toEqual([
      { field: 'groups[1] (c).depends_on', message: 'The following are involved in a circular dependency: c, a, b' },
      { field: 'groups[2] (x).depends_on', message: 'The following are involved in a circular dependency: x, y' },
    ]);
  });

  it('reports two cycles that share a group as one set', () => {
    expect(findDependencyProblems(deps(['a', ['b', 'c']], ['b', ['a']], ['c', ['a']]))).toEqual([
      { field: 'groups[0] (a).depends_on', message: 'The following are involved in a circular dependency: a, b, c' },
    ]);
  });

  it('handles a 5,000-group chain without deep recursion', () => {
    const chain = Array.from({ length: 5000 }, (_, i): [string, string[]] => [`g${i}`, i === 0 ? ['g4999'] : [`g${i - 1}`]]);
    const [problem] = findDependencyProblems(deps(...chain));
    expect(problem?.message.split(', ')).toHaveLength(5000);
  });
});

describe('semantic problems through parseDeploymentStrategy', () => {
  const group = (name: string, dependsOn: string[]) => ({ name, critical: true, depends_on: dependsOn, selectors: [] });

  it('reports duplicates, unknown names and cycles together', () => {
    const err = thrownBy(() =>
      parseDeploymentStrategy({ groups: [group('a', ['b']), group('b', ['a']), group('a', []), group('c', ['nope'])] }),
    ) as InvalidInputError;
    expect(err.problems).toEqual([
      { field: 'groups[2] (a).name', message: "duplicate group name 'a' (first used by groups[0])" },
      { field: 'groups[3] (c).depends_on[0]', message: "unknown group 'nope'" },
      { field: 'groups[0] (a).depends_on', message: 'The following are involved in a circular dependency: a, b' },
    ]);
  });

  it('still finds cycles among groups that have schema errors elsewhere', () => {
    const err = thrownBy(() =>
      parseDeploymentStrategy({
        groups: [
          { ...group('a', ['b']), critical: 'y' },
          { ...group('b', ['a']), selectors: 3 },
        ],
      }),
    ) as InvalidInputError;
    expect(err.problems.map((p) => p.field)).toEqual(['groups[0] (a).critical', 'groups[1] (b).selectors', 'groups[0] (a).depends_on']);
  });
});

describe('planDeployment on a strategy built in code', () => {
  it('rejects a cycle with the same InvalidInputError', () => {
    const g = (name: string, dependsOn: string[]): StrategyGroup => ({ name, critical: false, dependsOn, selectors: [], concurrency: { type: 'parallel' } });
    const err = thrownBy(() => planDeployment({ groups: [g('a', ['b']), g('b', ['a'])] }, []));
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).problems[0]?.message).toBe('The following are involved in a circular dependency: a, b');
  });
});
