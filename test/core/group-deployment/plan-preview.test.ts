import { planDeployment } from '../../../core/group-deployment/deployment-plan';
import { parseDeploymentStrategy } from '../../../core/group-deployment/parse-strategy';
import { deploymentPlanMermaid } from '../../../core/group-deployment/plan-mermaid';
import { previewDeploymentPlan } from '../../../core/group-deployment/plan-preview';
import { inventoryNode, readStrategyFixture, seedInventory } from '../../support/deployment-runs';

const seedPlan = () => planDeployment(parseDeploymentStrategy(readStrategyFixture('shipyard-example.yaml')), seedInventory());

describe('previewDeploymentPlan', () => {
  it("shows the seed example's order and each group's nodes", () => {
    expect(previewDeploymentPlan(seedPlan())).toEqual({
      order: ['monitoring-nodes', 'ntp-node', 'control-nodes', 'compute-nodes-1', 'compute-nodes-2'],
      groups: {
        'monitoring-nodes': { critical: false, dependsOn: [], nodes: ['mon01', 'mon02', 'mon03'], actionableNodes: ['mon01', 'mon02', 'mon03'] },
        'ntp-node': { critical: true, dependsOn: [], nodes: ['ntp01'], actionableNodes: ['ntp01'] },
        'control-nodes': {
          critical: true,
          dependsOn: ['ntp-node'],
          nodes: ['ctl01', 'ctl02', 'ctl03', 'ctl04', 'mon03'],
          actionableNodes: ['ctl01', 'ctl02', 'ctl03', 'ctl04'],
        },
        'compute-nodes-1': {
          critical: false,
          dependsOn: ['control-nodes'],
          nodes: ['cmp101', 'cmp102', 'cmp103', 'cmp104'],
          actionableNodes: ['cmp101', 'cmp102', 'cmp103', 'cmp104'],
        },
        'compute-nodes-2': {
          critical: false,
          dependsOn: ['control-nodes'],
          nodes: ['cmp201', 'cmp202', 'cmp203', 'cmp204', 'mon02'],
          actionableNodes: ['cmp201', 'cmp202', 'cmp203', 'cmp204'],
        },
      },
    });
  });

  it('serialises groups in deployment order', () => {
    expect(Object.keys(JSON.parse(JSON.stringify(previewDeploymentPlan(seedPlan()))).groups)).toEqual(seedPlan().order);
  });
});

describe('deploymentPlanMermaid', () => {
  it('draws one box per group and an arrow from each dependency to its dependant', () => {
    expect(deploymentPlanMermaid(seedPlan())).toBe(
      [
        'flowchart TD',
        '  g0_monitoring_nodes["monitoring-nodes<br/>3 nodes"]',
        '  g1_ntp_node["ntp-node (critical)<br/>1 node"]',
        '  g2_control_nodes["control-nodes (critical)<br/>5 nodes"]',
        '  g3_compute_nodes_1["compute-nodes-1<br/>4 nodes"]',
        '  g4_compute_nodes_2["compute-nodes-2<br/>5 nodes"]',
        '  g1_ntp_node --> g2_control_nodes',
        '  g2_control_nodes --> g3_compute_nodes_1',
        '  g2_control_nodes --> g4_compute_nodes_2',
        '  classDef critical stroke-width:3px',
        '  class g1_ntp_node,g2_control_nodes critical',
        '',
      ].join('\n'),
    );
  });

  it('keeps ids distinct and safe, and escapes labels', () => {
    const strategy = parseDeploymentStrategy({
      groups: [
        { name: 'rack.01', critical: false, depends_on: [], selectors: [] },
        { name: 'rack-01', critical: false, depends_on: ['rack.01'], selectors: [] },
        { name: 'end', critical: false, depends_on: ['rack-01'], selectors: [] },
        { name: 'say "hi" <b>&#', critical: false, depends_on: [], selectors: [{ node_tags: ['none'] }] },
      ],
    });
    const lines = deploymentPlanMermaid(planDeployment(strategy, [inventoryNode('n1')])).split('\n');
    expect(lines).toContain('  g0_rack_01["rack.01<br/>1 node"]');
    expect(lines).toContain('  g1_rack_01["rack-01<br/>1 node"]');
    expect(lines).toContain('  g2_end["end<br/>1 node"]');
    expect(lines).toContain('  g3_say__hi___b___["say #34;hi#34; #60;b#62;#38;#35;<br/>0 nodes"]');
    expect(lines).toContain('  g0_rack_01 --> g1_rack_01');
    expect(lines).toContain('  g1_rack_01 --> g2_end');
    expect(lines.some((l) => l.startsWith('  class '))).toBe(false);
  });
});
