import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCli, startCli } from '../support/cli';
import { startInPty, type PtyRun } from '../support/pty';
import { until } from '../support/until';
import { EXAMPLE_SITE_64, upgradeArgs } from '../../scripts/upgrade-args';

/**
 * The live view in a terminal: `rollout upgrade` on the simulated 64-node site, on a scaled clock so
 * that the view has time to draw, run in a pseudo-terminal; and `rollout session get ID --watch` from
 * a second process. What the terminal shows is replayed on the screen model of support/pty.ts, so the
 * test reads the screen as an operator would.
 */

const UPGRADE = upgradeArgs({ site: EXAMPLE_SITE_64 });
const COLUMNS = 100;
const ROWS = 30;

/** The header's first line: `upgrade <id> | lock-step, step N of 8, UPDATING | ...`. */
const HEADER = /^upgrade [0-9a-f-]{36} \| lock-step, step \d of 8, /;
/** A node in flight: its name, its phase, since when. */
const NODE_ROW = /^x300\dc0s\d+b0n\d\s+(draining|quiet|booting|returning|checking)\s+(\d+h \d+m|\d+m \d+s|\d+s)\b/;

/** The escape sequences the view writes (a control character in a regular expression literal is easily a mistake: built from ESC). */
const ESC = '\x1b';
const CURSOR_SHOWN = new RegExp(`${ESC}\\[\\?25[lh]`, 'g');

/** A run in a pseudo-terminal (support/pty.ts) with what its screen showed after each write, and the instant of each redraw. */
function startInTerminal(args: string[]): PtyRun & { snapshots: string[]; redrawAt: number[] } {
  const run = startInPty(args, { cols: COLUMNS, rows: ROWS });
  running.push(run);
  const snapshots: string[] = [];
  const redrawAt: number[] = [];
  run.onOutput((chunk, screen) => {
    if (new RegExp(REDRAW.source).test(chunk)) redrawAt.push(Date.now());
    snapshots.push(screen.join('\n'));
  });
  return Object.assign(run, { snapshots, redrawAt });
}

const running: PtyRun[] = [];
afterEach(() => {
  for (const run of running.splice(0)) run.kill();
});

/** The frames the view drew: each redraw starts by moving the cursor up over the last frame and erasing below. */
const REDRAW = new RegExp(`${ESC}\\[(\\d+)A\r${ESC}\\[J`, 'g');

