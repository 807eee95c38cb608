import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PROJECT_ROOT } from '../../contracts/paths';
import { isSessionSettled } from '../../core/rolling-upgrade/session';
import { resolveCount } from '../../core/scheduling';
import { NODE_XNAME_PATTERN } from '../../core/site/node-names';
import { formatDuration } from '../../core/time-format';
import type { NodeReport, SessionReport } from './session-report';

/**
 * `rollout report ID --html FILE` and `rollout serve`'s `GET /sessions/{id}/report`: one self-contained
 * page (no network: the plotting library, uPlot, and its stylesheet are inlined) with the session's
 * timeline of nodes out of service against its cap, drawn by uPlot from the nodes' out-of-service
 * intervals and marked with its steps or waves, failures, stops, resumes and approvals; its messages
 * beside the chart; a per-rack summary; and the per-node table, sortable and filterable by a small
 * inline script.
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

export type MarkerKind = 'step' | 'wave' | 'failure' | 'stop' | 'resume' | 'approval';

/** A vertical line on the chart: what happened, when (seconds from the session's start). */
export interface ReportMarker {
  kind: MarkerKind;
  at: number;
  label: string;
}

/** The messages that mark the chart, by their text (the workflows' own words, whatever their numbering). */
const MESSAGE_MARKERS: readonly [MarkerKind, RegExp][] = [
  ['step', /^step \d+ of \d+/i],
  ['resume', /^(resumed\b|stop withdrawn)/i],
  ['stop', /^(stopping\b|upgrade session stopped)/i],
  ['approval', /\bapprov/i],
];

/**
 * The chart's markers: each step (its first message), each wave (window: when its first node went out
 * of service), each failed node (when it failed), and each stop, resume and approval the messages tell.
 */
export function reportMarkers(report: Pick<SessionReport, 'createdAt' | 'messageLog' | 'nodes'>): ReportMarker[] {
  const start = Date.parse(report.createdAt);
  const seconds = (iso: string) => Math.max(0, (Date.parse(iso) - start) / 1000);
  const markers: ReportMarker[] = [];
  for (const { at, text } of report.messageLog) {
    const kind = MESSAGE_MARKERS.find(([, pattern]) => pattern.test(text))?.[0];
    if (kind) markers.push({ kind, at: seconds(at), label: kind === 'step' ? text.split(':')[0]! : text });
  }
  const waveStarts = new Map<number, number>();
  for (const [name, node] of Object.entries(report.nodes)) {
    if (node.status === 'FAILED' && node.since) markers.push({ kind: 'failure', at: seconds(node.since), label: `${name} failed` });
    if (node.wave !== undefined && node.outOfService) {
      const from = seconds(node.outOfService.from);
      waveStarts.set(node.wave, Math.min(from, waveStarts.get(node.wave) ?? from));
    }
  }
  for (const [wave, at] of waveStarts) markers.push({ kind: 'wave', at, label: `wave ${wave}` });
  return markers.sort((a, b) => a.at - b.at);
}

/** A node's rack: the inventory's where given, else an xname's cabinet (`x3000` of `x3000c0s1b0n0`). */
export function rackOf(name: string, racks: Readonly<Record<string, string>> = {}): string | undefined {
  return racks[name] ?? (NODE_XNAME_PATTERN.exec(name) ? `x${NODE_XNAME_PATTERN.exec(name)![1]}` : undefined);
}

export interface RackSummary {
  rack: string;
  nodes: number;
  upgraded: number;
  failed: number;
  pending: number;
  /** The longest time one of its nodes was out of service, in seconds (closed intervals only). */
  longestOutSeconds: number;
}

