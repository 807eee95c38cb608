import { SiteServiceError } from '../../../core/errors';
import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import type { LocalFunction } from '../../../local/local-step-functions';
import { startTestRuntime } from '../../support/embedded';
import { deploymentSite, groupOf, namedNodes, namesOf, QUICK_POLL, runDeployment } from '../../support/deployment-sites';

/**
 * Errors the deployment's own steps cannot absorb (Pick Ready Groups, Finish Deployment: their
 * retries run out), on the real activities and store: Record Failure marks the deployment FAILED
 * with the error, so the store never shows RUNNING for a deployment nothing works on any more.
 */

const A = namedNodes('a', 2);
const B = namedNodes('b', 2);
const GROUPS = [groupOf('a', namesOf(A), { critical: true }), groupOf('b', namesOf(B), { depends_on: ['a'] })];
const STORE_DOWN = 'POST /actions answered 500';

/** A runtime whose `fn` fails with a site error from its `failFrom`-th call on (the calls before run the real function). */
async function withFailing(
  fn: string,
  failFrom: number,
  test: (runtime: EmbeddedRuntime, calls: () => number) => Promise<void>,
  before?: (runtime: EmbeddedRuntime, payload: unknown) => Promise<void>,
) {
  let calls = 0;
  const wrapFunction = (name: string, real: LocalFunction): LocalFunction =>
    name !== fn
      ? real
      : async (payload) => {
          calls++;
          if (calls < failFrom) return real(payload);
          await before?.(runtime, payload);
          throw new SiteServiceError('provisioner', STORE_DOWN, 500);
        };
  // Called only once the runtime runs a workflow: `runtime` is set by then.
  const runtime: EmbeddedRuntime = await startTestRuntime({ site: deploymentSite([...A, ...B]), wrapFunction });
  try {
    await test(runtime, () => calls);
  } finally {
    await runtime.close();
  }
}

describe('group deployment: an error its own steps cannot absorb', () => {
  it('Finish Deployment failing past its retries: the deployment ends FAILED in the store with the error, its locks given back, and cannot be resumed', async () => {
    const leftover = A[0]!.name;
    // A lock the deployment still holds when Finish breaks (a group its cancel cut short would leave one).
    const holdLock = async (runtime: EmbeddedRuntime, payload: unknown) => {
      await runtime.store.locks.tryLockNodes((payload as { deploymentId: string }).deploymentId, [leftover]);
    };
    await withFailing(
      'FinishDeployment',
      1,
      async (runtime, calls) => {
        const run = await runDeployment(runtime, { strategy: { groups: GROUPS }, ...QUICK_POLL });

        expect(run.outcome).toMatchObject({ status: 'FAILED', error: 'SiteServiceError' });
        expect(run.outcome.cause).toContain(STORE_DOWN);
        expect(calls()).toBe(13);
        expect(
          runtime.engine
            .execution(run.outcome.executionArn)!
            .history.filter((e) => e.type === 'FailStateEntered')
            .map((e) => e.stateName),
        ).toEqual(['Deployment Failed']);
        // Every group ran; the deployment did not stay RUNNING.
        expect(run.record!.status).toBe('FAILED');
        expect(run.report).toMatchObject({ status: 'FAILED', criticalGroupsFailed: false, failedCriticalGroups: [] });
        expect(Object.values(run.report!.groups).map((g) => g.stage)).toEqual(['DEPLOYED', 'DEPLOYED']);
        expect(await runtime.deployments.messages.list(run.deploymentId)).toContain(`Deployment failed: SiteServiceError: provisioner: ${STORE_DOWN}`);
        expect(await runtime.store.locks.getLockOwners([leftover])).toEqual(new Map());

        const resumed = await runtime.run('groupDeployment', { resumeDeploymentId: run.deploymentId });
        expect(await resumed.outcome).toMatchObject({ status: 'FAILED', error: 'InvalidInputError' });
      },
      holdLock,
    );
  }, 60_000);

  it('Pick Ready Groups failing past its retries after the first group: the deployment ends FAILED where it stood', async () => {
    await withFailing('PickReadyGroups', 2, async (runtime, calls) => {
      const run = await runDeployment(runtime, { strategy: { groups: GROUPS }, ...QUICK_POLL });

      expect(run.outcome).toMatchObject({ status: 'FAILED', error: 'SiteServiceError' });
      expect(run.outcome.cause).toContain(STORE_DOWN);
      // The first call ran for real; then the first attempt of the second and its 12 retries.
      expect(calls()).toBe(14);
      expect(run.record!.status).toBe('FAILED');
      expect(run.report!.groups['a']!.stage).toBe('DEPLOYED');
      expect(run.report!.groups['b']!.stage).toBe('NOT_STARTED');
      expect(await runtime.deployments.messages.latest(run.deploymentId)).toBe(`Deployment failed: SiteServiceError: provisioner: ${STORE_DOWN}`);
      expect(run.site.nodes[B[0]!.name]).toMatchObject({ prepareCount: 0, deployCount: 0 });
    });
  }, 60_000);
});
