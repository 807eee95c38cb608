import { planDeployment, plannedGroup } from '../../../core/group-deployment/deployment-plan';
import { InvalidInputError, UnknownDeploymentGroupError } from '../../../core/errors';
import { phaseWork } from '../../../core/group-deployment/node-batches';
import { parseDeploymentStrategy } from '../../../core/group-deployment/parse-strategy';
import { inventoryNode, readStrategyFixture, seedInventory } from '../../support/deployment-runs';

const strategyOf = (...groups: [string, string[]][]) =>
  parseDeploymentStrategy({ groups: groups.map(([name, depends_on]) => ({ name, critical: false, depends_on, selectors: [] })) });

describe('planDeployment', () => {
  describe('order', () => {
    it("orders the seed's example: dependencies first, ties in document order", () => {
      const plan = planDeployment(parseDeploymentStrategy(readStrategyFixture('shipyard-example.yaml')), seedInventory());
      expect(plan.order).toEqual(['monitoring-nodes', 'ntp-node', 'control-nodes', 'compute-nodes-1', 'compute-nodes-2']);
    });

    it('keeps independent groups in document order', () => {
      expect(planDeployment(strategyOf(['c', []], ['a', []], ['b', []]), []).order).toEqual(['c', 'a', 'b']);
    });

    it('puts a group listed before its dependency after it, and breaks later ties by document order', () => {
      const plan = planDeployment(strategyOf(['z', ['y']], ['y', []], ['x', []], ['w', ['y']]), []);
      expect(plan.order).toEqual(['y', 'z', 'x', 'w']);
    });

    it('prefers the earliest listed ready group at every step, not just at the start', () => {
      // After 'a', both 'late' (listed 1st) and 'b' (listed 3rd) are ready: 'late' goes first.
      const plan = planDeployment(strategyOf(['late', ['a']], ['a', []], ['b', []], ['c', ['late', 'b']]), []);
      expect(plan.order).toEqual(['a', 'late', 'b', 'c']);
    });

    it('gives the same order for the same document every time', () => {
      const strategy = strategyOf(['d', ['a', 'b']], ['a', []], ['c', ['a']], ['b', []]);
      const first = planDeployment(strategy, []).order;
      for (let i = 0; i < 5; i++) expect(planDeployment(strategy, []).order).toEqual(first);
    });
  });

  describe('groups', () => {
    const plan = planDeployment(parseDeploymentStrategy(readStrategyFixture('shipyard-example.yaml')), seedInventory());

    it('resolves every node a group selects, and its dependencies and dependants', () => {
      expect(plannedGroup(plan, 'control-nodes')).toMatchObject({
        critical: true,
        dependsOn: ['ntp-node'],
        dependants: ['compute-nodes-1', 'compute-nodes-2'],
        nodes: ['ctl01', 'ctl02', 'ctl03', 'ctl04', 'mon03'],
        successCriteria: { percentSuccessfulNodes: 90, minimumSuccessfulNodes: 3, maximumFailedNodes: 1 },
      });
      expect(plannedGroup(plan, 'ntp-node').nodes).toEqual(['ntp01']);
    });

    it('makes a node actionable only in the first group (in order) that selects it', () => {
      expect(plannedGroup(plan, 'monitoring-nodes').actionableNodes).toEqual(['mon01', 'mon02', 'mon03']);
      expect(plannedGroup(plan, 'control-nodes').actionableNodes).toEqual(['ctl01', 'ctl02', 'ctl03', 'ctl04']);
      expect(plannedGroup(plan, 'compute-nodes-2').nodes).toEqual(['cmp201', 'cmp202', 'cmp203', 'cmp204', 'mon02']);
      expect(plannedGroup(plan, 'compute-nodes-2').actionableNodes).toEqual(['cmp201', 'cmp202', 'cmp203', 'cmp204']);
      const actionable = plan.order.flatMap((name) => plannedGroup(plan, name).actionableNodes);
      expect(new Set(actionable).size).toBe(actionable.length);
      expect([...actionable].sort()).toEqual([...plan.nodes].sort());
    });

    it('lists every selected node once in inventory order, leaving unselected nodes out', () => {
      expect(plan.nodes).not.toContain('spare01');
      expect(plan.nodes).toEqual(
        seedInventory()
          .map((n) => n.name)
          .filter((n) => n !== 'spare01'),
      );
    });

    it.each<[string, boolean, string[], RegExp]>([
      ['a critical group naming only unknown nodes', true, ['n404'], /^groups\[1\] \(g\)\.node_names: no node of the site is named 'n404'/],
      ['a non-critical group naming only unknown nodes', false, ['n404'], /^groups\[1\] \(g\)\.node_names: no node of the site is named 'n404'/],
      [
        'a critical group mixing known and unknown nodes',
        true,
        ['n1', 'n404', 'n405'],
        /^groups\[1\] \(g\)\.node_names: no node of the site is named 'n404', 'n405'/,
      ],
      ['a non-critical group mixing known and unknown nodes', false, ['n1', 'n404'], /^groups\[1\] \(g\)\.node_names: no node of the site is named 'n404'/],
    ])('refuses %s before anything runs, naming the group and the names', (_case, critical, names, message) => {
      const strategy = parseDeploymentStrategy({
        groups: [
          { name: 'fine', critical: true, depends_on: [], selectors: [{ node_names: ['n1'] }] },
          { name: 'g', critical, depends_on: [], selectors: [{ node_tags: ['gpu'] }, { node_names: names }] },
        ],
      });
      const err = (() => {
        try {
          planDeployment(strategy, [inventoryNode('n1')]);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).problems).toEqual([
        { field: 'groups[1] (g).node_names', message: expect.stringMatching(/^no node of the site is named .*: every node a group names must exist$/) },
      ]);
      expect(`${(err as InvalidInputError).problems[0]!.field}: ${(err as InvalidInputError).problems[0]!.message}`).toMatch(message);
    });

    it('rejects unknown group names, including Object.prototype keys', () => {
      expect(() => plannedGroup(plan, 'nope')).toThrow(UnknownDeploymentGroupError);
      expect(() => plannedGroup(plan, 'constructor')).toThrow(UnknownDeploymentGroupError);
    });

    it('is plain JSON', () => {
      expect(JSON.parse(JSON.stringify(plan))).toEqual(plan);
    });
  });
});

describe('phaseWork', () => {
  const nodes = ['a', 'b', 'c', 'd', 'e'];
  it('submits all nodes in one action for parallel without an amount', () => {
    expect(phaseWork(nodes, { type: 'parallel' })).toEqual({ batches: [nodes], maxConcurrency: 1 });
  });
  it('runs a sliding window of single nodes for parallel with an amount', () => {
    expect(phaseWork(nodes, { type: 'parallel', amount: 2 })).toEqual({ batches: nodes.map((n) => [n]), maxConcurrency: 2 });
  });
  it('goes one node at a time for one_by_one', () => {
    expect(phaseWork(nodes, { type: 'one_by_one' })).toEqual({ batches: nodes.map((n) => [n]), maxConcurrency: 1 });
  });
  it('packs nodes past 40 concurrent iterations without exceeding the amount in flight', () => {
    const many = Array.from({ length: 500 }, (_, i) => `n${i}`);
    const work = phaseWork(many, { type: 'parallel', amount: 100 });
    expect(work.maxConcurrency).toBeLessThanOrEqual(40);
    const size = work.batches[0]!.length;
    expect(size * work.maxConcurrency).toBeLessThanOrEqual(100);
    expect(work.batches.flat()).toEqual(many);
  });
  it('has nothing to submit for no nodes', () => {
    expect(phaseWork([], { type: 'parallel' })).toEqual({ batches: [], maxConcurrency: 1 });
  });
});
