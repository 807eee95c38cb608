import { buildDeploymentReport } from '../../../control-plane/reports/deployment-report';
import { eventually, startTestRuntime } from '../../support/embedded';
import { parseSiteDefinition } from '../../../simulator';
import { deploymentNodeRuns, groupOf, namedNodes, namesOf, QUICK_POLL, QUICK_TIMING } from '../../support/deployment-sites';
import { upgradeRequest } from '../../support/sites';

/**
 * Issue 26, item 3: a stopped deployment, resumed, recorded healthy nodes FAILED. Group ga (4 nodes,
 * one at a time) was stopped after 2 of its nodes were prepared; the resume recomputed the phase over
 * the 2 nodes left, whose batches 0 and 1 met the site actions of the first two nodes by name: n03 and
 * n04, never prepared, were recorded FAILED, and both critical groups failed. A resumed phase now
 * finishes (the same batches, the ones that ran read back) before it is judged. Checked against the
 * site's own record: the provisioner's node runs and each node's prepare and deploy counts.
 */
const GA = namedNodes('n', 4).map((node, i) => ({ ...node, name: `n0${i + 1}` }));
const GB = namedNodes('m', 2);
const GROUPS = [
  groupOf('ga', namesOf(GA), { critical: true, strategy: { type: 'one_by_one' }, success_criteria: { percent_successful_nodes: 100 } }),
  groupOf('gb', namesOf(GB), { critical: true, depends_on: ['ga'] }),
];

/** The deployment's nodes, and two more in group `compute` for a rolling upgrade beside it. */
const UPGRADED = ['u00', 'u01'];
const site = parseSiteDefinition({
  nodes: [...GA, ...GB, ...UPGRADED.map((name) => ({ name }))].map((node, i) => ({ ...node, nid: i + 1 })),
  groups: { compute: UPGRADED, upgrading: [], failed: [] },
  bootTemplates: ['img-2'],
  timing: { ...QUICK_TIMING, bootSeconds: 60, returnSeconds: 10 },
});

describe('stopping and resuming a group deployment', () => {
  it.each([
    ['alone', false],
    ['with a rolling upgrade beside it', true],
  ])(
    "%s: stopped after 2 of ga's 4 nodes were prepared, it ends STOPPED with n03, n04 untouched; resume prepares exactly n03 and n04, then deploys every node once, and both critical groups deploy",
    async (_, withUpgrade) => {
      const runtime = await startTestRuntime({ site });
      try {
        const upgrade = withUpgrade ? await runtime.run('rollingUpgrade', upgradeRequest({ upgradeStepSize: 1 })) : undefined;
        const run = await runtime.run('groupDeployment', { strategy: { groups: GROUPS }, ...QUICK_POLL });
        await eventually(runtime, async () => (deploymentNodeRuns(runtime, run.id).length >= 2 ? true : undefined), "ga's second prepare");
        const stop = await runtime.clock.busy(() => runtime.stop(run.id));
        expect(stop).toEqual({ id: run.id, kind: 'deployment', state: 'STOPPING', running: true });

        const stopped = await run.outcome;
        expect(stopped).toMatchObject({ status: 'SUCCEEDED', output: { status: 'STOPPED' } });
        const atStop = runtime.simulator.state();
        expect(deploymentNodeRuns(runtime, run.id).map((r) => `${r.phase} ${r.node} ${r.finishedAt !== undefined}`)).toEqual([
          'prepare n01 true',
          'prepare n02 true',
        ]);
        for (const node of ['n03', 'n04', ...namesOf(GB)]) expect({ node, ...counts(atStop.nodes[node]!) }).toEqual({ node, prepares: 0, deploys: 0 });
        const record = (await runtime.deployments.getDeployment(run.id))!;
        expect(record.status).toBe('STOPPED');
        const report = await buildDeploymentReport(runtime.deployments, record);
        expect(report.nodes).toEqual({ n01: 'PREPARED', n02: 'PREPARED', n03: 'NOT_STARTED', n04: 'NOT_STARTED', m00: 'NOT_STARTED', m01: 'NOT_STARTED' });
        expect(report.groups['ga']).toMatchObject({ stage: 'NOT_STARTED', failures: [] });

        const resumed = await runtime.run('groupDeployment', { resumeDeploymentId: run.id }, `${run.id}-resume-1`);
        expect(await resumed.outcome).toMatchObject({
          status: 'SUCCEEDED',
          output: { deploymentId: run.id, status: 'SUCCEEDED', criticalGroupsFailed: false },
        });
        const done = await buildDeploymentReport(runtime.deployments, (await runtime.deployments.getDeployment(run.id))!);
        expect(done.status).toBe('SUCCEEDED');
        expect(done.nodes).toEqual({ n01: 'DEPLOYED', n02: 'DEPLOYED', n03: 'DEPLOYED', n04: 'DEPLOYED', m00: 'DEPLOYED', m01: 'DEPLOYED' });
        expect(done.groups['ga']).toMatchObject({ stage: 'DEPLOYED', failures: [] });
        expect(done.groups['gb']).toMatchObject({ stage: 'DEPLOYED', failures: [] });
        // The resume says so, as an upgrade's and a task run's do (core/session-control.ts resumedMessage).
        expect(await runtime.deployments.messages.list(run.id)).toContain('Resumed after a stop');

        // The site: each node prepared once and deployed once; ga's prepares ran under their own batches, one at a time.
        const after = runtime.simulator.state();
        for (const node of [...namesOf(GA), ...namesOf(GB)]) expect({ node, ...counts(after.nodes[node]!) }).toEqual({ node, prepares: 1, deploys: 1 });
        const prepares = deploymentNodeRuns(runtime, run.id).filter((r) => r.group === 'ga' && r.phase === 'prepare');
        expect(prepares.map((r) => `${r.node} batch ${r.batch}`)).toEqual(['n01 batch 0', 'n02 batch 1', 'n03 batch 2', 'n04 batch 3']);
        expect(after.violations).toEqual([]);
        if (upgrade) {
          expect(await upgrade.outcome).toMatchObject({ status: 'SUCCEEDED' });
          for (const node of UPGRADED) expect(runtime.simulator.state().nodes[node]).toMatchObject({ bootCount: 1, prepareCount: 0, deployCount: 0 });
        }
      } finally {
        await runtime.close();
      }
    },
  );
});

function counts(node: { prepareCount: number; deployCount: number }) {
  return { prepares: node.prepareCount, deploys: node.deployCount };
}
