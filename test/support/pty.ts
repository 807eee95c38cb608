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
  /**
   * Calls `listener` with each chunk the process writes, once the screen has played it (`screen`: what it
   * shows then): for a test that watches every frame, not only the screen at the moments it looks.
   */
  onOutput(listener: (chunk: string, screen: readonly string[]) => void): void;
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
  const screen = new Screen(cols);
  let ended: PtyExit | undefined;
  const listeners: ((chunk: string, screen: readonly string[]) => void)[] = [];
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
  };
  pty.onData((data) => {
    raw += data;
    screen.write(data);
    if (listeners.length > 0) {
      const shown = screen.lines();
      for (const listener of listeners) listener(data, shown);
    }
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
    screen: () => screen.lines(),
    onOutput: (listener) => listeners.push(listener),
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

/** An escape sequence cut off at the end of a chunk: kept until the next chunk completes it. */
const CUT = new RegExp(`^${ESC}(?:\\[[0-?]*[ -/]*|\\][^${BEL}${ESC}]*${ESC}?)?$`);

/**
 * A terminal's screen `cols` wide with unbounded scrollback, written chunk by chunk as a pseudo-terminal
 * delivers output (an escape sequence cut between two chunks is kept for the next): carriage return,
 * newline, backspace, and the cursor moves and erases a progress display uses (CSI A B C D E F G H J K);
 * colours and modes are ignored. Enough to tell a line redrawn in place from lines appended one under another.
 */
export class Screen {
  private readonly rows: string[][] = [[]];
  private row = 0;
  private col = 0;
  private pending = '';

  constructor(private readonly cols: number) {}

  /** Its lines, trailing blanks trimmed. */
  lines(): string[] {
    return this.rows.map((l) => l.join('').trimEnd());
  }

  write(chunk: string): void {
    const output = this.pending + chunk;
    this.pending = '';
    for (let i = 0; i < output.length; i++) {
      const ch = output[i]!;
      if (ch === ESC) {
        const match = CSI_HERE.exec(output.slice(i, i + 32));
        const other = match ? undefined : OTHER_HERE.exec(output.slice(i, i + 256));
        if (!match && !other && CUT.test(output.slice(i))) {
          this.pending = output.slice(i);
          return;
        }
        if (match) this.escape(match[1]!.replace(/^\?/, ''), match[2]!);
        i += ((match ?? other)?.[0].length ?? 1) - 1;
        continue;
      }
      if (ch === '\r') this.col = 0;
      else if (ch === '\n') this.moveTo(this.row + 1, this.col);
      else if (ch === '\b') this.col = Math.max(0, this.col - 1);
      else if (ch >= ' ') {
        if (this.col >= this.cols) this.moveTo(this.row + 1, 0);
        const here = this.line();
        while (here.length < this.col) here.push(' ');
        here[this.col] = ch;
        this.col++;
      }
    }
  }

  private line(): string[] {
    return (this.rows[this.row] ??= []);
  }

  private moveTo(r: number, c: number): void {
    this.row = Math.max(0, r);
    this.col = Math.max(0, Math.min(this.cols - 1, c));
    while (this.rows.length <= this.row) this.rows.push([]);
  }

  /** A CSI sequence: `params` (without a leading `?`) and its final character. */
  private escape(params: string, final: string): void {
    const n = Number(params.split(';')[0] || '1');
    const { row, col } = this;
    switch (final) {
      case 'A':
        return this.moveTo(row - n, col);
      case 'B':
        return this.moveTo(row + n, col);
      case 'C':
        return this.moveTo(row, col + n);
      case 'D':
        return this.moveTo(row, col - n);
      case 'E':
        return this.moveTo(row + n, 0);
      case 'F':
        return this.moveTo(row - n, 0);
      case 'G':
        return this.moveTo(row, n - 1);
      case 'H': {
        const [r = '1', c = '1'] = params.split(';');
        return this.moveTo(Number(r || '1') - 1, Number(c || '1') - 1);
      }
      case 'K': {
        const mode = Number(params || '0');
        const line = this.line();
        if (mode === 0) line.length = Math.min(line.length, col);
        else if (mode === 1) for (let c = 0; c <= col && c < line.length; c++) line[c] = ' ';
        else this.rows[row] = [];
        return;
      }
      case 'J': {
        const mode = Number(params || '0');
        if (mode === 0) {
          this.line().length = Math.min(this.line().length, col);
          this.rows.length = row + 1;
        } else if (mode === 2 || mode === 3) for (let r = 0; r < this.rows.length; r++) this.rows[r] = [];
        return;
      }
    }
  }
}
