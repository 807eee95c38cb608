import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { TEST_SITE_UPGRADE, type UpgradeFlags, upgradeArgs } from '../../scripts/upgrade-args';
import { runCliInProcess } from '../support/cli';

/**
 * Issue 26, item 5, through the CLI: `--maintenance-window "0 0 30 2 *,60"` (30 February) was
 * accepted, `plan upgrade` said every node was left alone and `upgrade` stayed UPDATING for ever,
 * silent. Both now refuse it (exit 2, naming the flag); and for a window that does open, the plan and
 * the run agree on the nodes left alone, and the run says why it waits at every poll until it opens.
 */
let dir: string;
let site: string;
/** `rollout upgrade` of the site in windows of 2, polled every 300 s, with `more` flags. */
const args = (more: UpgradeFlags = {}) => upgradeArgs({ ...TEST_SITE_UPGRADE, site, mode: 'window', maxUnavailable: 2, pollInterval: 300, ...more });

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-mw-'));
  site = path.join(dir, 'site.yaml');
  await writeFile(
    site,
    stringify({
      nodes: [
        { name: 'c1', nid: 1 },
        { name: 'c2', nid: 2, available: false },
        { name: 'c3', nid: 3, wlm: { state: 'ALLOCATED', busySeconds: 5000 } },
        { name: 'c4', nid: 4 },
      ],
      groups: { compute: ['c1', 'c2', 'c3', 'c4'], upgrading: [], failed: [] },
      bootTemplates: ['cos-2.4'],
      timing: { bootSeconds: 60, returnSeconds: 10 },
    }),
  );
});

describe('--maintenance-window that never opens', () => {
  it.each([['upgrade'], ['plan upgrade']])('rollout %s refuses it (exit 2), naming the flag; nothing is started', async (command) => {
    const result = await runCliInProcess([...command.split(' ').slice(0, -1), ...args({ maintenanceWindow: '0 0 30 2 *,60' })]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error: --maintenance-window #1 \(cron\): cron '0 0 30 2 \*' opens no maintenance window in the next year \(from [0-9T:.Z-]+\): it matches no date at all, so no node would ever start\n$/,
    );
    expect(result.stdout).toBe('');
  });
});

describe('--maintenance-window that opens later', () => {
  it('plan upgrade and upgrade agree on the nodes left alone; the run says why it waits at every poll, then upgrades the rest inside the window', async () => {
    const window = { maintenanceWindow: '0 3 * * *,120', json: true };
    const planned = await runCliInProcess(['plan', ...args(window)]);
    expect(planned.code).toBe(0);
    const plan = JSON.parse(planned.stdout) as { leftAlone: Record<string, string>; waves: { nodes: string[]; waits: string[] }[] };
    expect(plan.leftAlone).toEqual({ c2: 'node-unavailable' });
    expect(plan.waves[0]!.waits).toEqual(['maintenance window until +3h 0m']);

    const run = await runCliInProcess(args({ siteStateOut: path.join(dir, 'state.json'), ...window }));
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      nodes: Record<string, { status: string; reason?: string }>;
      messageLog: { at: { secondsFromStart: number; timeBase: string }; text: string }[];
    };
    const leftAlone = Object.fromEntries(
      Object.entries(report.nodes).flatMap(([name, node]) =>
        node.reason?.startsWith('left alone: ') ? [[name, node.reason.slice('left alone: '.length)]] : [],
      ),
    );
    expect(leftAlone).toEqual(plan.leftAlone);
    expect(Object.keys(report.nodes).filter((name) => report.nodes[name]!.status === 'UPGRADED')).toEqual(plan.waves.flatMap((w) => w.nodes).sort());

    const waits = report.messageLog.filter((m) => m.text.startsWith('Window waiting: '));
    expect(waits).toHaveLength(36); // 3 h at one a poll of 300 s
    // Simulated instants in JSON are seconds from the session's start, never dates (core/time-format.ts).
    expect(waits.every((m) => m.at.timeBase === 'simulated' && m.at.secondsFromStart < 3 * 3600)).toBe(true);

    // The site: the node left alone was never touched; the others were rebooted once, after the window opened.
    const state = JSON.parse(await readFile(path.join(dir, 'state.json'), 'utf8')) as {
      nodes: Record<string, { bootCount: number; outOfService: [number, number | null][] }>;
    };
    expect(state.nodes['c2']).toMatchObject({ bootCount: 0, outOfService: [] });
    for (const node of ['c1', 'c3', 'c4']) {
      expect(state.nodes[node]!.bootCount).toBe(1);
      expect(state.nodes[node]!.outOfService[0]![0]).toBeGreaterThanOrEqual(3 * 3600);
    }
  });
});
