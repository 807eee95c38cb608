// First: every caller of the request parsers reaches a counting wrapper of the real one.
import '../support/counted-parsers';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCliInProcess } from '../support/cli';
import { TEST_SITE_UPGRADE, upgradeArgs } from '../../scripts/upgrade-args';
import { startProfiledSite } from '../support/simulator';

/**
 * One validation per boundary: the CLI parses its request once (the edge), and the workflow's first
 * activity parses it once more (its own trust boundary: a console or EventBridge start reaches it
 * unchecked). The embedded control plane runs in this process, so each count is the CLI's plus the workflow's.
 */
jest.mock('../../adapters/site/site-from-profile', () => {
  const actual = jest.requireActual('../../adapters/site/site-from-profile');
  return { ...actual, createSiteFromProfile: jest.fn(actual.createSiteFromProfile) };
});
jest.mock('../../core/task-graph/parse-task-graph', () => {
  const actual = jest.requireActual('../../core/task-graph/parse-task-graph');
  return { ...actual, parseTaskGraph: jest.fn(actual.parseTaskGraph), validateTaskGraph: jest.fn(actual.validateTaskGraph) };
});

import { parseUpgradeRequest } from '../../core/rolling-upgrade/upgrade-request';
import { parseDeploymentRequest } from '../../core/group-deployment/deployment-request';
import { parseDeploymentStrategy } from '../../core/group-deployment/parse-strategy';
import { parseTaskGraph, validateTaskGraph } from '../../core/task-graph/parse-task-graph';
import { createSiteFromProfile } from '../../adapters/site/site-from-profile';

const examples = path.resolve(__dirname, '..', '..', 'examples');
const site = (name: string) => path.join(examples, 'sites', name);
const calls = (fn: unknown) => (fn as jest.Mock).mock.calls.length;
const graphReads = () => calls(parseTaskGraph) + calls(validateTaskGraph);

describe('a CLI run parses its request once, and the workflow once more', () => {
  beforeEach(() => jest.clearAllMocks());

  it('rollout upgrade: parseUpgradeRequest twice (the CLI, Open Session)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-parsed-once-'));
    const siteFile = path.join(dir, 'site.yaml');
    await writeFile(
      siteFile,
      'nodes:\n  - {name: n1, nid: 1}\n  - {name: n2, nid: 2}\ngroups: {compute: [n1, n2], upgrading: [], failed: []}\nbootTemplates: [cos-2.4]\n',
    );
    const result = await runCliInProcess(upgradeArgs({ ...TEST_SITE_UPGRADE, site: siteFile, json: true }));
    expect(result.code).toBe(0);
    expect(calls(parseUpgradeRequest)).toBe(2);
  });

  it('rollout deploy --strategy: the request twice (the CLI, Start Deployment), the strategy file twice (the CLI, the workflow)', async () => {
    const strategy = path.join(examples, 'strategies', 'shipyard-example.yaml');
    const result = await runCliInProcess(['deploy', '--site', site('group-deployment-example.yaml'), '--strategy', strategy, '--json']);
    expect(result.code).toBe(0);
    expect(calls(parseDeploymentRequest)).toBe(2);
    expect(calls(parseDeploymentStrategy)).toBe(2);
  });

  it('rollout deploy --graph: the graph read twice (the CLI, from its file; the workflow, Open Task Run)', async () => {
    const graph = path.join(examples, 'graphs', 'fuel-granular-example.yaml');
    const result = await runCliInProcess(['deploy', '--site', site('fuel-granular-example.yaml'), '--graph', graph, '--json']);
    expect(result.code).toBe(0);
    expect(graphReads()).toBe(2);
  });

  it("rollout deploy --strategy --graph: the graph read on the CLI once (its file), then by Start Deployment and each group's task run", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-parsed-once-'));
    const strategy = path.join(dir, 'strategy.yaml');
    await writeFile(
      strategy,
      'groups:\n  - {name: control, critical: true, depends_on: [], selectors: [{node_names: [node-1, node-2, node-3, node-4, node-5]}]}\n  - {name: rest, critical: true, depends_on: [control], selectors: [{node_names: [node-6, node-7, node-8]}]}\n',
    );
    const graph = path.join(examples, 'graphs', 'fuel-granular-example.yaml');
    const result = await runCliInProcess(['deploy', '--site', site('fuel-granular-example.yaml'), '--graph', graph, '--strategy', strategy, '--json']);
    expect(result.code).toBe(0);
    expect(calls(parseDeploymentRequest)).toBe(2);
    expect(graphReads()).toBe(4);
  });
});

describe('a CLI run connects its site profile once', () => {
  it('rollout upgrade --site-config: the group check before the run and the runtime that runs it share one connection', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-connected-once-'));
    const { simulator, profile } = await startProfiledSite(['n1', 'n2'], 200, dir);
    try {
      jest.clearAllMocks();
      const result = await runCliInProcess(upgradeArgs({ ...TEST_SITE_UPGRADE, siteConfig: profile, json: true }));
      expect(result.code).toBe(0);
      expect(calls(createSiteFromProfile)).toBe(1);
    } finally {
      await simulator.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
