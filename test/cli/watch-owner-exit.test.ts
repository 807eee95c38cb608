import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { startCli, type CliResult } from '../support/cli';
import { until } from '../support/until';

/**
 * `rollout session watch ID --data-dir D` (and `session get --watch`) from a second process reach the
 * run through the DynamoDB endpoint of the process that owns the directory: when that process exits
 * (the run ended, or it was killed), the watcher must not die on the closed endpoint (ECONNREFUSED),
 * but read the directory itself: the run's end and summary, or one `error:` line saying its process
 * stopped and the resume that carries it on.
 */

const names = Array.from({ length: 6 }, (_, i) => `nid00000${i}`);
const siteYaml = (busySeconds: number) =>
  stringify({
    nodes: names.map((name, i) => ({ name, nid: i + 1, ...(i === 2 ? { wlm: { state: 'ALLOCATED', busySeconds } } : {}) })),
    groups: { compute: names, upgrading: [], failed: [] },
    bootTemplates: ['cos-2.4'],
    timing: { bootSeconds: 60, returnSeconds: 10 },
  });
const upgradeArgs = (site: string, dataDir: string) => [
  'upgrade',
  '--site',
  site,
  '--starting-label',
  'compute',
  '--upgrading-label',
  'upgrading',
  '--failed-label',
  'failed',
  '--template',
  'cos-2.4',
  '--step-size',
  '2',
  '--poll-interval',
  '30',
  '--data-dir',
  dataDir,
  '--no-live',
];

/** Starts the run in its own process and a watcher of it in another, once the run has said its id; resolves with both. */
async function runAndWatch(site: string, dataDir: string, timeScale: string, watchArgs: (id: string) => string[]) {
  const owner = startCli([...upgradeArgs(site, dataDir), '--time-scale', timeScale]);
  let ownerErr = '';
  owner.child.stderr!.on('data', (chunk: Buffer) => (ownerErr += chunk.toString()));
  let id = '';
  await until(async () => {
    // The first step's boot session is named after the session.
    id = /rollout-([0-9a-f-]{36})-step-0/.exec(ownerErr)?.[1] ?? '';
    return id !== '';
  }, 'the run to start');
  const watcher = startCli(watchArgs(id));
  let watcherErr = '';
  watcher.child.stderr!.on('data', (chunk: Buffer) => (watcherErr += chunk.toString()));
  // The watcher has reached the owner once its log shows the run.
  await until(async () => watcherErr.includes('Step ') || watcher.child.exitCode !== null, 'the watcher to follow the run');
  return { id, owner, watcher };
}

const noCrash = (result: CliResult) => {
  expect(result.stderr).not.toMatch(/ECONNREFUSED|fetch failed|\n\s+at /);
};

let dir: string;
let longSite: string;
let shortSite: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-owner-exit-'));
  longSite = path.join(dir, 'long-site.yaml');
  shortSite = path.join(dir, 'short-site.yaml');
  await writeFile(longSite, siteYaml(10_000_000));
  await writeFile(shortSite, siteYaml(600));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('a watcher of a data directory whose owner process exits', () => {
  it('owner killed mid-run: `session watch` says in one error line that its process stopped, and how to carry it on (exit 1)', async () => {
    const dataDir = path.join(dir, 'killed');
    const { id, owner, watcher } = await runAndWatch(longSite, dataDir, '100', (id) => ['session', 'watch', id, '--data-dir', dataDir, '--no-live']);
    owner.child.kill('SIGKILL');
    await owner.done;
    const watched = await watcher.done;
    noCrash(watched);
    expect(watched.code).toBe(1);
    const errors = watched.stderr.split('\n').filter((line) => line.startsWith('error:'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`error: the process that ran it stopped before it ended (the data directory ${dataDir} has no owner now)`);
    expect(errors[0]).toContain(`rollout session resume ${id} --data-dir ${dataDir} --site ${longSite}`);
    // The state it was left in, as stored.
    expect(watched.stdout).toContain(id);
    expect(watched.stdout).toContain('UPDATING');
  }, 300_000);

  it('owner exits as the run ends: `session get --watch` shows the end and the summary (exit 0)', async () => {
    const dataDir = path.join(dir, 'ended');
    const { id, owner, watcher } = await runAndWatch(shortSite, dataDir, '200', (id) => ['session', 'get', id, '--watch', '--data-dir', dataDir, '--no-live']);
    expect((await owner.done).code).toBe(0);
    const watched = await watcher.done;
    noCrash(watched);
    expect(watched.code).toBe(0);
    expect(watched.stdout).toContain(id);
    expect(watched.stdout).toContain('READY');
  }, 300_000);
});
