import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { upgradeArgs } from '../../scripts/upgrade-args';
import { BUSY_SITE_NODES, BUSY_SITE_UPGRADE, busyNodeSiteYaml } from '../support/busy-node-site';
import { runCliInProcess, startCli } from '../support/cli';
import { startInPty, type PtyRun } from '../support/pty';
import { until } from '../support/until';

/**
 * The CLI's terminal paths, on a pseudo-terminal as an operator meets them: cancel's question answered
 * y, n and Enter; Ctrl-C once (stop, summary) and twice (leave at once) typed on the terminal of a running
 * upgrade; and the live displays redrawn in place. Node 2 runs a job, so a lock-step upgrade in steps of
 * 2 waits in its second step, after its first boot.
 */
const TEST_MS = 600_000;

let dir: string;
let longSite: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-pty-'));
  longSite = path.join(dir, 'long-site.yaml');
  await writeFile(longSite, busyNodeSiteYaml(10_000_000));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const running: PtyRun[] = [];
afterEach(() => {
  for (const run of running.splice(0)) run.kill();
});
function inPty(args: string[], options?: Parameters<typeof startInPty>[1]): PtyRun {
  const run = startInPty(args, options);
  running.push(run);
  return run;
}

/** The id of the data directory's upgrade, once its first step has booted (2 nodes upgraded), read as a second terminal would. */
async function pastFirstBoot(dataDir: string): Promise<string> {
  let id: string | undefined;
  await until(
    async () => {
      const listed = await runCliInProcess(['session', 'list', '--data-dir', dataDir, '--json']).catch(() => undefined);
      id ??= listed?.code === 0 ? (JSON.parse(listed.stdout) as { upgradeId?: string }[])[0]?.upgradeId : undefined;
      if (!id) return pause(false);
      const got = await runCliInProcess(['session', 'get', id, '--data-dir', dataDir, '--json']);
      return pause(got.code === 0 && ((JSON.parse(got.stdout) as { counts?: { UPGRADED?: number } }).counts?.UPGRADED ?? 0) >= 2);
    },
    'the upgrade past its first boot',
    300_000,
  );
  return id!;
}

/** Waits a second before a false answer: the probes start CLI commands, which a 2-core machine feels. */
async function pause(answer: boolean): Promise<boolean> {
  if (!answer) await new Promise((resolve) => setTimeout(resolve, 1000));
  return answer;
}

describe("session cancel's question, on a terminal", () => {
  it(
    'answered n or Enter does not cancel (exit 1); answered y cancels (the run ends DELETED)',
    async () => {
      const dataDir = path.join(dir, 'cancel');
      // On the wall clock sped up 10 times: the second step waits for node 2's job, so the session stays there while it is asked about.
      const upgrade = startCli(upgradeArgs({ ...BUSY_SITE_UPGRADE, site: longSite, timeScale: 10, dataDir, json: true }));
      try {
        const id = await pastFirstBoot(dataDir);
        const cancel = ['session', 'cancel', id, '--data-dir', dataDir];

        for (const answer of ['n\r', '\r']) {
          const asked = inPty(cancel);
          await asked.waitFor('Cancel anyway? [y/N]');
          expect(asked.text()).toContain(`cancelling ${id} fails 2 node(s) that were never started`);
          asked.type(answer);
          expect(await asked.exited).toMatchObject({ exitCode: 1 });
          expect(asked.text()).toContain('error: not cancelled');
        }
        expect(JSON.parse((await runCliInProcess(['session', 'status', id, '--data-dir', dataDir, '--json'])).stdout)).toMatchObject({ state: 'UPDATING' });

        const yes = inPty(cancel);
        await yes.waitFor('Cancel anyway? [y/N]');
        yes.type('y\r');
        expect(await yes.exited).toMatchObject({ exitCode: 0 });
        expect(yes.text()).toContain(`upgrade ${id} is DELETING`);
        expect(yes.text()).not.toContain('not cancelled');

        const ended = await upgrade.done;
        expect(ended.code).toBe(1);
        expect(JSON.parse(ended.stdout)).toMatchObject({ upgradeId: id, state: 'DELETED', completed: false });
      } finally {
        upgrade.child.kill('SIGKILL');
      }
    },
    TEST_MS,
  );
});

