import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DynamoDbSessionStore } from '../../adapters/dynamodb/dynamodb-session-store';
import { startLocalDynamoDb } from '../../local/local-dynamodb';
import { DiskTables } from '../../local/dynamodb-store/disk';
import { runCliInProcess } from '../support/cli';
import { TEST_SITE_UPGRADE, upgradeArgs } from '../../scripts/upgrade-args';
import { makeSession } from '../support/dynamodb';

/**
 * A damaged data directory (issue 12): a claim file that is not one, a LevelDB whose CURRENT or
 * MANIFEST is broken, truncated files. Each is refused at once with exit 2, one line naming the
 * directory, what is wrong and what to do: never a hang, never the database's crash.
 */

const REMEDY_DB = 'restore the directory from a backup, or move it aside to start again with no sessions';
let root: string;
let good: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'rollout-damaged-'));
  good = path.join(root, 'good');
  const db = await startLocalDynamoDb({ dataDir: good });
  await new DynamoDbSessionStore({ tableName: db.tableName, client: db.client }).createSession(makeSession(), []);
  await db.close();
});

const manifestOf = async (dir: string) => path.join(dir, (await readdir(dir)).find((f) => f.startsWith('MANIFEST-'))!);
const logOf = async (dir: string) => path.join(dir, (await readdir(dir)).find((f) => f.endsWith('.log') && f !== 'LOG')!);

const CASES: [string, (dir: string) => Promise<unknown>, RegExp][] = [
  [
    'runtime.json holding garbage',
    (dir) => writeFile(path.join(dir, 'runtime.json'), '{{{ garbage'),
    /runtime\.json is not a claim a rollout process wrote .*; if no rollout process uses the directory, remove .*runtime\.json$/,
  ],
  ['runtime.json truncated', (dir) => writeFile(path.join(dir, 'runtime.json'), '{"pid":12'), /runtime\.json is not a claim a rollout process wrote/],
  [
    'runtime.json without a pid',
    (dir) => writeFile(path.join(dir, 'runtime.json'), '{"startedAt":"2030-01-01"}'),
    /runtime\.json is not a claim a rollout process wrote/,
  ],
  [
    'CURRENT naming no manifest',
    (dir) => writeFile(path.join(dir, 'CURRENT'), 'garbage\n'),
    new RegExp(`its database does not open \\(IO error: .*garbage: No such file or directory\\); ${REMEDY_DB}$`),
  ],
  ['CURRENT truncated to nothing', (dir) => truncate(path.join(dir, 'CURRENT'), 0), new RegExp(`its database does not open \\(.*\\); ${REMEDY_DB}$`)],
  ['the MANIFEST removed', async (dir) => rm(await manifestOf(dir)), /its database does not open \(IO error: .*MANIFEST-\d+: No such file or directory\)/],
  ['the MANIFEST truncated', async (dir) => truncate(await manifestOf(dir), 10), /its database does not open \(.*\)/],
  [
    'the log truncated to nothing (the table lost)',
    async (dir) => truncate(await logOf(dir), 0),
    new RegExp(`its database has no 'rollout' table \\(files truncated or removed\\); ${REMEDY_DB}$`),
  ],
];

describe('a damaged data directory', () => {
  it.each(CASES)('%s: refused with exit 2, naming the directory and what to do', async (_case, damage, problem) => {
    const dir = path.join(root, `case-${CASES.findIndex(([name]) => name === _case)}`);
    await cp(good, dir, { recursive: true });
    await damage(dir);

    const result = await runCliInProcess(['session', 'list', '--data-dir', dir]);
    expect(result.code).toBe(2);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^error: data directory ${dir} is damaged: `));
    expect(lines[0]).toMatch(problem);
  });

  it('stops an upgrade before it touches the site', async () => {
    const dir = path.join(root, 'upgrade');
    await cp(good, dir, { recursive: true });
    await writeFile(path.join(dir, 'CURRENT'), 'garbage\n');
    const site = path.join(root, 'site.yaml');
    await writeFile(site, 'nodes: [{name: n1, nid: 1}]\ngroups: {compute: [n1], upgrading: [], failed: []}\nbootTemplates: [cos]\n');
    const stateOut = path.join(root, 'state.json');
    const result = await runCliInProcess(upgradeArgs({ ...TEST_SITE_UPGRADE, site, stepSize: 1, template: 'cos', dataDir: dir, siteStateOut: stateOut }));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: data directory .* is damaged: its database does not open/);
    expect(existsSync(stateOut)).toBe(false);
  });
});

describe('a data directory whose creation was cut short', () => {
  // Real-Slurm scenario seed 656075 (Slurm 24.11: lock-step, kill -9 1,080 ms after `rollout upgrade --data-dir` started):
  // the kill fell between LevelDB's first files and the table, and every later command refused the directory as damaged.
  it('holds nothing, so the next command makes it whole instead of calling it damaged (seed 656075)', async () => {
    const dir = path.join(root, 'cut-short');
    const tables = await DiskTables.open(dir);
    await tables.close();
    expect(existsSync(path.join(dir, 'CURRENT'))).toBe(true);

    const first = await runCliInProcess(['session', 'list', '--data-dir', dir]);
    expect([first.code, first.stderr]).toEqual([0, '']);
    // Once made whole, losing the table is damage again.
    await truncate(await logOf(dir), 0);
    const after = await runCliInProcess(['session', 'list', '--data-dir', dir]);
    expect(after.code).toBe(2);
    expect(after.stderr).toMatch(/its database has no 'rollout' table \(files truncated or removed\)/);
  });

  it('a directory an earlier version made (no mark) keeps its sessions and is marked (from then on a lost table is damage, as above)', async () => {
    // (Before its first open by this version, an earlier version's directory whose log was truncated to nothing holds
    // nothing readable, and cannot be told from a creation cut short: it is taken as new.)
    const dir = path.join(root, 'earlier-version');
    await cp(good, dir, { recursive: true });
    await rm(path.join(dir, 'rollout-table-created'));
    const listed = await runCliInProcess(['session', 'list', '--data-dir', dir, '--ids']);
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split('\n')).toHaveLength(1);
    expect(existsSync(path.join(dir, 'rollout-table-created'))).toBe(true);
  });
});
