import { formatDuration } from '../core/time-format';

/**
 * The live view of a run, as `kubectl rollout status` and IUF's activity view show one: a header
 * (what runs, where it is, elapsed, ETA, counts, the cap and how much of it is in use) and a table of
 * the nodes in flight (phase, since when, last message). A pure function of the run's state, the
 * terminal's size and the clock, so that every width and height is a unit test; drawing it in place
 * is live-region.ts's, reading it live-state.ts's.
 */

/** One node in flight, as a row of the table. */
export interface LiveNode {
  name: string;
  phase: string;
  /** When it entered its phase (epoch ms, the run's clock). */
  since?: number;
  /** Its newest message, or its reason. */
  message?: string;
}

/** A run as the view shows it, whatever its kind (live-state.ts builds it from the control plane's reads). */
export interface LiveState {
  /** `upgrade <id>`, `deployment <id>`, `task run <id>`. */
  title: string;
  /** `lock-step, step 3 of 8`, `window`, `groups`, ... */
  mode: string;
  state: string;
  /** When it started and when it should end at the pace so far (epoch ms, the run's clock). */
  startedAt?: number;
  endsAt?: number;
  /** The run's clock is a simulated site's (its instants are not dates). */
  simulated: boolean;
  /**
   * The newest instant the run stored: a reader that is not on a simulated run's clock (a second
   * process) shows the elapsed time up to it.
   */
  asOf?: number;
  /** What is counted (`nodes`, `tasks`), how many in all, and by what they are now. */
  total: { count: number; of: string };
  counts: readonly (readonly [label: string, count: number])[];
  /** How many of the run's cap are in use now (`ahead`: drained ahead, holding no slot). */
  cap?: { size: number; inUse: number; ahead?: number };
  /** Said under the header: why nothing starts, that it stops, its newest message. */
  notes: readonly string[];
  /** In a stable order (the plan's), so that rows do not jump between redraws. */
  nodes: readonly LiveNode[];
}

const GAP = '  ';
const SEPARATOR = ' | ';
/** A message column narrower than this is left out rather than cut to nothing. */
const MIN_MESSAGE_WIDTH = 12;

/** The view's lines, each at most `width` columns, at most `height` lines. `now`: the run's clock, epoch ms. */
export function renderLiveView(state: LiveState, width: number, height: number, now: number): string[] {
  const columns = Math.max(1, Math.floor(width));
  const rows = Math.max(1, Math.floor(height));
  const header = [...flow(headerSegments(state, now), columns), ...state.notes.map((note) => fit(note, columns))];
  if (header.length >= rows) return header.slice(0, rows);
  if (state.nodes.length === 0) return header;
  // A blank line, the table's header, then as many rows as fit (the last says how many more, if any do not).
  const room = rows - header.length - 2;
  if (room < 2) return [...header, fit(`${state.nodes.length} node(s) in flight`, columns)].slice(0, rows);
  const shown = state.nodes.length <= room ? state.nodes : state.nodes.slice(0, room - 1);
  const table = nodeTable(shown, columns, now);
  const more = state.nodes.length - shown.length;
  return [...header, '', ...table, ...(more > 0 ? [fit(`... and ${more} more`, columns)] : [])];
}

/** The header's parts, flowed onto as few lines as the width allows. */
function headerSegments(state: LiveState, now: number): string[] {
  const clock = state.simulated ? ' (simulated)' : '';
  const counts = state.counts.filter(([, count]) => count > 0).map(([label, count]) => `${count} ${label}`);
  return [
    state.title,
    `${state.mode}, ${state.state}`,
    ...(state.startedAt !== undefined ? [`elapsed ${formatDuration(Math.max(0, (now - state.startedAt) / 1000))}${clock}`] : []),
    ...(state.endsAt !== undefined ? [`ETA in ${formatDuration(Math.max(0, (state.endsAt - now) / 1000))}`] : []),
    `${state.total.count} ${state.total.of}${counts.length > 0 ? `: ${counts.join(', ')}` : ''}`,
    ...(state.cap ? [`cap ${state.cap.size}: ${state.cap.inUse} in use${state.cap.ahead ? `, ${state.cap.ahead} drained ahead` : ''}`] : []),
  ];
}

/** Segments joined by ` | ` onto lines of at most `width` (one longer than a line is broken after its commas, then cut). */
function flow(segments: readonly string[], width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const segment of segments.flatMap((s) => (s.length > width ? breakAtCommas(s, width) : [s]))) {
    if (line === '') line = segment;
    else if (line.length + SEPARATOR.length + segment.length <= width) line += `${SEPARATOR}${segment}`;
    else {
      lines.push(fit(line, width));
      line = segment;
    }
  }
  if (line !== '') lines.push(fit(line, width));
  return lines;
}

/** `a, b, c` as lines of at most `width`, broken after commas where it can be. */
function breakAtCommas(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const part of text.split(/(?<=,) /)) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + part.length <= width) lines[lines.length - 1] = `${last} ${part}`;
    else lines.push(part);
  }
  return lines;
}

/**
 * NODE, PHASE, SINCE and MESSAGE columns in the width: SINCE where a node says since when, MESSAGE where
 * one has a message and the width leaves it room (SINCE too: rather left out than cut to nothing).
 */
function nodeTable(nodes: readonly LiveNode[], width: number, now: number): string[] {
  const column = (head: string, cell: (node: LiveNode) => string) => {
    const cells = nodes.map(cell);
    return { head, cells, width: Math.max(head.length, ...cells.map((text) => text.length)) };
  };
  const columns = [column('NODE', (node) => node.name), column('PHASE', (node) => node.phase)];
  if (nodes.some((node) => node.since !== undefined))
    columns.push(column('SINCE', (node) => (node.since === undefined ? '' : formatDuration(Math.max(0, (now - node.since) / 1000)))));
  const used = () => columns.reduce((sum, c) => sum + c.width, 0) + GAP.length * (columns.length - 1);
  while (columns.length > 2 && used() > width) columns.pop();
  // The message is the last column: cut to the width left, or left out where too little is.
  if (nodes.some((node) => node.message !== undefined) && width - used() - GAP.length >= MIN_MESSAGE_WIDTH)
    columns.push(column('MESSAGE', (node) => node.message ?? ''));
  const line = (cell: (c: (typeof columns)[number]) => string) =>
    fit(
      columns
        .map((c, i) => (i === columns.length - 1 ? cell(c) : cell(c).padEnd(c.width)))
        .join(GAP)
        .trimEnd(),
      width,
    );
  return [line((c) => c.head), ...nodes.map((_, row) => line((c) => c.cells[row]!))];
}

/** `text` in `width` columns: cut with `...` where longer. */
export function fit(text: string, width: number): string {
  if (text.length <= width) return text;
  return width <= 3 ? text.slice(0, width) : `${text.slice(0, width - 3)}...`;
}