describe('Ctrl-C typed on the terminal of a running upgrade', () => {
  const start = (dataDir: string) => inPty(upgradeArgs({ ...BUSY_SITE_UPGRADE, site: longSite, timeScale: 10, dataDir }));

  it(
    'once: stops the session and prints its summary (exit 1)',
    async () => {
      const dataDir = path.join(dir, 'ctrl-c-once');
      const upgrade = start(dataDir);
      const id = await pastFirstBoot(dataDir);
      upgrade.type('\x03');
      await upgrade.waitFor(`stopping upgrade ${id}`);
      const after = upgrade.text().indexOf(`stopping upgrade ${id}`);
      expect(await upgrade.exited).toMatchObject({ exitCode: 1 });
      // The summary follows, with the stopped state.
      expect(upgrade.text().slice(after)).toMatch(/STOPPED/);
      const status = await runCliInProcess(['session', 'status', id, '--data-dir', dataDir, '--json']);
      expect(JSON.parse(status.stdout)).toMatchObject({ state: 'STOPPED' });
    },
    TEST_MS,
  );

  it(
    'twice: leaves at once (exit 130), the session left as stored',
    async () => {
      const dataDir = path.join(dir, 'ctrl-c-twice');
      const upgrade = start(dataDir);
      const id = await pastFirstBoot(dataDir);
      upgrade.type('\x03');
      await upgrade.waitFor('Ctrl-C again to leave at once');
      upgrade.type('\x03');
      expect(await upgrade.exited).toMatchObject({ exitCode: 130 });
      expect(upgrade.text()).toContain(`leaving at once: upgrade ${id} is left as stored`);
    },
    TEST_MS,
  );
});

/**
 * Samples the screen every 200 ms until the run ends. A display redrawn in place shows different text
 * on the same row over time; a log only appends rows, each written once.
 */
async function rowsRedrawn(run: PtyRun): Promise<{ redrawn: number; frames: number }> {
  const byRow = new Map<number, Set<string>>();
  let frames = 0;
  let ended = false;
  void run.exited.then(() => (ended = true));
  while (!ended) {
    run.screen().forEach((line, row) => {
      if (line.trim() !== '') (byRow.get(row) ?? byRow.set(row, new Set()).get(row)!).add(line);
    });
    frames++;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { redrawn: [...byRow.values()].filter((shown) => shown.size >= 2).length, frames };
}

describe('live displays on a terminal', () => {
  it(
    "an upgrade's progress is redrawn in place, then its summary shows",
    async () => {
      const site = path.join(dir, 'short-site.yaml');
      await writeFile(
        site,
        stringify({
          nodes: BUSY_SITE_NODES.slice(0, 4).map((name, i) => ({ name, nid: i + 1 })),
          groups: { compute: BUSY_SITE_NODES.slice(0, 4), upgrading: [], failed: [] },
          bootTemplates: ['cos-2.4'],
          timing: { bootSeconds: 60, returnSeconds: 10 },
        }),
      );
      const upgrade = inPty(upgradeArgs({ ...BUSY_SITE_UPGRADE, site, timeScale: 20 }));
      const { redrawn } = await rowsRedrawn(upgrade);
      expect(await upgrade.exited).toMatchObject({ exitCode: 0 });
      expect(redrawn).toBeGreaterThanOrEqual(1);
      // The summary follows the display, once.
      expect(
        upgrade
          .screen()
          .join('\n')
          .match(/completed \(state READY\)/g),
      ).toHaveLength(1);
    },
    TEST_MS,
  );

  it(
    "a deployment's progress line is redrawn in place",
    async () => {
      const site = path.join(dir, 'deploy-site.yaml');
      await writeFile(
        site,
        stringify({
          nodes: BUSY_SITE_NODES.map((name, i) => ({ name, nid: i + 1 })),
          groups: { compute: BUSY_SITE_NODES },
          bootTemplates: ['cos-2.4'],
          timing: { prepareSeconds: 300, deploySeconds: 300 },
        }),
      );
      const deploy = inPty(['deploy', '--site', site, '--nodes', BUSY_SITE_NODES.join(','), '--poll-interval', '30', '--time-scale', '100']);
      const { redrawn } = await rowsRedrawn(deploy);
      expect(await deploy.exited).toMatchObject({ exitCode: 0 });
      expect(redrawn).toBeGreaterThanOrEqual(1);
    },
    TEST_MS,
  );
});
