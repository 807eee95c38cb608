import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PROJECT_ROOT } from '../../contracts/paths';
import { resolveCount } from '../../core/scheduling';
import type { SessionReport } from './session-report';

/**
 * `rollout report ID --html FILE`: one self-contained page (no network: the plotting library, uPlot,
 * and its stylesheet are inlined) with the session's timeline of nodes out of service against its cap,
 * drawn by uPlot from the nodes' out-of-service intervals, and the per-node table.
 */

/** Nodes out of service at once the session allows: the step size (lock-step), or maxUnavailable of the plan (window). */
export function sessionCap(report: Pick<SessionReport, 'controls' | 'upgradeStepSize' | 'nodes'>): number {
  if (report.controls.mode !== 'window') return report.upgradeStepSize;
  return resolveCount(report.controls.maxUnavailable ?? report.upgradeStepSize, Object.keys(report.nodes).length);
}

/** The out-of-service count as a step function: [seconds from the session's start, nodes out of service from then on]. */
export function outOfServiceSteps(report: Pick<SessionReport, 'nodes' | 'createdAt'>, endsAt: number): [number, number][] {
  const start = Date.parse(report.createdAt);
  const changes = new Map<number, number>();
  for (const node of Object.values(report.nodes)) {
    if (!node.outOfService) continue;
    const from = Math.max(0, (Date.parse(node.outOfService.from) - start) / 1000);
    const to = ((node.outOfService.to ? Date.parse(node.outOfService.to) : endsAt) - start) / 1000;
    changes.set(from, (changes.get(from) ?? 0) + 1);
    changes.set(to, (changes.get(to) ?? 0) - 1);
  }
  let level = 0;
  const steps: [number, number][] = [[0, 0]];
  for (const at of [...changes.keys()].sort((a, b) => a - b)) {
    level += changes.get(at)!;
    steps.push([at, level]);
  }
  steps.push([Math.max(steps.at(-1)![0], (endsAt - start) / 1000), level]);
  return steps;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
/** JSON inside a <script>: no `</script>` (or `<!--`) can close it early. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

async function uplotAssets(): Promise<{ js: string; css: string }> {
  const require = createRequire(path.join(PROJECT_ROOT, 'package.json'));
  const [js, css] = await Promise.all([
    readFile(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
    readFile(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
  ]);
  return { js, css };
}

/** The page. `now`: the session clock's instant for a session still running (its open intervals end there). */
export async function renderSessionHtml(report: SessionReport, now?: number): Promise<string> {
  const { js, css } = await uplotAssets();
  const simulated = report.timeBase === 'simulated';
  const start = Date.parse(report.createdAt);
  const lastEnd = Math.max(
    start,
    ...Object.values(report.nodes).flatMap((n) =>
      n.outOfService ? [Date.parse(n.outOfService.from), n.outOfService.to ? Date.parse(n.outOfService.to) : 0] : [],
    ),
  );
  const endsAt = report.makespanSeconds !== undefined ? start + report.makespanSeconds * 1000 : Math.max(lastEnd, now ?? lastEnd);
  const steps = outOfServiceSteps(report, endsAt);
  const cap = sessionCap(report);
  const peak = Math.max(0, ...steps.map(([, n]) => n));
  const when = (iso: string | undefined) =>
    iso === undefined ? '' : simulated ? `+${((Date.parse(iso) - start) / 1000).toFixed(0)} s` : iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  const rows = Object.entries(report.nodes).map(([name, n]) => {
    const out = n.outOfService;
    const seconds = out?.to ? ((Date.parse(out.to) - Date.parse(out.from)) / 1000).toFixed(0) : '';
    return `<tr class="${n.status.toLowerCase()}"><td>${escapeHtml(name)}</td><td>${n.status}</td><td>${escapeHtml(n.phase)}</td><td>${when(n.since)}</td><td>${n.wave ?? ''}</td><td>${when(out?.from)}</td><td>${when(out?.to)}</td><td>${seconds}</td><td>${escapeHtml(n.reason ?? '')}</td></tr>`;
  });
  const title = `Upgrade session ${report.upgradeId}`;
  const timeNote = simulated ? "simulated time: instants are shown as seconds from the session's start, not as dates" : 'wall clock (UTC)';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>${css}
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin-top: 1em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left; }
tr.failed td { background: #fde2e2; } tr.upgraded td { background: #e6f4ea; }
.summary span { margin-right: 1.5em; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p class="summary"><span>state <b id="state">${report.state}</b></span><span>mode ${report.controls.mode}</span><span>${escapeHtml(report.startingLabel)} &rarr; ${escapeHtml(report.upgradeTemplateId)}</span>
<span>upgraded ${report.counts.UPGRADED}</span><span>failed ${report.counts.FAILED}</span><span>not started ${report.counts.NOT_STARTED}</span>${report.counts.IN_PROGRESS ? `<span>in progress ${report.counts.IN_PROGRESS}</span>` : ''}
${report.makespanSeconds !== undefined ? `<span>makespan ${report.makespanSeconds} s</span>` : ''}</p>
<p>Times: ${timeNote}. Out of service: from the moment a node is drained and idle (or rebooting) until it is back or failed. Cap: ${cap}; peak: <b id="peak">${peak}</b>.</p>
<h2>Nodes out of service over time</h2>
<div id="timeline"></div>
<h2>Nodes</h2>
<table id="nodes"><thead><tr><th>node</th><th>status</th><th>phase</th><th>since</th><th>wave</th><th>out of service from</th><th>to</th><th>seconds</th><th>reason</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table>
<script>${js}</script>
<script>
const steps = ${scriptJson(steps)};
const cap = ${cap};
const xs = steps.map((s) => s[0] / 3600);
const data = [xs, steps.map((s) => s[1]), xs.map(() => cap)];
const opts = {
  width: Math.min(1100, window.innerWidth - 40), height: 320,
  scales: { x: { time: false } },
  axes: [{ label: 'hours since the session started${simulated ? ' (simulated time)' : ''}' }, { label: 'nodes' }],
  series: [
    { label: 'hours' },
    { label: 'out of service', stroke: '#1f6feb', fill: 'rgba(31,111,235,0.15)', paths: uPlot.paths.stepped({ align: 1 }) },
    { label: 'cap', stroke: '#d1242f', dash: [6, 4] },
  ],
};
window.timeline = new uPlot(opts, data, document.getElementById('timeline'));
</script>
</body>
</html>
`;
}
