import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { chromium } from 'playwright-core';
import { runCli, runCliInProcess } from '../support/cli';

/**
 * `rollout report ID --html FILE`, rendered in headless Chromium (Debian's chromium, driven by
 * playwright-core): the page draws its timeline with the inlined uPlot and its table, offline.
 * Outside CI a machine without /usr/bin/chromium skips it, saying why; in CI (.ci/run installs it) it must run.
 */
const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium for this test`);
const maybe = haveChromium ? it : it.skip;
if (!haveChromium) console.warn(`report-html.test.ts: skipped: ${CHROMIUM} is not installed (apt-get install chromium; .ci/run does)`);

const names = ['n0', 'n1', 'n2', 'n3', 'n4'];
const site = stringify({
  nodes: names.map((name, i) => ({
    name,
    nid: i + 1,
    rack: `r${i % 2}`,
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
      const run = await runCliInProcess([
        'upgrade',
        '--site',
        siteFile,
        '--starting-label',
        'compute',
        '--upgrading-label',
        'upgrading',
        '--failed-label',
        'failed',
        '--template',
        'img',
        '--step-size',
        '2',
        '--mode',
        'window',
        '--max-unavailable',
        '2',
        '--json',
        '--data-dir',
        dataDir,
      ]);
      const report = JSON.parse(run.stdout) as { upgradeId: string; nodes: Record<string, { outOfService?: { from: string; to?: string } }> };
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
        expect(chart.labels).toEqual(['hours', 'out of service', 'cap']);
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
        // The table: one row per node, the failed one with its reason.
        const rows = await page.locator('#nodes tbody tr').allInnerTexts();
        expect(rows).toHaveLength(5);
        expect(rows.find((r) => r.startsWith('n4'))).toMatch(/FAILED\s+failed.*upgrading-boot-session-failed/);
        expect(rows.find((r) => r.startsWith('n1'))).toMatch(/UPGRADED\s+back/);
        expect(await page.locator('#state').innerText()).toBe('READY');
      } finally {
        await browser.close();
      }
    },
    240_000,
  );
});
