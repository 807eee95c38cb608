import { planDeployment, plannedGroup } from '../../../core/group-deployment/deployment-plan';
import { parseDeploymentStrategy } from '../../../core/group-deployment/parse-strategy';
import type { InventoryNode } from '../../../ports/site';
import { runToEnd } from '../../support/deployment-runs';

/**
 * A 10,000-node site in 100 racks, and a 100-group strategy: one group per rack, each depending on
 * the previous rack's group and on a "gpu" sweep every 10th group, with groups overlapping by
 * label. Correctness only; timings belong to the benchmarks.
 */
const RACKS = 100;
const PER_RACK = 100;

function site(): InventoryNode[] {
  return Array.from({ length: RACKS * PER_RACK }, (_, i) => {
    const rack = Math.floor(i / PER_RACK);
    return {
      name: `nid${String(i).padStart(6, '0')}`,
      nid: i,
      rack: `x${rack}`,
      role: 'Compute',
      tags: i % 10 === 0 ? ['compute', 'gpu'] : ['compute'],
      labels: { tier: i % 2 === 0 ? 'even' : 'odd' },
    };
  });
}

function strategyText(): string {
  const groups = Array.from({ length: RACKS }, (_, g) => {
    // Listed in reverse, so the order must come from depends_on rather than the document.
    const rack = RACKS - 1 - g;
    const dependsOn = rack === 0 ? [] : [`rack-${rack - 1}`];
    const selectors = rack % 10 === 0 ? [{ rack_names: [`x${rack}`] }, { node_tags: ['gpu'], node_labels: ['tier:even'] }] : [{ rack_names: [`x${rack}`] }];
    return { name: `rack-${rack}`, critical: rack === 0, depends_on: dependsOn, selectors, success_criteria: { percent_successful_nodes: 95 } };
  });
  return JSON.stringify({ schema: 'shipyard/DeploymentStrategy/v1', metadata: { name: 'big' }, data: { groups } });
}

describe('a 10,000-node, 100-group strategy', () => {
  const inventory = site();
  const plan = planDeployment(parseDeploymentStrategy(strategyText()), inventory);

  it('orders the groups by dependency, not by document position', () => {
    expect(plan.order).toEqual(Array.from({ length: RACKS }, (_, r) => `rack-${r}`));
  });

  it('handles every node exactly once across groups', () => {
    const actionable = plan.order.flatMap((name) => plannedGroup(plan, name).actionableNodes);
    expect(actionable).toHaveLength(RACKS * PER_RACK);
    expect(new Set(actionable).size).toBe(RACKS * PER_RACK);
  });

  it('leaves the gpu sweep nodes to the first group that selects them', () => {
    // gpu nodes are every 10th node (all even): 1,000 of them, 10 per rack.
    expect(plannedGroup(plan, 'rack-0').nodes).toHaveLength(PER_RACK + 1000 - 10);
    expect(plannedGroup(plan, 'rack-0').actionableNodes).toHaveLength(PER_RACK + 1000 - 10);
    expect(plannedGroup(plan, 'rack-10').nodes).toHaveLength(PER_RACK + 1000 - 10);
    expect(plannedGroup(plan, 'rack-10').actionableNodes).toHaveLength(PER_RACK - 10);
    expect(plannedGroup(plan, 'rack-1').actionableNodes).toHaveLength(PER_RACK - 10);
  });

  it('runs to the end, and a failing rack blocks every rack after it', () => {
    // rack-51 prepares 50 of its 90 actionable nodes: with its 10 gpu nodes deployed earlier, 60% < 95%.
    const { result } = runToEnd(plan, (a) => (a.group === 'rack-51' ? a.nodes.slice(0, 50) : a.nodes));
    expect(result.groups['rack-50']?.stage).toBe('DEPLOYED');
    expect(result.groups['rack-51']).toMatchObject({
      stage: 'FAILED',
      failures: [{ criteria: 'percent_successful_nodes', needed: 95, actual: 60 }],
    });
    expect(result.groups['rack-99']).toMatchObject({ stage: 'FAILED', blockedBy: 'rack-51' });
    expect(result.status).toBe('SUCCEEDED');
    const count = (stage: string) => Object.values(result.nodes).filter((s) => s === stage).length;
    // Racks 0-50 in full, and the gpu nodes of racks 51-99 (deployed by rack-0's sweep).
    expect(count('DEPLOYED')).toBe(51 * PER_RACK + 49 * 10);
    expect([count('PREPARED'), count('FAILED'), count('NOT_STARTED')]).toEqual([50, 40, 48 * 90]);
  });
});
