import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { chromium } from 'playwright-core';
import { TEST_SITE_UPGRADE, upgradeArgs } from '../../scripts/upgrade-args';
import { runCli, runCliInProcess } from '../support/cli';

/**
 * `rollout report ID --html FILE`, rendered in headless Chromium (Debian's chromium, driven by
 * playwright-core): the page draws its timeline with the inlined uPlot and its table, offline.
 * A machine without /usr/bin/chromium skips it, saying why; with REQUIRE_CHROMIUM=1 (.ci/run sets it, and installs
 * Chromium) it fails instead.
 */
const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.REQUIRE_CHROMIUM === '1')
  throw new Error(`${CHROMIUM} is missing and REQUIRE_CHROMIUM=1: .ci/run installs Debian's chromium for this test`);
const maybe = haveChromium ? it : it.skip;
if (!haveChromium) console.warn(`report-html.test.ts: skipped: ${CHROMIUM} is not installed (apt-get install chromium; .ci/run does)`);

// xnames: the report reads each node's rack from its cabinet (x1000, x1001) when it has no inventory to ask.
const names = ['x1000c0s0b0n0', 'x1001c0s0b0n0', 'x1000c0s1b0n0', 'x1001c0s1b0n0', 'x1000c0s2b0n0'];
const site = stringify({
  nodes: names.map((name, i) => ({
    name,
    nid: i + 1,
    rack: `x100${i % 2}`,
    ...(i === 4 ? { faults: { boot: 'fail' } } : {}),
    ...(i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 600 } } : {}),
  })),
  groups: { compute: names, upgrading: [], failed: [] },
  bootTemplates: ['img'],
  timing: { bootSeconds: 120, returnSeconds: 30 },
});

