import { buildDeploymentReport } from '../../../control-plane/reports/deployment-report';
import { eventually, startTestRuntime } from '../../support/embedded';
import { deploymentSite, groupOf, namedNodes, namesOf, QUICK_POLL } from '../../support/deployment-sites';

describe('the stored deployment is readable while it runs', () => {
  it('shows an earlier group DEPLOYED while a later one is still at work, then the end', async () => {
    const early = namedNodes('early', 2);
    const late = namedNodes('late', 3);
    const runtime = await startTestRuntime({ site: deploymentSite([...early, ...late]) });
    try {
      const groups = [
        groupOf('early', namesOf(early), { critical: true }),
        // One node at a time: the late group stays PREPARED for three deploys.
        groupOf('late', namesOf(late), { depends_on: ['early'], strategy: { type: 'one_by_one' } }),
      ];
      const run = await runtime.run('groupDeployment', { strategy: { groups }, ...QUICK_POLL });
      let ended = false;
      void run.outcome.then(() => (ended = true));

      const first = await eventually(
        runtime,
        async () => {
          const record = await runtime.deployments.getDeployment(run.id);
          return record && record.state.groups['early']?.stage !== 'NOT_STARTED' ? record : undefined;
        },
        'the early group to move',
      );
      expect(first.status).toBe('RUNNING');
      expect(first.groupCount).toBe(2);
      expect(first.nodeCount).toBe(5);
      expect(first.state.groups['late']!.stage).toBe('NOT_STARTED');

      const midway = await eventually(
        runtime,
        async () => {
          const record = await runtime.deployments.getDeployment(run.id);
          return record?.state.groups['late']?.stage === 'PREPARED' ? record : undefined;
        },
        'the late group to be prepared',
      );
      expect(ended).toBe(false);
      // Read at the simulated instant the probe saw: the clock stands still meanwhile.
      await runtime.clock.busy(async () => {
        const report = await buildDeploymentReport(runtime.deployments, midway);
        expect(report.status).toBe('RUNNING');
        expect(report.criticalGroupsFailed).toBe(false);
        expect(report.groups['early']).toMatchObject({ stage: 'DEPLOYED', critical: true, nodes: namesOf(early) });
        expect(report.groups['late']).toMatchObject({ stage: 'PREPARED', critical: false, nodes: namesOf(late) });
        expect(report.nodes).toEqual({ early00: 'DEPLOYED', early01: 'DEPLOYED', late00: 'PREPARED', late01: 'PREPARED', late02: 'PREPARED' });
        // The site agrees: the late nodes were prepared, not all deployed yet.
        const site = runtime.simulator.state();
        expect(namesOf(late).map((n) => site.nodes[n]!.prepareCount)).toEqual([1, 1, 1]);
        expect(
          namesOf(late)
            .map((n) => site.nodes[n]!.deployCount)
            .filter((c) => c === 1).length,
        ).toBeLessThan(3);
        expect((await runtime.deployments.list()).map((d) => d.deploymentId)).toContain(run.id);
      });

      const outcome = await run.outcome;
      expect(outcome.status).toBe('SUCCEEDED');
      const final = await runtime.deployments.getDeployment(run.id);
      expect(final!.status).toBe('SUCCEEDED');
      expect(final!.state.groups['late']!.stage).toBe('DEPLOYED');
    } finally {
      await runtime.close();
    }
  });

  it('a failed deployment is recorded FAILED at its end', async () => {
    const runtime = await startTestRuntime({ site: deploymentSite([{ name: 'x', faults: { prepare: 'fail' } }]) });
    try {
      const run = await runtime.run('groupDeployment', QUICK_POLL);
      const outcome = await run.outcome;
      expect(outcome.error).toBe('CriticalGroupFailed');
      const record = await runtime.deployments.getDeployment(run.id);
      expect(record!.status).toBe('FAILED');
      expect((await buildDeploymentReport(runtime.deployments, record!)).status).toBe('FAILED');
    } finally {
      await runtime.close();
    }
  });
});
