import { readFileSync } from 'node:fs';
import { simulatedSiteClients } from '../../../local/simulated-site-clients';
import { defaultGroupDeploymentSettings, type GroupDeploymentDependencies } from '../../../lambdas/activities/group-deployment/dependencies';
import { planPhase } from '../../../lambdas/activities/group-deployment/plan-phase';
import { startDeployment, type DeploymentPointer } from '../../../lambdas/activities/group-deployment/start-deployment';
import type { ExecutionFigures } from '../../../local/local-step-functions';
import { ASL_FILES } from '../../../contracts';
import { HISTORY_EVENTS } from '../../../core/history-events';
import { pageHistoryEvents } from '../../../core/group-deployment/batch-pages';
import { maxPolls } from '../../../core/group-deployment/poll-schedule';
import { startTestRuntime } from '../../support/embedded';
import { deploymentSite, groupOf, namedNodes, namesOf, QUICK_POLL, runDeployment } from '../../support/deployment-sites';

/** History events per execution, with AWS's accounting (core/history-events.ts). No retries are expected here. */
const { task: TASK, simpleState: SIMPLE, mapState: MAP, mapIteration: ITERATION, execution: EXECUTION } = HISTORY_EVENTS;

type Asl = { States: Record<string, { Type: string; ItemProcessor?: Asl }> };
const readAsl = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Asl;
const statesOf = (asl: Asl) => Object.fromEntries(Object.entries(asl.States).map(([name, state]) => [name, state.Type]));

/** The most Check Batch calls of one batch: the poll schedule of core/group-deployment, the last one at the timeout. */
const maxChecks = (pollIntervalSeconds: number, timeoutSeconds: number, maxPollSeconds: number) =>
  maxPolls(timeoutSeconds, { pollIntervalSeconds, maxPollSeconds });

/** run-node-batches: the page's events as the pages are sized by them (core/group-deployment/batch-pages.ts). */
const pageBound = pageHistoryEvents;

/** deploy-group, per phase: Prepare/Deploy (Pass), Plan Phase, Phase Due, Run Batch Pages (Map of page Tasks), Evaluate Phase, Next Phase; then Group Done. */
const groupBound = (pagesPerPhase: number) => EXECUTION + 2 * (SIMPLE + TASK + SIMPLE + MAP + pagesPerPhase * (ITERATION + TASK) + TASK + SIMPLE) + SIMPLE;

/** group-deployment with one group: Start, Cancel Only, one round (Pick, Any Ready, Map of one Deploy Group), then Pick, Any Ready, Finish, Outcome, Succeeded. */
const parentBound = EXECUTION + TASK + SIMPLE + (TASK + SIMPLE + MAP + ITERATION + TASK) + TASK + SIMPLE + TASK + SIMPLE + SIMPLE;

