/**
 * A block of lines at the bottom of a terminal, redrawn in place (what log-update does, in the few
 * escape sequences it takes): each frame moves the cursor up over the last one and clears to the end
 * of the screen, in one write, so a frame never shows half drawn. Text said while it is shown goes
 * above it, and `clear` leaves the terminal as it found it, so that what follows (a summary, a Ctrl-C
 * notice) is never drawn over the view.
 *
 * Why not the log-update package (8.0.0, the registry's newest; not installed here): it requires Node >= 22
 * where this project supports 20.19 (package.json "engines"), and it is ESM-only with six ESM-only
 * dependencies that Jest's CommonJS transform would have to be told of. It would also do three things
 * worse for this view: its `persist` (a notice above the region) erases the frame and leaves it off until
 * the next draw, where `say` writes the notice and the frame again in one write; after the terminal
 * narrows it erases as many rows as the last frame had at the old width, leaving the rewrapped rest on
 * screen, where `erase` counts them at the width now; and it fits a frame taller than the terminal by
 * cutting its top lines, the header (live-view.ts fits the height itself, keeping the header and saying
 * `... and N more`). What it has that this has not: partial redraws and synchronized output (DEC 2026).
 */

const HIDE_CURSOR = '\x1b[?25l';
const SHOW_CURSOR = '\x1b[?25h';
const ERASE_DOWN = '\x1b[J';

/** What the region writes to: a terminal's stream (process.stderr). */
export interface TerminalOut {
  write(text: string): unknown;
  columns?: number;
  rows?: number;
}

export class LiveRegion {
  private shown: readonly string[] = [];
  private cursorHidden = false;
  private readonly restoreCursor = () => this.out.write(SHOW_CURSOR);

  constructor(private readonly out: TerminalOut) {}

  /** The terminal's size now (80x24 where it does not say). */
  size(): { columns: number; rows: number } {
    return { columns: this.out.columns || 80, rows: this.out.rows || 24 };
  }

  /** Replaces the frame shown with `lines` (each already fitted to the width). */
  draw(lines: readonly string[]): void {
    const hide = this.cursorHidden ? '' : HIDE_CURSOR;
    if (!this.cursorHidden) {
      this.cursorHidden = true;
      // A process that leaves at once (a second Ctrl-C, an error) gets its cursor back.
      process.once('exit', this.restoreCursor);
    }
    this.out.write(`${hide}${this.erase()}${frame(lines)}`);
    this.shown = lines;
  }

  /** Writes `text` above the frame, which is drawn again under it. */
  say(text: string): void {
    const line = text.endsWith('\n') ? text : `${text}\n`;
    this.out.write(`${this.erase()}${line}${frame(this.shown)}`);
  }

  /** Removes the frame and gives the cursor back: the terminal is as it was before the first frame. */
  clear(): void {
    this.out.write(`${this.erase()}${this.cursorHidden ? SHOW_CURSOR : ''}`);
    if (this.cursorHidden) process.off('exit', this.restoreCursor);
    this.cursorHidden = false;
    this.shown = [];
  }

  /** Moves to the frame's first line and clears from there: its lines count at the width now (a narrowed terminal wraps them). */
  private erase(): string {
    if (this.shown.length === 0) return '';
    const { columns } = this.size();
    const rows = this.shown.reduce((sum, line) => sum + Math.max(1, Math.ceil(line.length / columns)), 0);
    return `\x1b[${rows}A\r${ERASE_DOWN}`;
  }
}

const frame = (lines: readonly string[]) => (lines.length === 0 ? '' : `${lines.join('\n')}\n`);
