import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { inventoryFromSite } from '../../../cli/inventory-from-site';
import { InvalidInputError } from '../../../core/errors';
import { parseDeploymentStrategy, planDeployment } from '../../../core/group-deployment';
import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { parseSiteDefinition } from '../../../simulator';
import { call, startServedApi } from '../../support/api';
import { runCliInProcess } from '../../support/cli';
import { startTestRuntime } from '../../support/embedded';
import { deploymentSite, groupOf, namedNodes, namesOf, QUICK_POLL, runDeployment, touchedNodes } from '../../support/deployment-sites';

/**
 * A success criterion the plan shows can never be met is refused before any node is touched, on every
 * surface (the workflow's own start, the REST API, `rollout deploy`), naming the group, the criterion,
 * what it needs and the most it can reach; `rollout plan deploy` shows the plan and warns the same.
 * (Before: a minimum of 1,000 successful nodes over a 19-node group ran, prepared 19 nodes, then failed.)
 */
const COMPUTE = namedNodes('cmp-', 19);
const MONITOR = namedNodes('mon-', 1);
const site = () => deploymentSite([...MONITOR, ...COMPUTE]);
const strategy = {
  groups: [
    groupOf('monitoring', namesOf(MONITOR)),
    groupOf('compute', namesOf(COMPUTE), { critical: true, success_criteria: { percent_successful_nodes: 50, minimum_successful_nodes: 1000 } }),
    // A group that selects no node (a tag no node has) can never have a successful one.
    { ...groupOf('spare', [], { success_criteria: { minimum_successful_nodes: 1 } }), selectors: [{ node_tags: ['spare'] }] },
  ],
};
const PROBLEMS = [
  {
    field: 'groups[1] (compute).success_criteria.minimum_successful_nodes',
    message: 'needs 1000 successful nodes, but the group selects 19 nodes: at most 19 can succeed, so it can never be met',
  },
  {
    field: 'groups[2] (spare).success_criteria.minimum_successful_nodes',
    message: 'needs 1 successful nodes, but the group selects no node: at most 0 can succeed, so it can never be met',
  },
];

describe('a success criterion that can never be met', () => {
  it('is refused by the plan (InvalidInputError naming each), or reported when asked (plan deploy)', () => {
    const parsed = parseDeploymentStrategy(strategy);
    const inventory = inventoryFromSite(site());
    let refused: unknown;
    try {
      planDeployment(parsed, inventory);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(InvalidInputError);
    expect((refused as InvalidInputError).problems).toEqual(PROBLEMS);
    expect(planDeployment(parsed, inventory, { unreachableCriteria: 'report' }).unreachableCriteria).toEqual(PROBLEMS);
    // At the boundary it can be met (all 19 succeeding): not refused.
    const met = { groups: [groupOf('compute', namesOf(COMPUTE), { success_criteria: { minimum_successful_nodes: 19 } })] };
    expect(planDeployment(parseDeploymentStrategy(met), inventory).unreachableCriteria).toBeUndefined();
  });

  describe('started from the console (the workflow start itself)', () => {
    let runtime: EmbeddedRuntime;
    beforeAll(async () => {
      runtime = await startTestRuntime({ site: site() });
    });
    afterAll(() => runtime.close());

    it('fails with InvalidInputError naming each, records the refusal, and touches no node', async () => {
      const run = await runDeployment(runtime, { strategy, ...QUICK_POLL });
      expect(run.outcome).toMatchObject({ status: 'FAILED', error: 'InvalidInputError' });
      for (const problem of PROBLEMS) expect(run.message).toContain(`${problem.field}: ${problem.message}`);
      expect(run.record).toBeUndefined();
      expect((await runtime.runStarts.get(run.deploymentId))?.refused?.problems).toEqual(PROBLEMS);
      expect(touchedNodes(run.site)).toEqual([]);
    });
  });

  describe('through the REST API', () => {
    let served: Awaited<ReturnType<typeof startServedApi>>;
    beforeAll(async () => {
      served = await startServedApi(parseSiteDefinition(site()));
    });
    afterAll(() => served.close());

    it('is a 422 naming each under strategy, and nothing starts', async () => {
      const reply = await call(served.runtime, served.apiEndpoint, 'POST', '/deployments', { strategy, ...QUICK_POLL });
      expect(reply.status).toBe(422);
      expect(reply.body.errors).toEqual(PROBLEMS.map((p) => ({ ...p, field: `strategy.${p.field}` })));
      expect((await call(served.runtime, served.apiEndpoint, 'GET', '/deployments')).body).toEqual([]);
      expect(touchedNodes(served.runtime.simulator.state())).toEqual([]);
    });
  });

  describe('from the CLI', () => {
    let dir: string;
    let strategyFile: string;
    let siteFile: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-unreachable-'));
      strategyFile = path.join(dir, 'strategy.yaml');
      siteFile = path.join(dir, 'site.yaml');
      await writeFile(strategyFile, stringify(strategy));
      await writeFile(siteFile, stringify(site()));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it('rollout deploy exits 2 naming each, before anything starts', async () => {
      const stateOut = path.join(dir, 'state.json');
      const result = await runCliInProcess(['deploy', '--site', siteFile, '--strategy', strategyFile, '--site-state-out', stateOut]);
      expect(result.code).toBe(2);
      for (const problem of PROBLEMS) expect(result.stderr).toContain(`${problem.field}: ${problem.message}`);
      expect(result.stdout).toBe('');
      // Nothing ran, so there is no site state to write.
      await expect(readFile(stateOut)).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('rollout plan deploy shows the plan and warns the same (stderr with --json), exit 0', async () => {
      const text = await runCliInProcess(['plan', 'deploy', '--site', siteFile, '--strategy', strategyFile]);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain('2. compute  [critical]');
      for (const problem of PROBLEMS) expect(text.stdout).toContain(`warning: ${problem.field}: ${problem.message} (deploy refuses this strategy)`);
      const json = await runCliInProcess(['plan', 'deploy', '--site', siteFile, '--strategy', strategyFile, '--json']);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({ order: ['monitoring', 'compute', 'spare'] });
      expect(json.stderr.trim().split('\n')).toEqual(PROBLEMS.map((p) => `warning: ${p.field}: ${p.message} (deploy refuses this strategy)`));
    });
  });
});
