import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { TEST_SITE_UPGRADE, type UpgradeFlags, upgradeArgs } from '../../scripts/upgrade-args';
import { parseSiteDefinition, siteProfileFor, SimClock, startSiteSimulator, type RunningSiteSimulator } from '../../simulator';
import { startServedApi } from '../support/api';
import { runCliInProcess } from '../support/cli';

/**
 * The malformed-input corpus (issue 12): every surface a user writes (CLI options, site files, site
 * profiles, strategies, task graphs, schedule request files, REST API bodies) refused with exit 2 (or
 * 400/422 over HTTP), a message naming the field or the problem, and no node touched. The CLI runs
 * in this process. Option cases run against a live simulated site (through a site profile) whose
 * state is compared before and after; file cases ask for --site-state-out, which a refused run never
 * writes; schedule and REST cases also check that the served control plane started nothing.
 * Workflow requests and the simulator's HTTP bodies: see test/workflows/malformed-requests.test.ts
 * and test/simulator/http-server.test.ts.
 */

const NAMES = ['x1000c0s0b0n0', 'x1000c0s0b0n1', 'x1000c0s1b0n0', 'x1000c0s1b0n1'];
const GOOD_SITE = {
  nodes: NAMES.map((name, i) => ({ name, nid: i + 1 })),
  groups: { compute: NAMES, upgrading: [], failed: [] },
  bootTemplates: ['cos-2.4'],
  timing: { bootSeconds: 60, returnSeconds: 10 },
};

/** An alias bomb: each level refers to the one before nine times; expanded it is 9^6 items. */
const ALIAS_BOMB = [
  'a: &a [x, x, x, x, x, x, x, x, x]',
  ...'bcdef'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdef'[i]}`).join(', ')}]`),
].join('\n');
const NOT_UTF8 = Buffer.from([0x6e, 0x6f, 0x64, 0x65, 0x73, 0x3a, 0x20, 0xff, 0xfe, 0x0a]);

let dir: string;
let site: RunningSiteSimulator;
let profile: string;
let caseNo = 0;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-corpus-'));
  site = await startSiteSimulator({ site: parseSiteDefinition(GOOD_SITE), clock: new SimClock({ timeScale: 1000 }) });
  profile = path.join(dir, 'profile.json');
  await writeFile(profile, JSON.stringify(siteProfileFor(site.urls, 'http', 1000)));
});
afterAll(() => site?.close());

async function file(name: string, content: string | Buffer): Promise<string> {
  const target = path.join(dir, `${++caseNo}-${name}`);
  await writeFile(target, content);
  return target;
}

/**
 * Runs the CLI and asserts the refusal: exit 2, the message, no stack trace, and the live site
 * untouched. A command that writes no site state (plan, schedule) is not asked for one.
 */
async function expectRefused(args: string[], message: RegExp, { writesState = true } = {}): Promise<void> {
  const before = siteNodes();
  const stateOut = path.join(dir, `${++caseNo}-state.json`);
  const result = await runCliInProcess(writesState ? [...args, '--site-state-out', stateOut] : args);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(message) });
  expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(result.stderr.split('\n')[0]!.length).toBeLessThan(1000); // a 10,000-character value is not echoed whole
  expect(existsSync(stateOut)).toBe(false);
  expect(siteNodes()).toEqual(before);
}

/** The site's nodes and groups (its clock runs on: `now` moves). */
function siteNodes(): unknown {
  const { now: _now, ...state } = site.state();
  return state;
}

/** `rollout upgrade` of the running site (--site-config) with `overrides` over TEST_SITE_UPGRADE (undefined leaves a flag out). */
const upgradeOfSite = (overrides: UpgradeFlags = {}) => upgradeArgs({ ...TEST_SITE_UPGRADE, siteConfig: profile, ...overrides });