describe('Step Functions quotas', () => {
  it('the workflows have the states the bounds count', () => {
    const batches = readAsl(ASL_FILES.runNodeBatches);
    expect(statesOf(batches)).toEqual({ 'List Batches': 'Pass', 'Run Batches': 'Map' });
    expect(statesOf(batches.States['Run Batches']!.ItemProcessor!)).toEqual({
      'Start Batch': 'Task',
      'Batch Finished': 'Choice',
      'Wait For Batch': 'Wait',
      'Check Batch': 'Task',
      'Batch Done': 'Succeed',
    });
    const group = readAsl(ASL_FILES.deployGroup);
    expect(statesOf(group)).toEqual({
      Prepare: 'Pass',
      'Plan Phase': 'Task',
      'Phase Due': 'Choice',
      'Run Batch Pages': 'Map',
      'Run Task Graph': 'Task',
      'Task Run Done': 'Choice',
      'Evaluate Phase': 'Task',
      'Next Phase': 'Choice',
      Deploy: 'Pass',
      'Group Done': 'Succeed',
    });
    expect(statesOf(group.States['Run Batch Pages']!.ItemProcessor!)).toEqual({ 'Run Batch Page': 'Task' });
  });

  it('with the default settings a page of batches stays well inside 25,000 history events', () => {
    const checks = maxChecks(30, 3600, defaultGroupDeploymentSettings.maxPollSeconds);
    expect(pageBound(defaultGroupDeploymentSettings.batchesPerPage, checks)).toBeLessThan(12_500);
  });

  it('a one_by_one group of 23 nodes runs in pages of 5 batches, each execution within its bound', async () => {
    const nodes = namedNodes('n', 23);
    const batchesPerPage = 5;
    const runtime = await startTestRuntime({ site: deploymentSite(nodes), deploymentSettings: { batchesPerPage } });
    try {
      const prepareTimeoutSeconds = 60;
      const deployTimeoutSeconds = 120;
      const { outcome, report } = await runDeployment(runtime, {
        strategy: { groups: [groupOf('g', namesOf(nodes), { strategy: { type: 'one_by_one' } })] },
        ...QUICK_POLL,
        prepareTimeoutSeconds,
        deployTimeoutSeconds,
      });
      expect(outcome.status).toBe('SUCCEEDED');
      expect(Object.values(report!.nodes).every((stage) => stage === 'DEPLOYED')).toBe(true);

      const { maxPollSeconds } = defaultGroupDeploymentSettings;
      const checks = Math.max(
        maxChecks(QUICK_POLL.pollIntervalSeconds, prepareTimeoutSeconds, maxPollSeconds),
        maxChecks(QUICK_POLL.pollIntervalSeconds, deployTimeoutSeconds, maxPollSeconds),
      );
      const machine = (figures: ExecutionFigures) => figures.executionArn.split(':')[6];
      const byMachine = (name: string) => runtime.engine.executions.filter((figures) => machine(figures) === name);
      const pages = byMachine('RunNodeBatches');
      const groups = byMachine('DeployGroup');
      const parents = byMachine('GroupDeployment');

      // ceil(23 / 5) = 5 pages per phase, one child execution each.
      expect(pages).toHaveLength(10);
      expect(groups).toHaveLength(1);
      expect(parents).toHaveLength(1);
      for (const page of pages) expect(page.historyEvents).toBeLessThanOrEqual(pageBound(batchesPerPage, checks));
      // A page's Lambda calls: a Start Batch per batch plus its checks, never more than 5 batches' worth.
      for (const page of pages) expect(page.lambdaInvocations).toBeLessThanOrEqual(batchesPerPage * (1 + checks));
      expect(groups[0]!.historyEvents).toBeLessThanOrEqual(groupBound(5));
      expect(parents[0]!.historyEvents).toBeLessThanOrEqual(parentBound);
      for (const figures of runtime.engine.executions) expect(figures.largestPayloadBytes).toBeLessThan(1024);
    } finally {
      await runtime.close();
    }
  });

  it('node lists never travel in state payloads: 300 nodes in one action keep payloads small', async () => {
    // Selected by tag, so the execution input is small too: only the workflow's own payloads are measured.
    const nodes = namedNodes('node-with-a-long-name-', 300).map((node) => ({ ...node, tags: ['web'] }));
    const runtime = await startTestRuntime({ site: deploymentSite(nodes) });
    try {
      const groups = [{ name: 'g', critical: true, depends_on: [], selectors: [{ node_tags: ['web'] }] }];
      const { outcome, report } = await runDeployment(runtime, { strategy: { groups }, ...QUICK_POLL });
      expect(report!.groups['g']!.nodes).toHaveLength(300);
      expect(outcome.status).toBe('SUCCEEDED');
      for (const figures of runtime.engine.executions) expect(figures.largestPayloadBytes).toBeLessThan(1024);
    } finally {
      await runtime.close();
    }
  });
});

describe('page sizing against the phase timeouts a request may set', () => {
  it.each([3600, 4 * 3600, 24 * 3600])(
    'a prepare timeout of %i s: every page of a 150-node one_by_one group stays inside 25,000 events',
    async (prepareTimeoutSeconds) => {
      const nodes = namedNodes('n', 150);
      const runtime = await startTestRuntime({ site: deploymentSite(nodes) });
      try {
        const site = simulatedSiteClients(runtime.simulator);
        const deps: GroupDeploymentDependencies = {
          store: runtime.deployments,
          inventory: site.inventory,
          provisioner: site.provisioner!,
          locks: runtime.store.locks,
          taskRuns: runtime.taskRuns,
          clock: runtime.clock,
          settings: defaultGroupDeploymentSettings,
        };
        const request = { strategy: { groups: [groupOf('g', namesOf(nodes), { strategy: { type: 'one_by_one' } })] }, prepareTimeoutSeconds };
        const { deploymentId } = (await startDeployment({ input: request, executionId: `quota-${prepareTimeoutSeconds}` }, deps)) as DeploymentPointer;
        const plan = await planPhase({ deploymentId, group: 'g', phase: 'PREPARE' }, deps);

        expect(plan.batchCount).toBe(150);
        // The request's default poll interval (30 s): each batch may poll until the timeout (a hung node).
        const checks = maxChecks(30, prepareTimeoutSeconds, defaultGroupDeploymentSettings.maxPollSeconds);
        for (const page of plan.pages) expect(pageBound(page.last - page.first + 1, checks)).toBeLessThanOrEqual(25_000);
      } finally {
        await runtime.close();
      }
    },
  );
});