describe('rollout report --html', () => {
  maybe(
    'writes one self-contained page: the out-of-service timeline against the cap (uPlot) and the per-node table, rendered offline',
    async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-report-'));
      const siteFile = path.join(dir, 'site.yaml');
      await writeFile(siteFile, site);
      const dataDir = path.join(dir, 'data');
      const run = await runCliInProcess(
        upgradeArgs({ ...TEST_SITE_UPGRADE, site: siteFile, template: 'img', mode: 'window', maxUnavailable: 2, batches: '1,2', json: true, dataDir }),
      );
      const report = JSON.parse(run.stdout) as {
        upgradeId: string;
        messageLog: { at: string; text: string }[];
        nodes: Record<string, { outOfService?: { from: string; to?: string } }>;
      };
      const html = path.join(dir, 'report.html');
      const written = await runCli(['report', report.upgradeId, '--html', html, '--data-dir', dataDir]);
      expect(written).toMatchObject({ code: 0, stdout: `wrote ${html}\n` });

      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      });
      try {
        const page = await browser.newPage();
        const outside: string[] = [];
        const errors: string[] = [];
        page.on('request', (r) => (r.url().startsWith('file:') ? undefined : outside.push(r.url())));
        page.on('pageerror', (e) => errors.push(String(e)));
        page.on('console', (m) => (m.type() === 'error' ? errors.push(m.text()) : undefined));
        await page.goto(pathToFileURL(html).href);
        expect({ outside, errors }).toEqual({ outside: [], errors: [] });
        // uPlot drew its canvas, with the two series and the data the nodes' intervals give.
        expect(await page.locator('#timeline canvas').count()).toBe(1);
        const chart = await page.evaluate(() => {
          const plot = (globalThis as unknown as { timeline: { series: { label: string }[]; data: number[][] } }).timeline;
          return { labels: plot.series.map((s) => s.label), counts: plot.data[1] ?? [], cap: plot.data[2] ?? [] };
        });
        expect(chart.labels).toEqual(['time', 'out of service', 'cap']);
        expect(new Set(chart.cap)).toEqual(new Set([2]));
        expect(Math.max(...chart.counts)).toBeLessThanOrEqual(2);
        expect(Math.max(...chart.counts)).toBeGreaterThanOrEqual(1);
        expect(chart.counts.at(-1)).toBe(0);
        // The canvas is not blank: some pixels are the series' blue.
        const painted = await page.evaluate(() => {
          // Runs in the page (its DOM types are not the test's: Node's lib has none).
          const canvas = (
            globalThis as unknown as {
              document: {
                querySelector(s: string): {
                  width: number;
                  height: number;
                  getContext(k: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
                };
              };
            }
          ).document.querySelector('#timeline canvas');
          const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
          let blue = 0;
          for (let i = 0; i < pixels.length; i += 4) if (pixels[i + 2]! > 200 && pixels[i]! < 80) blue++;
          return blue;
        });
        expect(painted).toBeGreaterThan(50);
        // Markers: each wave, and the failed node at its failure; named in the key under the chart, without hovering.
        // The page's `const markers` (a script's global binding, not a property of window): read by name.
        const markers = (await page.evaluate('markers')) as { kind: string; label: string }[];
        expect(markers.filter((m) => m.kind === 'wave').map((m) => m.label)).toEqual(['wave 1', 'wave 2', 'wave 3']);
        expect(markers.filter((m) => m.kind === 'failure').map((m) => m.label)).toEqual(['x1000c0s2b0n0 failed']);
        expect(await page.locator('#key li').allInnerTexts()).toEqual(['nodes out of service', 'cap', 'wave (3)', 'failure (1)']);
        // The messages beside the chart, each at +h:mm.
        const messages = await page.locator('#messages tbody tr').allInnerTexts();
        expect(messages).toHaveLength(report.messageLog.length);
        expect(messages[0]).toMatch(/^\+0:00\s+Upgrade session created/);
        // The racks: the cabinets, with the failed node in x1000's.
        expect(await page.locator('#racks tbody tr').allInnerTexts()).toEqual([
          expect.stringMatching(/^x1000\s+3\s+2\s+1\s+0\s+\d+m \d+s$/),
          expect.stringMatching(/^x1001\s+2\s+2\s+0\s+0\s+\d+m \d+s$/),
        ]);
        // The table: one row per node, failed first, with its reason; times as +h:mm and durations in words.
        const rows = await page.locator('#nodes tbody tr').allInnerTexts();
        expect(rows).toHaveLength(5);
        expect(rows[0]).toMatch(/^x1000c0s2b0n0\s+x1000\s+FAILED\s+failed\s+\+0:\d\d.*upgrading-boot-session-failed/);
        expect(rows.find((r) => r.startsWith('x1001c0s0b0n0'))).toMatch(/x1001\s+UPGRADED\s+back\s+\+0:\d\d\s+\d\s+\+0:\d\d\s+\+0:\d\d\s+\d+m \d+s/);
        expect(await page.locator('#state').innerText()).toBe('READY');
        // Sorting: by name on a click on its title, reversed on a second.
        const firstNames = async () => (await page.locator('#nodes tbody tr td:first-child').allInnerTexts()).filter(Boolean);
        await page.locator('#nodes th[data-key=name]').click();
        expect(await firstNames()).toEqual([...names].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })));
        await page.locator('#nodes th[data-key=name]').click();
        expect(await firstNames()).toEqual([...names].sort((a, b) => b.localeCompare(a, 'en', { numeric: true })));
        // Filtering: by rack, then by status too.
        await page.locator('#filter-rack').selectOption('x1000');
        expect(await page.locator('#nodes tbody tr:visible').count()).toBe(3);
        await page.locator('#filter-status').selectOption('FAILED');
        expect(await page.locator('#nodes tbody tr:visible td:first-child').allInnerTexts()).toEqual(['x1000c0s2b0n0']);
        expect(await page.locator('#shown').innerText()).toBe('1 of 5 nodes');
        // A written file is a snapshot: it does not reload itself.
        expect(await page.locator('meta[http-equiv=refresh]').count()).toBe(0);
      } finally {
        await browser.close();
      }
    },
    240_000,
  );
});
