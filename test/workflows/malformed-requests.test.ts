import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { buildSite, nodeName, upgradeRequest } from '../support/sites';
import { startTestRuntime } from '../support/embedded';

/**
 * Workflow requests as the console or an API caller would send them (issue 12): refused by the
 * workflow itself with InvalidInputError naming the problem (never States.Runtime or an engine
 * path error), and no node touched. The first state reads the request as `$$.Execution.Input`: the
 * same value as `$` there, and one the engine resolves on a null input too.
 */
describe('malformed workflow requests', () => {
  let runtime: EmbeddedRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime({ site: buildSite(4) });
  });
  afterAll(() => runtime.close());

  const untouched = () => {
    for (const node of Object.values(runtime.simulator.state().nodes))
      expect({ drains: node.drainCount, boots: node.bootCount }).toEqual({ drains: 0, boots: 0 });
  };

  it.each<[string, 'rollingUpgrade' | 'groupDeployment', unknown, RegExp]>([
    ['an upgrade request that is null', 'rollingUpgrade', null, /must be an object \(a mapping of fields\), not null/],
    ['an upgrade request that is a list', 'rollingUpgrade', [], /must be an object \(a mapping of fields\), not a list/],
    ['an upgrade request that is a string', 'rollingUpgrade', 'upgrade please', /must be an object \(a mapping of fields\), not a string/],
    ['an upgrade request that is a number', 'rollingUpgrade', 42, /must be an object \(a mapping of fields\), not a number/],
    ['a continuation whose id is a number', 'rollingUpgrade', { resumeUpgradeId: 5 }, /resumeUpgradeId: resumeUpgradeId must be a session id/],
    [
      'a continuation that also carries request fields',
      'rollingUpgrade',
      { ...upgradeRequest(), resumeUpgradeId: 'u-1' },
      /Invalid continuation request: startingLabel, .*: unknown key/,
    ],
    ['an upgrade request with an unknown key', 'rollingUpgrade', upgradeRequest({ stepSize: 2 }), /stepSize: unknown key/],
    ['a poll interval of 1e9', 'rollingUpgrade', upgradeRequest({ pollIntervalSeconds: 1e9 }), /pollIntervalSeconds: pollIntervalSeconds must be at most 3600/],
    [
      'a return timeout of 1e12',
      'rollingUpgrade',
      upgradeRequest({ wlmReturnTimeoutSeconds: 1e12 }),
      /wlmReturnTimeoutSeconds: wlmReturnTimeoutSeconds must be at most 604800/,
    ],
    ['a label with a space', 'rollingUpgrade', upgradeRequest({ startingLabel: 'compute nodes' }), /startingLabel: .* is not a valid group label/],
    ['a step size as text', 'rollingUpgrade', upgradeRequest({ upgradeStepSize: '0x10' }), /upgradeStepSize/],
    ['a deployment request that is null', 'groupDeployment', null, /must be an object \(a mapping of fields\), not null/],
    ['a deployment request that is a list', 'groupDeployment', [], /must be an object \(a mapping of fields\), not a list/],
    ['a deployment of a node named ..', 'groupDeployment', { nodes: ['..'] }, /nodes\[0\]: .*\.\..* is not a valid node name/],
    [
      'a deployment strategy naming a node the site lacks, beside a real one',
      'groupDeployment',
      { strategy: { groups: [{ name: 'g', critical: false, depends_on: [], selectors: [{ node_names: [nodeName(0), 'ghost'] }] }] } },
      /groups\[0\] \(g\)\.node_names: no node of the site is named 'ghost'/,
    ],
    [
      'a deployment poll interval above an hour',
      'groupDeployment',
      { pollIntervalSeconds: 3601 },
      /pollIntervalSeconds: pollIntervalSeconds must be at most 3600/,
    ],
  ])('%s', async (_case, workflow, input, message) => {
    const run = await runtime.run(workflow, input);
    const outcome = await run.outcome;
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'InvalidInputError', cause: expect.stringMatching(message) });
    untouched();
  });
});