/** Per rack (`-` for nodes without one), in rack order: its nodes by outcome and its longest outage. */
export function rackSummaries(nodes: Readonly<Record<string, NodeReport>>, racks?: Readonly<Record<string, string>>): RackSummary[] {
  const byRack = new Map<string, RackSummary>();
  for (const [name, node] of Object.entries(nodes)) {
    const rack = rackOf(name, racks) ?? '-';
    const summary = byRack.get(rack) ?? { rack, nodes: 0, upgraded: 0, failed: 0, pending: 0, longestOutSeconds: 0 };
    summary.nodes++;
    if (node.status === 'UPGRADED') summary.upgraded++;
    else if (node.status === 'FAILED') summary.failed++;
    else summary.pending++;
    const out = node.outOfService;
    if (out?.to) summary.longestOutSeconds = Math.max(summary.longestOutSeconds, (Date.parse(out.to) - Date.parse(out.from)) / 1000);
    byRack.set(rack, summary);
  }
  return [...byRack.values()].sort((a, b) => a.rack.localeCompare(b.rack, 'en', { numeric: true }));
}

/**
 * An instant as the page shows it: on simulated time `+h:mm` from the session's start (never a date);
 * on the wall clock the UTC clock time, with the date when it is not the start's day.
 */
export function instantLabel(iso: string, report: Pick<SessionReport, 'createdAt' | 'timeBase'>): string {
  const at = Date.parse(iso);
  const start = Date.parse(report.createdAt);
  if (report.timeBase === 'simulated') {
    const minutes = Math.max(0, Math.round((at - start) / 60_000));
    return `+${Math.floor(minutes / 60)}:${String(minutes % 60).padStart(2, '0')}`;
  }
  const text = new Date(at).toISOString();
  const clock = text.slice(11, 16);
  return text.slice(0, 10) === report.createdAt.slice(0, 10) ? clock : `${text.slice(0, 10)} ${clock}`;
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

export interface SessionHtmlOptions {
  /** The session clock's instant for a session still running (its open intervals end there). */
  now?: number;
  /** Reload the page every so many seconds while the session runs (the served page; a written file is a snapshot). */
  refreshSeconds?: number;
  /** Each node's rack from the inventory, where known (else an xname's cabinet). */
  racks?: Readonly<Record<string, string>>;
}

/** The colours of the markers, shared by the chart and its key. */
const MARKER_COLOURS: Record<MarkerKind, string> = {
  step: '#6e7781',
  wave: '#6e7781',
  failure: '#d1242f',
  stop: '#9a6700',
  resume: '#1a7f37',
  approval: '#8250df',
};

/** The page. */
export async function renderSessionHtml(report: SessionReport, options: SessionHtmlOptions = {}): Promise<string> {
  const { js, css } = await uplotAssets();
  const simulated = report.timeBase === 'simulated';
  const start = Date.parse(report.createdAt);
  const lastEnd = Math.max(
    start,
    ...Object.values(report.nodes).flatMap((n) =>
      n.outOfService ? [Date.parse(n.outOfService.from), n.outOfService.to ? Date.parse(n.outOfService.to) : 0] : [],
    ),
  );
  const endsAt = report.makespanSeconds !== undefined ? start + report.makespanSeconds * 1000 : Math.max(lastEnd, options.now ?? lastEnd);
  const steps = outOfServiceSteps(report, endsAt);
  const cap = sessionCap(report);
  const peak = Math.max(0, ...steps.map(([, n]) => n));
  const markers = reportMarkers(report);
  const running = !isSessionSettled(report.state);
  const refresh = running && options.refreshSeconds !== undefined ? `<meta http-equiv="refresh" content="${options.refreshSeconds}">\n` : '';
  const title = `Upgrade session ${report.upgradeId}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
${refresh}<title>${escapeHtml(title)}</title>
<style>${css}${PAGE_CSS}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${summaryHtml(report, { cap, peak, endsAt, running, refreshSeconds: refresh ? options.refreshSeconds : undefined })}
<div class="side-by-side">
<section class="chart"><h2>Nodes out of service over time</h2>
<div id="timeline"></div>
${markerKeyHtml(markers)}
</section>
<section class="messages"><h2>Messages (${report.messageLog.length})</h2>
<div class="scroll"><table id="messages"><thead><tr><th>at</th><th>message</th></tr></thead><tbody>
${report.messageLog.map((m) => `<tr><td>${instantLabel(m.at, report)}</td><td>${escapeHtml(m.text)}</td></tr>`).join('\n')}
</tbody></table></div></section>
</div>
<h2>Racks</h2>
${racksHtml(rackSummaries(report.nodes, options.racks))}
<h2>Nodes</h2>
${nodesHtml(report, options.racks)}
<script>${js}</script>
<script>
const steps = ${scriptJson(steps)};
const markers = ${scriptJson(markers)};
const cap = ${cap};
const simulated = ${simulated};
const startMs = ${start};
const markerColours = ${scriptJson(MARKER_COLOURS)};
${PAGE_SCRIPT}
</script>
</body>
</html>
`;
}

function summaryHtml(
  report: SessionReport,
  { cap, peak, endsAt, running, refreshSeconds }: { cap: number; peak: number; endsAt: number; running: boolean; refreshSeconds: number | undefined },
): string {
  const simulated = report.timeBase === 'simulated';
  const elapsed = (endsAt - Date.parse(report.createdAt)) / 1000;
  const timeNote = simulated
    ? "simulated time: instants are shown as +h:mm from the session's start, never as dates"
    : `wall clock, UTC: started ${report.createdAt.slice(0, 10)} ${report.createdAt.slice(11, 16)}`;
  const span = (label: string, value: string, id?: string) => `<span>${label} <b${id ? ` id="${id}"` : ''}>${value}</b></span>`;
  return `<p class="summary">${span('state', report.state, 'state')}${span('mode', report.controls.mode)}${span(escapeHtml(report.startingLabel), `&rarr; ${escapeHtml(report.upgradeTemplateId)}`)}
${span('upgraded', String(report.counts.UPGRADED))}${span('failed', String(report.counts.FAILED))}${span('not started', String(report.counts.NOT_STARTED))}${report.counts.IN_PROGRESS ? span('in progress', String(report.counts.IN_PROGRESS)) : ''}
${report.makespanSeconds !== undefined ? span('took', formatDuration(report.makespanSeconds), 'makespan') : span('running for', formatDuration(elapsed), 'elapsed')}${report.estimate && running ? span('estimated end', instantLabel(report.estimate.endsAt, report)) : ''}</p>
<p>Times: ${timeNote}. Out of service: from the moment a node is drained and idle (or rebooting) until it is back or failed. Cap: ${cap}; peak: <b id="peak">${peak}</b>.${
    refreshSeconds !== undefined ? ` The session is running: this page reloads every ${refreshSeconds} s.` : ''
  }</p>`;
}

function markerKeyHtml(markers: readonly ReportMarker[]): string {
  const counts = new Map<MarkerKind, number>();
  for (const m of markers) counts.set(m.kind, (counts.get(m.kind) ?? 0) + 1);
  const swatch = (colour: string, dash = false) => `<i class="swatch${dash ? ' dash' : ''}" style="border-color:${colour}"></i>`;
  const items = [
    `<li>${swatch('#1f6feb')}nodes out of service</li>`,
    `<li>${swatch('#d1242f', true)}cap</li>`,
    ...[...counts].map(([kind, n]) => `<li>${swatch(MARKER_COLOURS[kind])}${kind} (${n})</li>`),
  ];
  return `<ul class="key" id="key">${items.join('')}</ul>`;
}

function racksHtml(racks: readonly RackSummary[]): string {
  const rows = racks.map(
    (r) =>
      `<tr${r.failed ? ' class="failed"' : ''}><td>${escapeHtml(r.rack)}</td><td>${r.nodes}</td><td>${r.upgraded}</td><td>${r.failed}</td><td>${r.pending}</td><td>${r.longestOutSeconds ? formatDuration(r.longestOutSeconds) : ''}</td></tr>`,
  );
  return `<table id="racks"><thead><tr><th>rack</th><th>nodes</th><th>upgraded</th><th>failed</th><th>not done</th><th>longest out of service</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table>`;
}

/** Status order of the default sort: failed first, then in flight, not started, upgraded. */
const STATUS_RANK: Record<NodeReport['status'], number> = { FAILED: 0, IN_PROGRESS: 1, NOT_STARTED: 2, UPGRADED: 3 };

function nodesHtml(report: SessionReport, racks: Readonly<Record<string, string>> | undefined): string {
  const start = Date.parse(report.createdAt);
  const entries = Object.entries(report.nodes);
  const options = (values: Iterable<string>) =>
    [...new Set(values)]
      .sort()
      .map((v) => `<option>${escapeHtml(v)}</option>`)
      .join('');
  const rows = entries.map(([name, n], plan) => {
    const out = n.outOfService;
    const seconds = out?.to ? (Date.parse(out.to) - Date.parse(out.from)) / 1000 : undefined;
    const rack = rackOf(name, racks) ?? '-';
    // data-* hold what sorting compares: the plan position, the status rank, seconds from the start.
    const at = (iso: string | undefined) => (iso === undefined ? '' : String((Date.parse(iso) - start) / 1000));
    return `<tr class="${n.status.toLowerCase()}" data-plan="${plan}" data-status="${STATUS_RANK[n.status]}" data-rack="${escapeHtml(rack)}" data-phase="${escapeHtml(n.phase)}" data-since="${at(n.since)}" data-from="${at(out?.from)}" data-to="${at(out?.to)}" data-out="${seconds ?? ''}" data-wave="${n.wave ?? ''}"><td>${escapeHtml(name)}</td><td>${escapeHtml(rack)}</td><td>${n.status}</td><td>${escapeHtml(n.phase)}</td><td>${n.since ? instantLabel(n.since, report) : ''}</td><td>${n.wave ?? ''}</td><td>${out ? instantLabel(out.from, report) : ''}</td><td>${out?.to ? instantLabel(out.to, report) : ''}</td><td>${seconds !== undefined ? formatDuration(seconds) : ''}</td><td>${escapeHtml(n.reason ?? '')}</td></tr>`;
  });
  const column = (label: string, key: string) => `<th data-key="${key}" title="sort by ${label}">${label}</th>`;
  return `<p class="filters">filter: <label>status <select id="filter-status"><option value="">all</option>${options(entries.map(([, n]) => n.status))}</select></label>
<label>rack <select id="filter-rack"><option value="">all</option>${options(entries.map(([name]) => rackOf(name, racks) ?? '-'))}</select></label>
<label>phase <select id="filter-phase"><option value="">all</option>${options(entries.map(([, n]) => n.phase))}</select></label>
<label>name <input id="filter-name" type="search" placeholder="part of a name"></label>
<span id="shown">${entries.length} of ${entries.length} nodes</span> (click a column's title to sort by it; failed first to begin with)</p>
<table id="nodes" class="sortable"><thead><tr>${column('node', 'name')}${column('rack', 'rack')}${column('status', 'status')}${column('phase', 'phase')}${column('since', 'since')}${column('wave', 'wave')}${column('out of service from', 'from')}${column('to', 'to')}${column('out for', 'out')}${column('reason', 'reason')}</tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table>`;
}

const PAGE_CSS = `
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin-top: 0.5em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left; vertical-align: top; }
th[data-key] { cursor: pointer; user-select: none; background: #f6f8fa; }
th.asc::after { content: ' \\25b2'; } th.desc::after { content: ' \\25bc'; }
tr.failed td { background: #fde2e2; } tr.upgraded td { background: #e6f4ea; }
.summary span { margin-right: 1.5em; }
.side-by-side { display: flex; gap: 1.5em; align-items: flex-start; flex-wrap: wrap; }
.chart { flex: 0 0 auto; }
.messages { flex: 1 1 30em; min-width: 24em; }
.messages .scroll { max-height: 420px; overflow-y: auto; border: 1px solid #ddd; }
.messages table { margin: 0; width: 100%; font-size: 12px; }
.messages td:first-child { white-space: nowrap; font-variant-numeric: tabular-nums; }
.key { list-style: none; padding: 0; margin: 0.3em 0; display: flex; flex-wrap: wrap; gap: 1.2em; }
.swatch { display: inline-block; width: 1.6em; height: 0; border-top: 3px solid; margin-right: 0.4em; vertical-align: middle; }
.swatch.dash { border-top-style: dashed; }
.filters label { margin-right: 1em; }
`;

/** The page's own script: the chart with its markers, and the node table's sorting and filtering (no framework). */
const PAGE_SCRIPT = String.raw`
const pad = (n) => String(n).padStart(2, '0');
const tick = (s) => {
  if (simulated) { const m = Math.round(s / 60); return '+' + Math.floor(m / 60) + ':' + pad(m % 60); }
  const d = new Date(startMs + s * 1000);
  return pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes());
};
const markerLines = {
  hooks: {
    draw: [(u) => {
      const ctx = u.ctx;
      const { top, height } = u.bbox;
      ctx.save();
      ctx.lineWidth = 1.5 * devicePixelRatio;
      for (const m of markers) {
        const x = Math.round(u.valToPos(m.at, 'x', true));
        ctx.strokeStyle = markerColours[m.kind];
        ctx.setLineDash(m.kind === 'step' || m.kind === 'wave' ? [2 * devicePixelRatio, 3 * devicePixelRatio] : []);
        ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + height); ctx.stroke();
      }
      ctx.restore();
    }],
  },
};
const xs = steps.map((s) => s[0]);
const data = [xs, steps.map((s) => s[1]), xs.map(() => cap)];
window.timeline = new uPlot({
  width: Math.min(900, Math.max(480, window.innerWidth - 560)), height: 360,
  scales: { x: { time: false } },
  // The key under the chart names every line and marker, without hovering (uPlot's own legend shows values on hover only).
  legend: { show: false },
  plugins: [markerLines],
  axes: [
    {
      label: simulated ? 'time since the session started (simulated, h:mm)' : 'time (UTC)',
      // Ticks on whole minutes and hours, in seconds.
      incrs: [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800],
      values: (u, splits) => splits.map(tick),
    },
    { label: 'nodes' },
  ],
  series: [
    { label: 'time', value: (u, v) => (v == null ? '' : tick(v)) },
    { label: 'out of service', stroke: '#1f6feb', fill: 'rgba(31,111,235,0.15)', paths: uPlot.paths.stepped({ align: 1 }) },
    { label: 'cap', stroke: '#d1242f', dash: [6, 4] },
  ],
}, data, document.getElementById('timeline'));

const table = document.getElementById('nodes');
const body = table.tBodies[0];
const rows = Array.from(body.rows);
const numeric = new Set(['status', 'since', 'wave', 'from', 'to', 'out', 'plan']);
const cellOf = { name: 0, rack: 1, phase: 3, reason: 9 };
const value = (row, key) => {
  if (numeric.has(key)) { const v = row.dataset[key]; return v === '' ? Infinity : Number(v); }
  return row.cells[cellOf[key]].textContent;
};
let sorted = { key: 'status', dir: 1 };
function sort(key, dir) {
  sorted = { key, dir };
  rows.sort((a, b) => {
    const x = value(a, key), y = value(b, key);
    const c = typeof x === 'number' ? (x === y ? 0 : x - y) : x.localeCompare(y, 'en', { numeric: true });
    return c !== 0 ? c * dir : Number(a.dataset.plan) - Number(b.dataset.plan);
  });
  for (const row of rows) body.appendChild(row);
  for (const th of table.tHead.rows[0].cells) th.className = th.dataset.key === key ? (dir > 0 ? 'asc' : 'desc') : '';
}
for (const th of table.tHead.rows[0].cells) {
  th.addEventListener('click', () => sort(th.dataset.key, sorted.key === th.dataset.key ? -sorted.dir : 1));
}
const filters = ['status', 'rack', 'phase'].map((k) => [k, document.getElementById('filter-' + k)]);
const nameFilter = document.getElementById('filter-name');
function filter() {
  let shown = 0;
  const part = nameFilter.value.trim().toLowerCase();
  for (const row of rows) {
    const ok = filters.every(([k, el]) => el.value === '' || (k === 'status' ? row.cells[2].textContent : row.dataset[k]) === el.value)
      && (part === '' || row.cells[0].textContent.toLowerCase().includes(part));
    row.hidden = !ok;
    if (ok) shown++;
  }
  document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' nodes';
}
for (const [, el] of filters) el.addEventListener('change', filter);
nameFilter.addEventListener('input', filter);
sort('status', 1);
`;