describe('rollout upgrade: options', () => {
  it.each<[string, UpgradeFlags, RegExp]>([
    ['step size 0', { stepSize: '0' }, /--step-size must be at least 1/],
    ['step size a word', { stepSize: 'two' }, /--step-size .*whole number/],
    ['step size in hex', { stepSize: '0x10' }, /--step-size .*whole number/],
    ['step size in exponent form', { stepSize: '1e3' }, /--step-size .*whole number/],
    ['step size a fraction', { stepSize: '2.5' }, /--step-size must be a whole number/],
    ['step size negative', { stepSize: '-1' }, /--step-size must be at least 1/],
    ['a label with a space', { startingLabel: 'compute nodes' }, /--starting-label "compute nodes" is not a valid group label/],
    ['a label with a slash', { startingLabel: 'compute/x' }, /--starting-label .* is not a valid group label/],
    ['a label with a comma', { startingLabel: 'upgrading,compute' }, /--starting-label .* is not a valid group label/],
    ['a label ..', { startingLabel: '..' }, /--starting-label "\.\." is not a valid group label/],
    ['a unicode label', { startingLabel: 'cömpute' }, /--starting-label .* is not a valid group label/],
    ['a 10,000-character label', { startingLabel: 'c'.repeat(10_000) }, /--starting-label "c{80}\.\.\." is not a valid group label/],
    ['an empty label', { startingLabel: '' }, /--starting-label must not be empty/],
    ['a starting label that is not a group', { startingLabel: 'nosuch' }, /--starting-label: no group 'nosuch' in the site's inventory/],
    [
      'a case variant of an existing label',
      { startingLabel: 'Compute' },
      /--starting-label: no group 'Compute' in the site's inventory, but there is 'compute'/,
    ],
    ['a failed label that is not a group', { failedLabel: 'failed-nodes' }, /--failed-label: no group 'failed-nodes' in the site's inventory/],
    ['an upgrading label ..', { upgradingLabel: '..' }, /--upgrading-label .* is not a valid group label/],
    ['a failed label with a space', { failedLabel: 'failed nodes' }, /--failed-label .* is not a valid group label/],
    ['the upgrading label the starting one', { upgradingLabel: 'compute' }, /--upgrading-label must differ from --starting-label/],
    ['a poll interval of 1e9', { pollInterval: '1e9' }, /--poll-interval must be a number of seconds/],
    ['a poll interval above an hour', { pollInterval: '3601' }, /--poll-interval must be at most 3600/],
    ['a return timeout of 1e12', { wlmTimeout: '1e12' }, /--wlm-timeout must be a number of seconds/],
    ['a return timeout of 10^12 s', { wlmTimeout: '1000000000000' }, /--wlm-timeout must be at most 604800/],
    ['a boot timeout above a week', { bootTimeout: '604801' }, /--boot-timeout must be at most 604800/],
    ['a negative quiesce timeout', { quiesceTimeout: '-5' }, /--quiesce-timeout must be at least 1/],
    ['a quiesce timeout in hex', { quiesceTimeout: '0x10' }, /--quiesce-timeout must be a number of seconds/],
    ['a time scale of 0', { timeScale: '0' }, /--time-scale must be above 0/],
    ['a negative time scale', { timeScale: '-1' }, /--time-scale must be above 0/],
    ['a time scale that is a word', { timeScale: 'fast' }, /--time-scale must be a decimal number, got 'fast'/],
    ['a time scale in exponent form', { timeScale: '1e3' }, /--time-scale must be a decimal number/],
    ['a time scale beyond the bound', { timeScale: '10000000' }, /--time-scale must be at most 1000000/],
    ['an unknown workload manager', { wlm: 'pbs' }, /--wlm must be one of: slurm/],
    ['an unknown mode', { mode: 'sideways' }, /--mode must be one of: lockstep, window/],
    ['max unavailable in hex', { mode: 'window', maxUnavailable: '0x10' }, /--max-unavailable must be a whole number or a percentage/],
    ['a batch in hex', { mode: 'window', batches: '1,0x2' }, /--batches #2: batches must be a whole number or a percentage/],
    ['a maintenance window with a bad cron', { mode: 'window', maintenanceWindow: 'every night,60' }, /--maintenance-window #1 \(cron\): invalid cron/],
    [
      'a maintenance window longer than a week',
      { mode: 'window', maintenanceWindow: '0 22 * * *,20000' },
      /--maintenance-window #1 \(durationMinutes\): durationMinutes must be at most 10080/,
    ],
  ])('%s', async (_case, overrides, message) => {
    await expectRefused(upgradeOfSite(overrides), message);
  });

  // Functions: the profile's path is known once the site runs.
  it.each<[string, () => string[], RegExp]>([
    ['an unknown option', () => [...upgradeOfSite(), '--bogus'], /unknown option '--bogus'/],
    ['a required option missing', () => upgradeOfSite({ template: undefined }), /required option '--template <id>' not specified/],
    ['both --site and --site-config', () => [...upgradeOfSite(), '--site', 'site.yaml'], /cannot be used with/],
    ['neither --site nor --site-config', () => upgradeArgs(TEST_SITE_UPGRADE), /give exactly one of --site FILE/],
  ])('%s', async (_case, args, message) => {
    await expectRefused(args(), message);
  });
});

const deployArgs = (...extra: string[]) => ['deploy', '--site-config', profile, ...extra];

describe('rollout deploy: options', () => {
  it.each<[string, string[], RegExp]>([
    ['a node name with a space', ['--nodes', 'x1000c0s0b0n0,a b'], /--nodes #2: "a b" is not a valid node name/],
    ['a node named ..', ['--nodes', '..'], /--nodes #1: "\.\." is not a valid node name/],
    ['a node that does not exist', ['--nodes', 'ghost'], /--nodes #1: unknown node 'ghost'/],
    ['a node name with a slash', ['--nodes', 'x1000c0s0b0n0,bad/name'], /--nodes #2: .* is not a valid node name/],
    ['max parallel groups in hex', ['--max-parallel-groups', '0x10'], /--max-parallel-groups must be a number/],
    ['max parallel groups 0', ['--max-parallel-groups', '0'], /--max-parallel-groups must be at least 1/],
    ['a poll interval above an hour', ['--poll-interval', '3601'], /--poll-interval must be at most 3600/],
    ['a deploy timeout of 1e12', ['--deploy-timeout', '1e12'], /--deploy-timeout must be a number of seconds/],
    ['a prepare timeout of 0', ['--prepare-timeout', '0'], /--prepare-timeout must be at least 1/],
    ['a prepare timeout above a week', ['--prepare-timeout', '604801'], /--prepare-timeout must be at most 604800/],
    ['a time scale that is a word', ['--time-scale', 'nope'], /--time-scale must be a decimal number/],
    ['a strategy and nodes together', ['--nodes', 'x1000c0s0b0n0', '--strategy', 's.yaml'], /cannot be used with/],
  ])('%s', async (_case, extra, message) => {
    await expectRefused(deployArgs(...extra), message);
  });
});

const group = (over: Record<string, unknown> = {}) => ({ name: 'g', critical: true, depends_on: [], selectors: [], ...over });

describe('rollout deploy --strategy: strategy files', () => {
  it.each<[string, string, string | Buffer, RegExp]>([
    ['a duplicate key in YAML', 's.yaml', 'groups: []\ngroups: []\n', /invalid YAML: Map keys must be unique at line 2/],
    [
      'a duplicate key in JSON',
      's.json',
      '{"groups": [{"name": "a", "name": "b", "critical": true, "depends_on": [], "selectors": []}]}',
      /Map keys must be unique at line 1, column 27/,
    ],
    ['an alias bomb', 's.yaml', `${ALIAS_BOMB}\ngroups: []\n`, /aliases expand too far/],
    ['bytes that are not UTF-8', 's.yaml', NOT_UTF8, /is not UTF-8 text/],
    [
      'a percentage in exponent form',
      's.yaml',
      stringify({ groups: [group({ success_criteria: { percent_successful_nodes: 1 } })] }).replace(
        'percent_successful_nodes: 1',
        'percent_successful_nodes: 1e2',
      ),
      /groups\[0\]\.success_criteria\.percent_successful_nodes: "1e2" is not a decimal integer/,
    ],
    [
      'a concurrency in hex',
      's.yaml',
      stringify({ groups: [group({ strategy: { type: 'parallel', amount: 1 } })] }).replace('amount: 1', 'amount: 0x10'),
      /groups\[0\]\.strategy\.amount: "0x10" is not a decimal integer/,
    ],
    ['a node named ..', 's.json', JSON.stringify({ groups: [group({ selectors: [{ node_names: ['..'] }] })] }), /node_names\[0\]: is not a valid node name/],
    [
      'a node name with NUL',
      's.json',
      JSON.stringify({ groups: [group({ selectors: [{ node_names: ['x1000c0s0b0n0\u0000'] }] })] }),
      /node_names\[0\]: is not a valid node name/,
    ],
    [
      'a node name with a newline',
      's.json',
      JSON.stringify({ groups: [group({ selectors: [{ node_names: ['x1000c0s0b0n0\nx'] }] })] }),
      /node_names\[0\]: is not a valid node name/,
    ],
    [
      'a critical group naming only nodes that do not exist',
      's.yaml',
      stringify({ groups: [group({ selectors: [{ node_names: ['ghost'] }] })] }),
      /groups\[0\] \(g\)\.node_names: no node of the site is named 'ghost'/,
    ],
    [
      'a non-critical group naming a node that does not exist beside real ones',
      's.yaml',
      stringify({ groups: [group({ critical: false, selectors: [{ node_names: [NAMES[0], 'ghost2'] }] })] }),
      /groups\[0\] \(g\)\.node_names: no node of the site is named 'ghost2'/,
    ],
    ['an unknown key in a group', 's.yaml', stringify({ groups: [group({ critcal: true })] }), /critcal/],
    [
      'a dependency cycle',
      's.yaml',
      stringify({ groups: [group({ name: 'a', depends_on: ['b'] }), group({ name: 'b', depends_on: ['a'] })] }),
      /circular dependency: a, b/,
    ],
    ['a group without critical', 's.yaml', stringify({ groups: [{ name: 'g', depends_on: [], selectors: [] }] }), /critical: is required/],
    ['a list at the root', 's.yaml', '- a\n- b\n', /expected a mapping with groups/],
    ['an empty file', 's.yaml', '', /the text is empty: expected a mapping with groups/],
    ['two documents, neither a strategy', 's.yaml', 'a: 1\n---\nb: 2\n', /holds 2 documents, 0 of them/],
    ['invalid YAML', 's.yaml', 'groups: [\n', /invalid YAML/],
    ['a file that does not exist', 'missing', '', /cannot read it/],
  ])('%s', async (_case, name, content, message) => {
    const strategy = name === 'missing' ? path.join(dir, 'no-such-strategy.yaml') : await file(name, content);
    await expectRefused(deployArgs('--strategy', strategy), message);
  });
});

const siteYaml = (over: Record<string, unknown>) => stringify({ ...GOOD_SITE, ...over });
const nodeAt0 = (node: Record<string, unknown>) => ({ nodes: [{ ...GOOD_SITE.nodes[0], ...node }, ...GOOD_SITE.nodes.slice(1)] });

describe('rollout upgrade --site: site files', () => {
  it.each<[string, string, string | Buffer, RegExp]>([
    ['a duplicate key in YAML', 'site.yaml', `${siteYaml({})}bootTemplates: []\n`, /invalid YAML: Map keys must be unique/],
    ['a duplicate key in JSON', 'site.json', JSON.stringify(GOOD_SITE).replace('"nid":1', '"nid":1,"nid":9'), /nodes\[0\]\.nid: duplicate key "nid"/],
    ['an alias bomb', 'site.yaml', `${ALIAS_BOMB}\n${siteYaml({})}`, /aliases expand too far/],
    ['bytes that are not UTF-8', 'site.yaml', NOT_UTF8, /is not UTF-8 text/],
    [
      'a node name with NUL',
      'site.json',
      JSON.stringify({ ...GOOD_SITE, ...nodeAt0({ name: 'n\u0000' }) }),
      /nodes\[0\]\.name: name "n\\u0000" is not a valid node name/,
    ],
    [
      'a node name with a newline',
      'site.json',
      JSON.stringify({ ...GOOD_SITE, ...nodeAt0({ name: 'n\nx' }) }),
      /nodes\[0\]\.name: name "n\\nx" is not a valid node name/,
    ],
    ['a node named ..', 'site.yaml', siteYaml(nodeAt0({ name: '..' })), /nodes\[0\]\.name: name "\.\." is not a valid node name/],
    [
      'a 5,000-character node name',
      'site.yaml',
      siteYaml(nodeAt0({ name: 'n'.repeat(5000) })),
      /nodes\[0\]\.name: name "n{80}\.\.\." is not a valid node name/,
    ],
    ['a unicode node name', 'site.yaml', siteYaml(nodeAt0({ name: 'nöde' })), /nodes\[0\]\.name: .* is not a valid node name/],
    ['a nid in hex', 'site.yaml', siteYaml({}).replace('nid: 1\n', 'nid: 0x10\n'), /nodes\[0\]\.nid: "0x10" is not a decimal integer/],
    ['a nid in exponent form', 'site.json', JSON.stringify(GOOD_SITE).replace('"nid":1', '"nid":1e3'), /nodes\[0\]\.nid: "1e3" is not a decimal integer/],
    [
      'a boot time of 1e308',
      'site.json',
      JSON.stringify(GOOD_SITE).replace('"bootSeconds":60', '"bootSeconds":1e308'),
      /timing\.bootSeconds: "1e308" is not a decimal integer/,
    ],
    [
      'a boot time of 1e308 s written out',
      'site.yaml',
      siteYaml({ timing: { bootSeconds: 1e308 } }),
      /timing\.bootSeconds: .*(must be at most 604800|not a decimal integer)/,
    ],
    ['a return time above a week', 'site.yaml', siteYaml({ timing: { returnSeconds: 1_000_000_000_000 } }), /timing\.returnSeconds: must be at most 604800/],
    [
      'a negative busy time',
      'site.yaml',
      siteYaml(nodeAt0({ wlm: { state: 'ALLOCATED', busySeconds: -1 } })),
      /nodes\[0\]\.wlm\.busySeconds: must not be negative/,
    ],
    ['a list at the root', 'site.yaml', '- a\n', /the site must be a mapping/],
    ['a scalar at the root', 'site.yaml', 'hello\n', /the site must be a mapping/],
    ['an empty file', 'site.yaml', '', /the site must be a mapping/],
    ['invalid YAML', 'site.yaml', 'nodes: [\n', /invalid YAML/],
    ['truncated JSON', 'site.json', '{"nodes": [', /invalid JSON/],
    ['a group label with a space', 'site.yaml', siteYaml({ groups: { 'compute nodes': NAMES } }), /groups\.compute nodes: .* is not a valid group label/],
    ['a group member that is not a node', 'site.yaml', siteYaml({ groups: { compute: ['ghost'] } }), /groups\.compute\[0\]: 'ghost' is not a node of the site/],
    ['a node twice', 'site.yaml', siteYaml({ nodes: [...GOOD_SITE.nodes, { name: NAMES[0], nid: 9 }] }), /nodes\[4\]\.name: duplicate node name/],
    ['an unknown Slurm state', 'site.yaml', siteYaml(nodeAt0({ wlm: { state: 'SLEEPING' } })), /nodes\[0\]\.wlm\.state: must be one of IDLE/],
    ['an unknown key', 'site.yaml', siteYaml({ nodez: [] }), /nodez: unknown key/],
    ['a file that does not exist', 'missing', '', /cannot read it/],
  ])('%s', async (_case, name, content, message) => {
    const siteFile = name === 'missing' ? path.join(dir, 'no-such-site.yaml') : await file(name, content);
    await expectRefused(upgradeArgs({ ...TEST_SITE_UPGRADE, site: siteFile }), message);
  });
});

describe('rollout upgrade --site-config: site profiles', () => {
  const good = () => siteProfileFor(site.urls, 'http', 1000) as unknown as Record<string, unknown>;
  it.each<[string, string, () => string | Buffer, RegExp]>([
    ['a duplicate key in YAML', 'p.yaml', () => `${stringify(good())}allowInsecureHttp: true\n`, /invalid YAML: Map keys must be unique/],
    [
      'a duplicate key in JSON',
      'p.json',
      () => JSON.stringify(good()).replace('"allowInsecureHttp":true', '"allowInsecureHttp":true,"allowInsecureHttp":false'),
      /allowInsecureHttp: duplicate key/,
    ],
    ['bytes that are not UTF-8', 'p.yaml', () => NOT_UTF8, /is not UTF-8 text/],
    ['an alias bomb', 'p.yaml', () => `${ALIAS_BOMB}\n`, /aliases expand too far/],
    [
      'a time scale beyond the bound',
      'p.yaml',
      () => stringify({ ...good(), simulatedTime: { timeScale: 1e7, controlUrl: site.urls.control } }),
      /simulatedTime\.timeScale: must be at most 1000000/,
    ],
    [
      'a request timeout in hex',
      'p.yaml',
      () => stringify(good()).replace(/(bootService:\n {2}type: bos\n {2}url: \S+\n)/, '$1  timeoutSeconds: 0x10\n'),
      /bootService\.timeoutSeconds: "0x10" is not a decimal integer/,
    ],
    ['an unknown key', 'p.yaml', () => stringify({ ...good(), workloadManagr: {} }), /workloadManagr: unknown key/],
    [
      'a URL that is not one',
      'p.yaml',
      () => stringify({ ...good(), bootService: { type: 'bos', url: 'not a url' } }),
      /bootService\.url: must be an http:\/\/ or https:\/\/ URL/,
    ],
    ['a list at the root', 'p.yaml', () => '- a\n', /must be/],
  ])('%s', async (_case, name, content, message) => {
    const profileFile = await file(name, content());
    await expectRefused(upgradeArgs({ ...TEST_SITE_UPGRADE, siteConfig: profileFile }), message);
  });
});

describe('rollout plan tasks --graph: task graph files', () => {
  const graph = (over: Record<string, unknown> = {}) => ({
    tasks: [
      { id: 'deploy', type: 'stage' },
      { id: 'compute', type: 'group', role: ['compute'], required_for: ['deploy'], ...over },
    ],
  });
  it.each<[string, string, string | Buffer, RegExp]>([
    [
      'bytes that are not UTF-8',
      'g.yaml',
      Buffer.concat([Buffer.from(`${stringify(graph())}# `), Buffer.from([0xff, 0x0a])]),
      /task graph .*: is not UTF-8 text/,
    ],
    ['a duplicate key in YAML', 'g.yaml', `${stringify(graph())}tasks: []\n`, /invalid YAML: Map keys must be unique/],
    [
      'a duplicate key in JSON',
      'g.json',
      JSON.stringify(graph()).replace('"type":"stage"', '"type":"stage","type":"group"'),
      /tasks\[0\]\.type: duplicate key "type"/,
    ],
    ['an alias bomb', 'g.yaml', `${ALIAS_BOMB}\n${stringify(graph())}`, /aliases expand too far/],
    [
      'a concurrency in hex',
      'g.yaml',
      stringify(graph({ parameters: { strategy: { type: 'parallel', amount: 1 } } })).replace('amount: 1', 'amount: 0x10'),
      /tasks\[1\]\.parameters\.strategy\.amount: "0x10" is not a decimal integer/,
    ],
    ['a file that does not exist', 'missing', '', /cannot read it/],
  ])('%s', async (_case, name, content, message) => {
    const graphFile = name === 'missing' ? path.join(dir, 'no-such-graph.yaml') : await file(name, content);
    await expectRefused(['plan', 'tasks', '--site-config', profile, '--graph', graphFile], message, { writesState: false });
  });
});

describe('the served control plane: schedule request files and REST API bodies', () => {
  let served: Awaited<ReturnType<typeof startServedApi>>;
  beforeAll(async () => {
    served = await startServedApi(parseSiteDefinition(GOOD_SITE));
  });
  afterAll(() => served?.close());

  /** Nothing started: no session, no deployment, no schedule, and every node of the served site untouched. */
  async function expectNothingStarted(): Promise<void> {
    expect(await served.runtime.sessions()).toEqual([]);
    expect(await served.scheduler.list()).toEqual([]);
    for (const node of Object.values(served.runtime.simulator.state().nodes))
      expect({ drains: node.drainCount, boots: node.bootCount }).toEqual({ drains: 0, boots: 0 });
  }

  const request = {
    startingLabel: 'compute',
    upgradingLabel: 'upgrading',
    failedLabel: 'failed',
    upgradeStepSize: 2,
    upgradeTemplateId: 'cos-2.4',
    workloadManagerType: 'slurm',
  };
  it.each<[string, string, string | Buffer, RegExp]>([
    [
      'a step size in hex',
      'r.yaml',
      stringify(request).replace('upgradeStepSize: 2', 'upgradeStepSize: 0x10'),
      /upgradeStepSize: "0x10" is not a decimal integer/,
    ],
    [
      'a step size in exponent form',
      'r.json',
      JSON.stringify(request).replace('"upgradeStepSize":2', '"upgradeStepSize":2e0'),
      /upgradeStepSize: "2e0" is not a decimal integer/,
    ],
    [
      'a duplicate key',
      'r.json',
      JSON.stringify(request).replace('"upgradeStepSize":2', '"upgradeStepSize":8,"upgradeStepSize":2'),
      /upgradeStepSize: duplicate key "upgradeStepSize"/,
    ],
    ['bytes that are not UTF-8', 'r.yaml', NOT_UTF8, /request file .*: is not UTF-8 text/],
    ['an alias bomb', 'r.yaml', `${ALIAS_BOMB}\n`, /aliases expand too far/],
    ['a label with a space', 'r.yaml', stringify({ ...request, startingLabel: 'compute nodes' }), /startingLabel: .* is not a valid group label/],
  ])('schedule request file: %s', async (_case, name, content, message) => {
    const requestFile = await file(name, content);
    await expectRefused(
      ['schedule', 'create', 'nightly', '--upgrade', requestFile, '--expression', 'rate(1 day)', '--endpoint', served.endpoints.stepFunctionsEndpoint],
      message,
      { writesState: false },
    );
    await expectNothingStarted();
  });

  it.each<[string, string, string | Buffer, number, { field: string; message: RegExp }]>([
    [
      'a duplicate key',
      '/sessions',
      JSON.stringify(request).replace('"upgradeStepSize":2', '"upgradeStepSize":8,"upgradeStepSize":1e0'),
      400,
      { field: 'upgradeStepSize', message: /duplicate key "upgradeStepSize"/ },
    ],
    [
      'a step size in exponent form',
      '/sessions',
      JSON.stringify(request).replace('"upgradeStepSize":2', '"upgradeStepSize":1e0'),
      400,
      { field: 'upgradeStepSize', message: /"1e0" is not a decimal integer/ },
    ],
    [
      'bytes that are not UTF-8',
      '/sessions',
      Buffer.concat([Buffer.from('{"startingLabel":"comp'), Buffer.from([0xff]), Buffer.from('ute"}')]),
      400,
      { field: '', message: /the body is not UTF-8 text/ },
    ],
    ['a comment', '/sessions', '{"startingLabel":"compute" /* x */}', 400, { field: '', message: /invalid JSON at line 1, column 28/ }],
    ['null', '/sessions', 'null', 400, { field: '', message: /the body must be a JSON object/ }],
    ['a list', '/sessions', '[]', 400, { field: '', message: /the body must be a JSON object/ }],
    ['invalid JSON', '/sessions', '{"startingLabel":', 400, { field: '', message: /invalid JSON/ }],
    ['a step size of 0', '/sessions', JSON.stringify({ ...request, upgradeStepSize: 0 }), 422, { field: 'upgradeStepSize', message: /must be at least 1/ }],
    [
      'a duplicate key in a deployment',
      '/deployments',
      '{"nodes":["x1000c0s0b0n0"],"nodes":["x1000c0s0b0n1"]}',
      400,
      { field: 'nodes', message: /duplicate key "nodes"/ },
    ],
    [
      'a deployment poll interval in exponent form',
      '/deployments',
      '{"pollIntervalSeconds":3e1}',
      400,
      { field: 'pollIntervalSeconds', message: /"3e1" is not a decimal integer/ },
    ],
    ['a deployment of a node named ..', '/deployments', '{"nodes":[".."]}', 422, { field: 'nodes[0]', message: /is not a valid node name/ }],
  ])('REST API body: %s', async (_case, route, body, status, problem) => {
    const reply = await served.runtime.clock.busy(async () => {
      const response = await fetch(`${served.apiEndpoint}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return { status: response.status, body: (await response.json()) as { errors?: { field: string; message: string }[] } };
    });
    expect(reply.status).toBe(status);
    expect(reply.body.errors).toContainEqual({ field: problem.field, message: expect.stringMatching(problem.message) });
    await expectNothingStarted();
  });
});