describe('the live view in a terminal', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-live-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('rollout upgrade draws the header and the nodes in flight, redrawn in place at most once a second, then clears it for the summary', async () => {
    const run = startInTerminal([...UPGRADE, '--time-scale', '1500']);
    expect(await run.exited).toMatchObject({ exitCode: 0 });
    const output = run.raw();

    // Redrawn in place: each frame after the first moves up over as many lines as the last one had.
    const frames = output.split(REDRAW).filter((_, i) => i % 2 === 0);
    const heights = [...output.matchAll(REDRAW)].map((m) => Number(m[1]));
    expect(heights.length).toBeGreaterThanOrEqual(3);
    // At most once a second (the last erase is the clear before the summary, at the run's end).
    const gaps = run.redrawAt
      .slice(0, -1)
      .map((t, i) => t - (run.redrawAt[i - 1] ?? 0))
      .slice(1);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(900);
    const drawn = frames.filter((frame) => frame.split('\r\n').some((line) => HEADER.test(line.replace(CURSOR_SHOWN, ''))));
    expect(drawn.filter((frame) => frame.split('\r\n').some((line) => NODE_ROW.test(line))).length).toBeGreaterThanOrEqual(2);
    for (const frame of frames.slice(1, -1)) {
      const lines = frame.split('\r\n');
      // Every line fits the terminal, and the frame its height.
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(COLUMNS);
      expect(lines.length - 1).toBeLessThanOrEqual(ROWS);
    }

    // At any moment the screen holds one view, never a second header under the first.
    for (const snapshot of run.snapshots) expect(snapshot.split('\n').filter((line) => HEADER.test(line)).length).toBeLessThanOrEqual(1);
    // A snapshot of two moments of the run, with the header and a node row.
    const views = run.snapshots.filter((s) => s.split('\n').some((line) => HEADER.test(line)) && s.split('\n').some((line) => NODE_ROW.test(line)));
    expect(views.length).toBeGreaterThanOrEqual(2);
    expect(views.at(-1)).toMatch(/elapsed \d+h \d+m \(simulated\)|elapsed \d+m \d+s \(simulated\)/);
    expect(views.at(-1)).toMatch(/64 nodes: \d+ upgraded/);
    expect(views.at(-1)).toMatch(/cap 8: \d in use/);
    expect(views.at(-1)).toMatch(/^NODE\s+PHASE\s+SINCE/m);
    if (process.env.LIVE_VIEW_CAPTURE) process.stdout.write(`${views[Math.floor(views.length / 3)]}\n\n----\n\n${views.at(-1)}\n`);

    // The end: the view is gone, the summary stands where it was.
    const screen = run.screen().join('\n');
    expect(screen).not.toMatch(/^NODE\s+PHASE/m);
    expect(screen.split('\n').filter((line) => HEADER.test(line))).toHaveLength(0);
    expect(screen).toMatch(/Upgrade session [0-9a-f-]+: completed/);
  }, 120_000);

  it('Ctrl-C: the notice is said above the view, and the stopped summary follows the view, never over it', async () => {
    const run = startInTerminal([...UPGRADE, '--time-scale', '300']);
    await until(async () => run.snapshots.some((s) => s.split('\n').some((line) => NODE_ROW.test(line))), 'a node row of the live view', 60_000);
    run.type('\x03');
    expect(await run.exited).toMatchObject({ exitCode: 1 });
    const screen = run.screen().join('\n').split('\n');
    const notice = screen.findIndex((line) => /^stopping upgrade [0-9a-f-]+: what is in flight finishes/.test(line));
    const summary = screen.findIndex((line) => /^Upgrade session [0-9a-f-]+: stopped \(state STOPPED\)$/.test(line));
    expect(notice).toBeGreaterThanOrEqual(0);
    expect(summary).toBeGreaterThan(notice);
    // The view is gone: no header or table left between or around them.
    expect(screen.filter((line) => HEADER.test(line) || /^NODE\s+PHASE/.test(line))).toEqual([]);
  }, 120_000);

  it('--no-live gives the line-per-change log in a terminal too', async () => {
    const run = startInTerminal([...UPGRADE, '--no-live']);
    expect(await run.exited).toMatchObject({ exitCode: 0 });
    expect(run.raw()).not.toMatch(new RegExp(REDRAW.source));
    expect(run.screen().join('\n')).toMatch(/^step 1 of 8 QUIESCING: 0\/64 nodes done/m);
  }, 60_000);

  it('rollout session get ID --watch shows the same view from a second terminal; Ctrl-C leaves it, the view taken off first', async () => {
    const dataDir = path.join(dir, 'watched');
    const upgrade = startCli([...UPGRADE, '--time-scale', '700', '--data-dir', dataDir]);
    let id = '';
    await until(
      async () => {
        const listed = await runCli(['session', 'list', '--data-dir', dataDir, '--json']);
        id = listed.code === 0 ? ((JSON.parse(listed.stdout) as { upgradeId?: string }[])[0]?.upgradeId ?? '') : '';
        return id !== '';
      },
      'the session in the data directory',
      30_000,
    );
    const watch = startInTerminal(['session', 'get', id, '--watch', '--data-dir', dataDir]);
    const views = () =>
      watch.snapshots.filter(
        (s) => s.split('\n').some((line) => line.startsWith(`upgrade ${id} | lock-step`)) && s.split('\n').some((line) => NODE_ROW.test(line)),
      );
    // Two frames at least, a second apart: the view redrawn in place, from the second process's reads.
    await until(async () => [...watch.raw().matchAll(REDRAW)].length >= 2 && views().length >= 2, 'two frames of the watched view', 60_000);
    for (const snapshot of watch.snapshots) expect(snapshot.split('\n').filter((line) => HEADER.test(line)).length).toBeLessThanOrEqual(1);
    // Elapsed on the run's simulated clock, as of its newest stored instant (a second process does not share its clock).
    expect(views().at(-1)).toMatch(/elapsed (\d+h \d+m|\d+m \d+s|\d+s) \(simulated\)/);
    watch.type('\x03');
    expect(await watch.exited).toMatchObject({ exitCode: 130 });
    expect(watch.screen().filter((line) => HEADER.test(line) || /^NODE\s+PHASE/.test(line))).toEqual([]);
    // The run goes on without the watch.
    expect((await upgrade.done).code).toBe(0);
  }, 120_000);
});
