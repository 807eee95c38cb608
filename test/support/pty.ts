import path from 'node:path';
import { spawn, type IPty } from '@lydell/node-pty';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'rollout.js');

/** How long a wait for text may take: CLI processes on a loaded 2-core machine start and move slowly. */
const DEFAULT_WAIT_MS = 240_000;

export interface PtyExit {
  exitCode: number;
  signal?: number;
}

/** `rollout ARGS` on a pseudo-terminal: stdin, stdout and stderr are the terminal, as an operator's are. */
export interface PtyRun {
  /** Everything written to the terminal so far, escapes included. */
  raw(): string;
  /** The same without its escape sequences (what was written, not what the screen shows now). */
  text(): string;
  /** What the screen shows now: the written text played on a terminal of the run's width, escapes applied. */
  screen(): string[];
  /** Types on the terminal: `y\r`, Ctrl-C as `\x03`. */
  type(keys: string): void;
  /** Resolves as soon as the text (escapes left out) shows, from `after` on (an index into text()); fails after `ms`. */
  waitFor(what: string | RegExp, options?: { ms?: number; after?: number }): Promise<void>;
  exited: Promise<PtyExit>;
  /** Ends the process if it still runs (a failed test must not leave it behind). */
  kill(): void;
}

/** Starts `rollout ARGS` (bin/rollout.js, the compiled CLI the other CLI tests run) on a terminal of `cols` x `rows`. */
export function startInPty(args: readonly string[], options: { cols?: number; rows?: number; env?: NodeJS.ProcessEnv } = {}): PtyRun {
  const cols = options.cols ?? 160;
  // A CI log is not a terminal; on this one the CLI must behave as on an operator's.
  const { CI: _ci, ...env } = { ...process.env, ...options.env };
  const pty: IPty = spawn(process.execPath, [BIN, ...args], {
    name: 'xterm-256color',
    cols,
    rows: options.rows ?? 40,
    cwd: process.cwd(),
    env: { ...env, TERM: 'xterm-256color' } as Record<string, string>,
  });
  let raw = '';
  let ended: PtyExit | undefined;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
  };
  pty.onData((data) => {
    raw += data;
    wake();
  });
  const exited = new Promise<PtyExit>((resolve) =>
    pty.onExit(({ exitCode, signal }) => {
      ended = { exitCode, ...(signal ? { signal } : {}) };
      resolve(ended);
      wake();
    }),
  );
  const text = () => stripAnsi(raw);
  return {
    raw: () => raw,
    text,
    screen: () => playOnScreen(raw, cols),
    type: (keys) => pty.write(keys),
    waitFor(what, { ms = DEFAULT_WAIT_MS, after = 0 } = {}) {
      const seen = () => {
        const since = text().slice(after);
        return typeof what === 'string' ? since.includes(what) : what.test(since);
      };
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (seen()) done(resolve);
          else if (ended) done(() => reject(new Error(`the process ended (${JSON.stringify(ended)}) before ${String(what)} showed; it wrote:\n${text()}`)));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`${String(what)} did not show within ${ms} ms; the terminal shows:\n${text()}`))), ms);
        const done = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      });
    },
    exited,
    kill() {
      if (!ended) pty.kill();
    },
  };
}

// Built from strings: control characters in a regular expression literal read as a mistake.
const ESC = '\u001b';
const BEL = '\u0007';
/** CSI (`ESC [ params final`), OSC (`ESC ] ... BEL|ST`) and two-character escapes. */
const CSI = `${ESC}\\[([0-?]*)[ -/]*([@-~])`;
const OTHER = `${ESC}\\][^${BEL}${ESC}]*(?:${BEL}|${ESC}\\\\)|${ESC}[@-Z\\\\-_]`;
const ESCAPES = new RegExp(`${CSI}|${OTHER}`, 'g');
const CSI_HERE = new RegExp(`^${CSI}`);
const OTHER_HERE = new RegExp(`^(?:${OTHER})`);

/** The text without terminal escape sequences (colours, cursor moves, erases). */
export function stripAnsi(text: string): string {
  return text.replace(ESCAPES, '');
}

/**
 * Plays terminal output on a screen `cols` wide with unbounded scrollback and returns its lines (trailing
 * blanks trimmed): carriage return, newline, backspace, and the cursor moves and erases a progress
 * display uses (CSI A B C D E F G H J K); colours and modes are ignored. Enough to tell a line redrawn
 * in place from lines appended one under another.
 */
export function playOnScreen(output: string, cols: number): string[] {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  const line = () => (lines[row] ??= []);
  const moveTo = (r: number, c: number) => {
    row = Math.max(0, r);
    col = Math.max(0, Math.min(cols - 1, c));
    while (lines.length <= row) lines.push([]);
  };
  for (let i = 0; i < output.length; i++) {
    const ch = output[i]!;
    if (ch === ESC) {
      const match = CSI_HERE.exec(output.slice(i, i + 32));
      const other = match ? undefined : OTHER_HERE.exec(output.slice(i, i + 256));
      const length = (match ?? other)?.[0].length ?? 1;
      if (match) {
        const params = match[1]!.replace(/^\?/, '');
        const n = Number(params.split(';')[0] || '1');
        switch (match[2]) {
          case 'A':
            moveTo(row - n, col);
            break;
          case 'B':
            moveTo(row + n, col);
            break;
          case 'C':
            moveTo(row, col + n);
            break;
          case 'D':
            moveTo(row, col - n);
            break;
          case 'E':
            moveTo(row + n, 0);
            break;
          case 'F':
            moveTo(row - n, 0);
            break;
          case 'G':
            moveTo(row, n - 1);
            break;
          case 'H': {
            const [r = '1', c = '1'] = params.split(';');
            moveTo(Number(r || '1') - 1, Number(c || '1') - 1);
            break;
          }
          case 'K': {
            const mode = Number(params || '0');
            if (mode === 0) line().length = Math.min(line().length, col);
            else if (mode === 1) for (let c = 0; c <= col && c < line().length; c++) line()[c] = ' ';
            else lines[row] = [];
            break;
          }
          case 'J': {
            const mode = Number(params || '0');
            if (mode === 0) {
              line().length = Math.min(line().length, col);
              lines.length = row + 1;
            } else if (mode === 2 || mode === 3) for (let r = 0; r < lines.length; r++) lines[r] = [];
            break;
          }
        }
      }
      i += length - 1;
      continue;
    }
    if (ch === '\r') col = 0;
    else if (ch === '\n') moveTo(row + 1, col);
    else if (ch === '\b') col = Math.max(0, col - 1);
    else if (ch >= ' ') {
      if (col >= cols) moveTo(row + 1, 0);
      const here = line();
      while (here.length < col) here.push(' ');
      here[col] = ch;
      col++;
    }
  }
  return lines.map((l) => l.join('').trimEnd());
}
