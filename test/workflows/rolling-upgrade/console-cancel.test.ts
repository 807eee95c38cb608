import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { causeMessage } from '../../../control-plane/execution-cause';
import { runUpgrade, startTestRuntime } from '../../support/embedded';
import { buildSite, upgradeRequest } from '../../support/sites';

/** `{"cancelUpgradeId": ID}` on the rolling-upgrade machine: the console's cancel (the running case is a scenario against rollout serve). */
describe('an execution started with {cancelUpgradeId}', () => {
  let runtime: EmbeddedRuntime;
  beforeAll(async () => {
    runtime = await startTestRuntime({ site: buildSite(2) });
  });
  afterAll(() => runtime.close());

  it('fails naming the problem for an unknown id, a session that has ended, or a malformed input; and creates no session', async () => {
    const ended = await runUpgrade(runtime, upgradeRequest({ upgradeStepSize: 2 }));
    expect(ended.report.state).toBe('READY');
    const before = (await runtime.sessions()).length;

    const unknown = await (await runtime.run('rollingUpgrade', { cancelUpgradeId: 'no-such-session' })).outcome;
    expect(unknown).toMatchObject({ status: 'FAILED', error: 'SessionNotFoundError' });
    const over = await (await runtime.run('rollingUpgrade', { cancelUpgradeId: ended.upgradeId })).outcome;
    expect(over).toMatchObject({ status: 'FAILED', error: 'SessionNotCancellableError' });
    expect(causeMessage(over)).toContain(`session ${ended.upgradeId} is READY and cannot be cancelled`);
    const malformed = await (await runtime.run('rollingUpgrade', { cancelUpgradeId: '', startingLabel: 'compute' })).outcome;
    expect(malformed).toMatchObject({ status: 'FAILED', error: 'InvalidInputError' });
    expect(causeMessage(malformed)).toMatch(/cancelUpgradeId: must not be empty.*startingLabel: unknown key/);

    expect(await runtime.sessions()).toHaveLength(before);
  });
});
