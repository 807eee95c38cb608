import { findUnknownNodeNames, resolveSelectors } from '../../../core/group-deployment/selectors';
import type { GroupSelector } from '../../../core/group-deployment/strategy';
import { inventoryNode } from '../../support/deployment-runs';

const selector = (criteria: Partial<GroupSelector> = {}): GroupSelector => ({
  nodeNames: [],
  nodeLabels: [],
  nodeTags: [],
  rackNames: [],
  ...criteria,
});

const inventory = [
  inventoryNode('n1', { rack: 'r1', tags: ['control'], labels: { tier: 'gold' } }),
  inventoryNode('n2', { rack: 'r1', tags: ['compute'], labels: { tier: 'silver' } }),
  inventoryNode('n3', { rack: 'r2', tags: ['compute', 'gpu'], labels: { tier: 'gold', ucp_control_plane: 'enabled' } }),
  inventoryNode('n4', { tags: ['compute'] }),
  inventoryNode('n5', { rack: 'r2', tags: [] }),
];

describe('resolveSelectors', () => {
  it('selects every node for an empty selector list', () => {
    expect(resolveSelectors([], inventory)).toEqual(['n1', 'n2', 'n3', 'n4', 'n5']);
  });

  it('selects every node for a selector without criteria, even beside narrower selectors', () => {
    expect(resolveSelectors([selector()], inventory)).toHaveLength(5);
    expect(resolveSelectors([selector({ nodeNames: ['n1'] }), selector()], inventory)).toEqual(['n1', 'n2', 'n3', 'n4', 'n5']);
  });

  it('ORs the values inside one criterion', () => {
    expect(resolveSelectors([selector({ rackNames: ['r1', 'r2'] })], inventory)).toEqual(['n1', 'n2', 'n3', 'n5']);
    expect(resolveSelectors([selector({ nodeTags: ['control', 'gpu'] })], inventory)).toEqual(['n1', 'n3']);
  });

  it('intersects the criteria of one selector', () => {
    expect(resolveSelectors([selector({ rackNames: ['r1'], nodeTags: ['compute'] })], inventory)).toEqual(['n2']);
    expect(resolveSelectors([selector({ nodeNames: ['n1', 'n2', 'n3'], nodeLabels: [{ key: 'tier', value: 'gold' }], rackNames: ['r2'] })], inventory)).toEqual(
      ['n3'],
    );
  });

  it('unions selectors, in inventory order and without repeats', () => {
    const selectors = [selector({ nodeNames: ['n3', 'n1'] }), selector({ nodeTags: ['control'] }), selector({ rackNames: ['r2'] })];
    expect(resolveSelectors(selectors, inventory)).toEqual(['n1', 'n3', 'n5']);
  });

  it('matches labels by exact key and value, own keys only', () => {
    expect(resolveSelectors([selector({ nodeLabels: [{ key: 'ucp_control_plane', value: 'enabled' }] })], inventory)).toEqual(['n3']);
    expect(resolveSelectors([selector({ nodeLabels: [{ key: 'tier', value: 'Gold' }] })], inventory)).toEqual([]);
    expect(resolveSelectors([selector({ nodeLabels: [{ key: 'constructor', value: 'function Object() { [native code] }' }] })], inventory)).toEqual([]);
  });

  it('never matches a rack criterion on a node without a rack', () => {
    expect(resolveSelectors([selector({ rackNames: ['r1', 'r2'], nodeTags: ['compute'] })], inventory)).not.toContain('n4');
  });

  it('returns nothing when the criteria match no node', () => {
    expect(resolveSelectors([selector({ nodeTags: ['storage'] })], inventory)).toEqual([]);
  });

  it('lists a node once even if the inventory repeats it', () => {
    expect(resolveSelectors([], [...inventory, inventoryNode('n1')])).toEqual(['n1', 'n2', 'n3', 'n4', 'n5']);
  });
});

describe('findUnknownNodeNames', () => {
  it('warns about node_names entries that name no inventory node', () => {
    const strategy = {
      groups: [
        { name: 'a', critical: true, dependsOn: [], selectors: [selector({ nodeNames: ['n1', 'ghost'] })], concurrency: { type: 'parallel' as const } },
        { name: 'b', critical: false, dependsOn: [], selectors: [selector(), selector({ nodeNames: ['n9'] })], concurrency: { type: 'parallel' as const } },
      ],
    };
    expect(findUnknownNodeNames(strategy, inventory)).toEqual([
      { group: 'a', selector: 0, nodeName: 'ghost' },
      { group: 'b', selector: 1, nodeName: 'n9' },
    ]);
  });
});
