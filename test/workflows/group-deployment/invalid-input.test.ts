import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { startTestRuntime } from '../../support/embedded';
import { deploymentSite, groupOf, namedNodes, QUICK_POLL, runDeployment, touchedNodes } from '../../support/deployment-sites';

/** Two valid groups to break one field at a time: a (n00, n01) and b (n02, n03) depending on a. */
const validGroups = () => [
  groupOf('a', ['n00', 'n01'], { critical: true, success_criteria: { percent_successful_nodes: 50 } }),
  groupOf('b', ['n02', 'n03'], { depends_on: ['a'] }),
];

const withGroup = (index: number, change: (group: Record<string, unknown>) => Record<string, unknown>) => {
  const groups = validGroups();
  groups[index] = change(groups[index]!);
  return { strategy: { groups }, ...QUICK_POLL };
};

const without = (group: Record<string, unknown>, key: string) => Object.fromEntries(Object.entries(group).filter(([k]) => k !== key));

describe('invalid group-deployment input fails the execution at once, naming group and field, touching nothing', () => {
  let runtime: EmbeddedRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime({ site: deploymentSite(namedNodes('n', 4)) });
  });
  afterAll(() => runtime.close());

  it.each<[string, unknown, RegExp]>([
    ['a group without critical', withGroup(0, (g) => without(g, 'critical')), /groups\[0\] \(a\)\.critical: is required: true or false/],
    [
      'a percentage of 150',
      withGroup(0, (g) => ({ ...g, success_criteria: { percent_successful_nodes: 150 } })),
      /groups\[0\] \(a\)\.success_criteria\.percent_successful_nodes: must be a whole number from 0 to 100/,
    ],
    ['an unknown key in a group', withGroup(1, (g) => ({ ...g, colour: 'red' })), /groups\[1\] \(b\)\.colour: unknown key \(expected one of: name, critical, /],
    [
      'a dependency cycle',
      withGroup(0, (g) => ({ ...g, depends_on: ['b'] })),
      /groups\[0\] \(a\)\.depends_on: The following are involved in a circular dependency: a, b/,
    ],
    ['a depends_on naming no group', withGroup(1, (g) => ({ ...g, depends_on: ['a', 'zz'] })), /groups\[1\] \(b\)\.depends_on\[1\]: unknown group 'zz'/],
    [
      'two groups of one name',
      withGroup(1, (g) => ({ ...g, name: 'a', depends_on: [] })),
      /groups\[1\] \(a\)\.name: duplicate group name 'a' \(first used by groups\[0\]\)/,
    ],
    [
      'a malformed label',
      withGroup(1, (g) => ({ ...g, selectors: [{ node_labels: ['rack:r1:extra'] }] })),
      /groups\[1\] \(b\)\.selectors\[0\]\.node_labels\[0\]: label 'rack:r1:extra' must be key:value/,
    ],
    ['a strategy and a node list together', { strategy: { groups: validGroups() }, nodes: ['n00'] }, /nodes: give a strategy or a list of nodes, not both/],
    ['maxParallelGroups 0', { strategy: { groups: validGroups() }, maxParallelGroups: 0 }, /maxParallelGroups: maxParallelGroups must be at least 1/],
    ['a node list naming an unknown node', { nodes: ['n00', 'zz'] }, /nodes\[1\]: unknown node 'zz'/],
  ])('rejects %s', async (_case, input, expected) => {
    const { outcome, message, record, site } = await runDeployment(runtime, input);

    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toBe('InvalidInputError');
    expect(message).toMatch(/^Invalid (deployment strategy|deployment request|node selection): /);
    expect(message).toMatch(expected);
    expect(record).toBeUndefined();
    expect(touchedNodes(site)).toEqual([]);
  });

  it('fails at once: Start Deployment is called once, not retried', async () => {
    const { outcome } = await runDeployment(
      runtime,
      withGroup(0, (g) => without(g, 'critical')),
    );

    expect(outcome.error).toBe('InvalidInputError');
    // Invalid input cannot get better by retrying. On AWS each retry of the Task waits first
    // (5 s, 10 s, 20 s, ... up to 120 s, full jitter): minutes before the execution fails.
    expect(outcome.figures.lambdaInvocations).toBe(1);
  });

  it('reports every problem of a strategy in one cause', async () => {
    const input = {
      strategy: {
        groups: [
          groupOf('a', ['n00'], { critical: 'yes' }),
          groupOf('b', ['n01'], { depends_on: ['nope'], success_criteria: { minimum_successful_nodes: -1 } }),
        ],
      },
    };
    const { outcome, message } = await runDeployment(runtime, input);

    expect(outcome.error).toBe('InvalidInputError');
    expect(message).toMatch(/groups\[0\] \(a\)\.critical: must be true or false/);
    expect(message).toMatch(/groups\[1\] \(b\)\.success_criteria\.minimum_successful_nodes: must be a whole number >= 0/);
    expect(message).toMatch(/groups\[1\] \(b\)\.depends_on\[0\]: unknown group 'nope'/);
  });
});
