import { InvalidInputError } from '../../../core/errors';
import { DEFAULT_GROUP_NAME, defaultDeploymentStrategy, deploymentStrategyForNodes, parseNodeNameList } from '../../../core/group-deployment/default-strategy';
import { planDeployment, plannedGroup } from '../../../core/group-deployment/deployment-plan';
import { inventoryNode, runToEnd, seedInventory, thrownBy } from '../../support/deployment-runs';

describe('defaultDeploymentStrategy', () => {
  it('is one critical group over all nodes that needs 100% success', () => {
    expect(defaultDeploymentStrategy()).toEqual({
      groups: [
        {
          name: DEFAULT_GROUP_NAME,
          critical: true,
          dependsOn: [],
          selectors: [],
          successCriteria: { percentSuccessfulNodes: 100 },
          concurrency: { type: 'parallel' },
        },
      ],
    });
    const plan = planDeployment(defaultDeploymentStrategy(), seedInventory());
    expect(plan.order).toEqual(['default']);
    expect(plannedGroup(plan, 'default').actionableNodes).toEqual(seedInventory().map((n) => n.name));
  });

  it('fails the deployment when a single node fails', () => {
    const plan = planDeployment(defaultDeploymentStrategy(), seedInventory());
    // 16 of the 17 selected nodes.
    const { result } = runToEnd(plan, (a) => a.nodes.filter((n) => n !== 'cmp203'));
    expect(result).toMatchObject({ status: 'FAILED', criticalGroupsFailed: true, failedCriticalGroups: ['default'], cause: 'Critical groups failed: default' });
    expect(result.groups.default?.failures).toEqual([{ criteria: 'percent_successful_nodes', needed: 100, actual: 94.11 }]);
  });
});

describe('deploymentStrategyForNodes (--nodes)', () => {
  const inventory = [inventoryNode('n1'), inventoryNode('n2'), inventoryNode('n3')];

  it('limits the default group to the named nodes', () => {
    const strategy = deploymentStrategyForNodes(['n3', 'n1', 'n3'], inventory);
    expect(strategy.groups[0]).toMatchObject({ name: 'default', critical: true, successCriteria: { percentSuccessfulNodes: 100 } });
    expect(strategy.groups[0]?.selectors).toEqual([{ nodeNames: ['n3', 'n1'], nodeLabels: [], nodeTags: [], rackNames: [] }]);
    expect(plannedGroup(planDeployment(strategy, inventory), 'default').nodes).toEqual(['n1', 'n3']);
  });

  it('rejects unknown names, naming each', () => {
    const err = thrownBy(() => deploymentStrategyForNodes(['n1', 'nx', 'n2', 'ny'], inventory));
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).problems).toEqual([
      { field: 'nodes[1]', message: "unknown node 'nx'" },
      { field: 'nodes[3]', message: "unknown node 'ny'" },
    ]);
    expect((err as Error).message).toBe("Invalid node selection: nodes[1]: unknown node 'nx'; nodes[3]: unknown node 'ny'");
  });

  it('rejects an empty list', () => {
    expect(() => deploymentStrategyForNodes([], inventory)).toThrow(/name at least one node/);
  });
});

describe('parseNodeNameList', () => {
  it('splits on commas, trims, drops blanks and repeats', () => {
    expect(parseNodeNameList(' a, b,,c ,a,')).toEqual(['a', 'b', 'c']);
    expect(parseNodeNameList('')).toEqual([]);
  });
});
