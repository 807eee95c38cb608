import { InvalidInputError, type FieldProblem } from '../../../core/errors';
import { parseDeploymentStrategy } from '../../../core/group-deployment/parse-strategy';
import { readStrategyFixture, thrownBy } from '../../support/deployment-runs';

function problemsOf(input: unknown): FieldProblem[] {
  const err = thrownBy(() => parseDeploymentStrategy(input));
  expect(err).toBeInstanceOf(InvalidInputError);
  expect((err as InvalidInputError).subject).toBe('deployment strategy');
  return (err as InvalidInputError).problems;
}

const group = (overrides: Record<string, unknown> = {}) => ({
  name: 'g',
  critical: false,
  depends_on: [],
  selectors: [],
  ...overrides,
});

describe('parseDeploymentStrategy', () => {
  describe('document forms', () => {
    it("reads the seed's example document (YAML, whole Deckhand document)", () => {
      const strategy = parseDeploymentStrategy(readStrategyFixture('shipyard-example.yaml'));
      expect(strategy.groups.map((g) => g.name)).toEqual(['control-nodes', 'compute-nodes-1', 'compute-nodes-2', 'monitoring-nodes', 'ntp-node']);
      expect(strategy.groups[0]).toEqual({
        name: 'control-nodes',
        critical: true,
        dependsOn: ['ntp-node'],
        selectors: [{ nodeNames: [], nodeLabels: [], nodeTags: ['control'], rackNames: ['rack03'] }],
        successCriteria: { percentSuccessfulNodes: 90, minimumSuccessfulNodes: 3, maximumFailedNodes: 1 },
        concurrency: { type: 'parallel' },
      });
      expect(strategy.groups[3]?.successCriteria).toBeUndefined();
    });

    it('reads the bare form as JSON text, and both forms as objects', () => {
      const bare = { groups: [group({ name: 'a' }), group({ name: 'b', depends_on: ['a'] })] };
      const fromText = parseDeploymentStrategy(JSON.stringify(bare));
      expect(fromText.groups.map((g) => [g.name, g.dependsOn])).toEqual([
        ['a', []],
        ['b', ['a']],
      ]);
      expect(parseDeploymentStrategy(bare)).toEqual(fromText);
      expect(parseDeploymentStrategy({ schema: 'shipyard/DeploymentStrategy/v1', metadata: { name: 'x' }, data: bare })).toEqual(fromText);
    });

    it('fills absent selector criteria with empty lists', () => {
      const strategy = parseDeploymentStrategy({ groups: [group({ selectors: [{ node_tags: ['t'] }, {}] })] });
      expect(strategy.groups[0]?.selectors).toEqual([
        { nodeNames: [], nodeLabels: [], nodeTags: ['t'], rackNames: [] },
        { nodeNames: [], nodeLabels: [], nodeTags: [], rackNames: [] },
      ]);
    });

    it('picks the one DeploymentStrategy out of a multi-document site bundle', () => {
      const text = ['schema: other/Thing/v1', 'data: {}', '---', readStrategyFixture('shipyard-example.yaml')].join('\n');
      expect(parseDeploymentStrategy(text).groups).toHaveLength(5);
      const twice = `${readStrategyFixture('shipyard-example.yaml')}\n${readStrategyFixture('shipyard-example.yaml')}`;
      expect(problemsOf(twice)[0]?.message).toMatch(/2 documents, 2 of them .*expected exactly one/);
    });

    it('reports YAML syntax errors and non-mappings', () => {
      expect(problemsOf('groups: [unclosed')[0]?.message).toMatch(/line 1/);
      expect(problemsOf('groups:\n  - a\ngroups: []')[0]?.message).toMatch(/unique/i);
      expect(problemsOf('- a\n- b')).toEqual([{ field: '', message: expect.stringMatching(/expected a mapping with groups/) }]);
      expect(problemsOf(42)[0]?.field).toBe('');
    });
  });

  describe('node labels', () => {
    const labelsOf = (labels: unknown[]) =>
      parseDeploymentStrategy({ groups: [group({ selectors: [{ node_labels: labels }] })] }).groups[0]?.selectors[0]?.nodeLabels;

    it("accepts 'key:value' strings and one-key maps, trimmed", () => {
      expect(labelsOf(['rack:r1', ' tier : gold ', { ucp_control_plane: 'enabled' }, { ' zone ': ' a ' }])).toEqual([
        { key: 'rack', value: 'r1' },
        { key: 'tier', value: 'gold' },
        { key: 'ucp_control_plane', value: 'enabled' },
        { key: 'zone', value: 'a' },
      ]);
    });

    it('accepts the map form as YAML writes it', () => {
      const yaml = [
        'groups:',
        '  - name: g',
        '    critical: true',
        '    depends_on: []',
        '    selectors:',
        '      - node_labels:',
        '          - ucp_control_plane: enabled',
        '          - label1:label1',
      ].join('\n');
      expect(parseDeploymentStrategy(yaml).groups[0]?.selectors[0]?.nodeLabels).toEqual([
        { key: 'ucp_control_plane', value: 'enabled' },
        { key: 'label1', value: 'label1' },
      ]);
    });

    it.each([
      ['no colon', 'ab', /exactly one ':'/],
      ['two colons', 'a:b:c', /exactly one ':'/],
      ['blank key', ' :b', /non-blank key and value/],
      ['blank value', 'a: ', /non-blank key and value/],
      ['two keys', { a: 'b', c: 'd' }, /exactly one key, found 2/],
      ['no keys', {}, /exactly one key, found 0/],
      ['colon in map value', { a: 'b:c' }, /without ':'/],
      ['blank map value', { a: '  ' }, /non-blank key and value/],
      ['non-string value', { gpu: true }, /'key:value' string or a one-key map/],
      ['a number', 7, /'key:value' string or a one-key map/],
    ])('rejects %s, naming the group, selector and entry', (_case, label, message) => {
      const problems = problemsOf({ groups: [group({ name: 'ctl', selectors: [{}, { node_labels: ['ok:1', label] }] })] });
      expect(problems).toEqual([{ field: 'groups[0] (ctl).selectors[1].node_labels[1]', message: expect.stringMatching(message) }]);
    });
  });

  describe('node concurrency (Fuel strategy)', () => {
    const concurrencyOf = (strategy?: unknown) =>
      parseDeploymentStrategy({ groups: [group(strategy === undefined ? {} : { strategy })] }).groups[0]?.concurrency;

    it('defaults to all nodes at once, as Shipyard submits a group', () => {
      expect(concurrencyOf()).toEqual({ type: 'parallel' });
    });

    it('accepts one_by_one, parallel, and parallel with an amount', () => {
      expect(concurrencyOf({ type: 'one_by_one' })).toEqual({ type: 'one_by_one' });
      expect(concurrencyOf({ type: 'parallel' })).toEqual({ type: 'parallel' });
      expect(concurrencyOf({ type: 'parallel', amount: 8 })).toEqual({ type: 'parallel', amount: 8 });
    });

    it.each([
      [{ type: 'parallel', amount: 0 }, 'groups[0] (g).strategy.amount', /whole number >= 1/],
      [{ type: 'parallel', amount: 1.5 }, 'groups[0] (g).strategy.amount', /whole number >= 1/],
      [{ type: 'serial' }, 'groups[0] (g).strategy.type', /one_by_one/],
      ['parallel', 'groups[0] (g).strategy', /must be \{type: one_by_one\}/],
      [{ type: 'one_by_one', amount: 2 }, 'groups[0] (g).strategy.amount', /unknown key/],
    ])('rejects %j', (strategy, field, message) => {
      expect(problemsOf({ groups: [group({ strategy })] })).toEqual([{ field, message: expect.stringMatching(message) }]);
    });
  });

  describe('schema errors name the group and the field', () => {
    it.each<[string, Record<string, unknown>, string, RegExp]>([
      ['missing name', { name: undefined }, 'groups[0].name', /is required: a non-blank group name/],
      ['blank name', { name: '  ' }, 'groups[0].name', /must be a non-blank group name/],
      ['non-string name', { name: 7 }, 'groups[0].name', /must be a non-blank group name/],
      ['missing critical', { critical: undefined }, 'groups[0] (g).critical', /is required: true or false/],
      ['non-boolean critical', { critical: 'yes' }, 'groups[0] (g).critical', /must be true or false/],
      ['missing depends_on', { depends_on: undefined }, 'groups[0] (g).depends_on', /is required: a list of group names/],
      ['depends_on not a list', { depends_on: 'a' }, 'groups[0] (g).depends_on', /must be a list of group names/],
      ['depends_on entry not a string', { depends_on: [1] }, 'groups[0] (g).depends_on[0]', /must be a group name/],
      ['missing selectors', { selectors: undefined }, 'groups[0] (g).selectors', /is required: a list of selectors/],
      ['selectors not a list', { selectors: {} }, 'groups[0] (g).selectors', /must be a list of selectors/],
      ['selector not a mapping', { selectors: ['rack01'] }, 'groups[0] (g).selectors[0]', /must be a selector mapping/],
      ['node_names not a list', { selectors: [{ node_names: 'n1' }] }, 'groups[0] (g).selectors[0].node_names', /list of node names/],
      ['node_tags entry not a string', { selectors: [{ node_tags: [3] }] }, 'groups[0] (g).selectors[0].node_tags[0]', /must be a tag/],
      ['rack_names not a list', { selectors: [{ rack_names: 'r' }] }, 'groups[0] (g).selectors[0].rack_names', /list of rack names/],
      ['node_labels not a list', { selectors: [{ node_labels: 'a:b' }] }, 'groups[0] (g).selectors[0].node_labels', /list of labels/],
      [
        'unknown selector key',
        { selectors: [{ node_name: ['n1'] }] },
        'groups[0] (g).selectors[0].node_name',
        /unknown key \(expected one of: node_names, node_labels, node_tags, rack_names\)/,
      ],
      ['success_criteria not a mapping', { success_criteria: 90 }, 'groups[0] (g).success_criteria', /must be a mapping of success criteria/],
      [
        'percent above 100',
        { success_criteria: { percent_successful_nodes: 101 } },
        'groups[0] (g).success_criteria.percent_successful_nodes',
        /whole number from 0 to 100/,
      ],
      [
        'percent below 0',
        { success_criteria: { percent_successful_nodes: -1 } },
        'groups[0] (g).success_criteria.percent_successful_nodes',
        /whole number from 0 to 100/,
      ],
      [
        'fractional percent',
        { success_criteria: { percent_successful_nodes: 99.5 } },
        'groups[0] (g).success_criteria.percent_successful_nodes',
        /whole number from 0 to 100/,
      ],
      [
        'percent as text',
        { success_criteria: { percent_successful_nodes: '90' } },
        'groups[0] (g).success_criteria.percent_successful_nodes',
        /whole number from 0 to 100/,
      ],
      [
        'negative minimum',
        { success_criteria: { minimum_successful_nodes: -1 } },
        'groups[0] (g).success_criteria.minimum_successful_nodes',
        /whole number >= 0/,
      ],
      [
        'fractional maximum failed',
        { success_criteria: { maximum_failed_nodes: 0.5 } },
        'groups[0] (g).success_criteria.maximum_failed_nodes',
        /whole number >= 0/,
      ],
      [
        'unknown criterion',
        { success_criteria: { min_successful_nodes: 1 } },
        'groups[0] (g).success_criteria.min_successful_nodes',
        /unknown key \(expected one of: percent_successful_nodes/,
      ],
      [
        'unknown group key',
        { dependsOn: [] },
        'groups[0] (g).dependsOn',
        /unknown key \(expected one of: name, critical, depends_on, selectors, success_criteria, strategy\)/,
      ],
    ])('%s', (_case, overrides, field, message) => {
      expect(problemsOf({ groups: [group(overrides)] })).toEqual([{ field, message: expect.stringMatching(message) }]);
    });

    it("names the group by its name in the brief's example path", () => {
      const groups = [group({ name: 'ntp' }), group({ name: 'ctl' }), group({ name: 'compute-nodes-1', success_criteria: { percent_successful_nodes: 150 } })];
      expect(problemsOf({ groups })).toEqual([
        { field: 'groups[2] (compute-nodes-1).success_criteria.percent_successful_nodes', message: 'must be a whole number from 0 to 100' },
      ]);
    });

    it('reports the top level: missing or non-list groups and unknown keys', () => {
      expect(problemsOf({})).toEqual([{ field: 'groups', message: 'is required: a list of groups' }]);
      expect(problemsOf({ groups: {} })).toEqual([{ field: 'groups', message: 'must be a list of groups' }]);
      expect(problemsOf({ groups: [], group: [] })).toEqual([{ field: 'group', message: 'unknown key (expected one of: groups)' }]);
      expect(problemsOf({ groups: ['g'] })).toEqual([{ field: 'groups[0]', message: 'must be a group mapping' }]);
    });

    it('reports the document envelope, and prefixes data. in the document form', () => {
      expect(problemsOf({ schema: 'shipyard/DeploymentConfiguration/v1', data: { groups: [] } })).toEqual([
        { field: 'schema', message: "must be 'shipyard/DeploymentStrategy/v1'" },
      ]);
      expect(problemsOf({ schema: 'shipyard/DeploymentStrategy/v1', metadata: {} })).toEqual([
        { field: 'data', message: 'is required: a mapping with groups' },
      ]);
      expect(problemsOf({ schema: 'shipyard/DeploymentStrategy/v1', data: { groups: [] }, extra: 1 })).toEqual([
        { field: 'extra', message: 'unknown key (expected one of: schema, metadata, data)' },
      ]);
      expect(problemsOf({ schema: 'shipyard/DeploymentStrategy/v1', data: { groups: [group({ name: 'a', critical: 1, depends_on: ['zz'] })] } })).toEqual([
        { field: 'data.groups[0] (a).critical', message: 'must be true or false' },
        { field: 'data.groups[0] (a).depends_on[0]', message: "unknown group 'zz'" },
      ]);
    });

    it('collects every problem of every group in one error', () => {
      const err = thrownBy(() =>
        parseDeploymentStrategy({
          groups: [
            group({ name: 'a', critical: 'no', depends_on: ['b'] }),
            group({ name: undefined, selectors: [{ rack: ['r1'] }] }),
            group({ name: 'b', depends_on: ['a', 'ghost'], success_criteria: { percent_successful_nodes: 200, maximum_failed_nodes: -2 } }),
            group({ name: 'a' }),
          ],
        }),
      ) as InvalidInputError;
      expect(err.problems.map((p) => p.field)).toEqual([
        'groups[0] (a).critical',
        'groups[1].name',
        'groups[1].selectors[0].rack',
        'groups[2] (b).success_criteria.percent_successful_nodes',
        'groups[2] (b).success_criteria.maximum_failed_nodes',
        'groups[3] (a).name',
        'groups[2] (b).depends_on[1]',
        'groups[0] (a).depends_on',
      ]);
      expect(err.message).toMatch(/^Invalid deployment strategy: groups\[0\] \(a\)\.critical: must be true or false; /);
      expect(err.message).toContain('The following are involved in a circular dependency: a, b');
    });
  });
});
