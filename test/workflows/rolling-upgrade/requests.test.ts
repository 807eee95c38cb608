import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { causeMessage } from '../../../control-plane/execution-cause';
import { buildSite, upgradeRequest } from '../../support/sites';
import { startTestRuntime } from '../../support/embedded';

describe('invalid rolling-upgrade requests (CRUS 422 cases) fail at once, naming the field', () => {
  let runtime: EmbeddedRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime({ site: buildSite(2) });
  });
  afterAll(() => runtime.close());

  const { startingLabel: _omitted, ...withoutStartingLabel } = upgradeRequest();
  it.each([
    ['a missing field', withoutStartingLabel, /startingLabel/],
    ['a step size below 1', upgradeRequest({ upgradeStepSize: 0 }), /upgradeStepSize: upgradeStepSize must be at least 1/],
    ['a step size that is not a whole number', upgradeRequest({ upgradeStepSize: 1.5 }), /upgradeStepSize/],
    ['an unknown workload manager type', upgradeRequest({ workloadManagerType: 'pbs' }), /workloadManagerType: workloadManagerType must be one of: slurm/],
    ['an empty label', upgradeRequest({ failedLabel: '  ' }), /failedLabel: failedLabel must not be empty/],
    ['a label used twice', upgradeRequest({ failedLabel: 'compute' }), /failedLabel must differ from startingLabel/],
    ['an unknown key', upgradeRequest({ stepsize: 3 }), /stepsize: unknown key/],
    [
      'a boot template the boot service does not know',
      upgradeRequest({ upgradeTemplateId: 'img-9' }),
      /upgradeTemplateId: boot template 'img-9' does not exist/,
    ],
    ['a timeout of zero', upgradeRequest({ bootTimeoutSeconds: 0 }), /bootTimeoutSeconds/],
  ])('rejects %s', async (_case, request, expected) => {
    const before = runtime.simulator.state();
    const run = await runtime.run('rollingUpgrade', request);
    const outcome = await run.outcome;

    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toBe('InvalidInputError');
    expect(causeMessage(outcome)).toMatch(expected);
    expect(await runtime.store.getSession(run.id)).toBeUndefined();
    expect(runtime.simulator.state().nodes).toEqual(before.nodes);
  });
});
