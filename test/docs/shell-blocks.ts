/**
 * The shell blocks of the docs (```sh, ```bash, ```console) and what the guard does with each: run it here, as
 * written, or skip it for the reason the markdown gives in a marker on the line before it:
 *
 *   <!-- not run: needs a Slurm cluster -->       skipped, the reason reviewed with the docs
 *   <!-- exit 1 -->                               run; the block documents that it ends with this status
 *
 * A block with no marker must be one that runs on a machine with only Node (no cluster, no AWS account, no
 * network): every command a local `rollout` (or `npx rollout`), a background `rollout simulate` or `serve` the
 * block stops itself (`kill %1`), or one of a few shell helpers around them, with no placeholder (ID, URL, FILE,
 * DIR, `<...>`) and no optional part (`[--json]`). Anything else is `unclassified`: the guard fails naming it, so
 * a new block is either runnable or says why not.
 */

export interface ShellBlock {
  /** 1-based line of the opening fence. */
  line: number;
  /** The block's text, without the fences (a console block's commands, without their `$ ` prompts). */
  script: string;
  /** `<!-- not run: why -->` before the block. */
  notRun?: string;
  /** `<!-- exit N -->` before the block: the status it documents (else 0). */
  expectedExit: number;
}

const FENCE = /^```(\w*)\s*$/;
const SHELLS = new Set(['sh', 'bash', 'console']);
const NOT_RUN = /^<!--\s*not run:\s*(.+?)\s*-->$/;
const EXIT = /^<!--\s*exit\s+(\d+)\s*-->$/;

/** Every shell block of a markdown text, with the marker (if any) on the nearest non-blank line before it. */
export function shellBlocks(markdown: string): ShellBlock[] {
  const lines = markdown.split('\n');
  const blocks: ShellBlock[] = [];
  let open: { line: number; language: string; body: string[] } | undefined;
  lines.forEach((text, index) => {
    const fence = FENCE.exec(text);
    if (open) {
      if (text.startsWith('```')) {
        if (SHELLS.has(open.language)) blocks.push(toBlock(open, lines));
        open = undefined;
      } else open.body.push(text);
      return;
    }
    if (fence) open = { line: index + 1, language: fence[1]!, body: [] };
  });
  return blocks;
}

function toBlock(open: { line: number; language: string; body: string[] }, lines: string[]): ShellBlock {
  let before = open.line - 2;
  while (before >= 0 && lines[before]!.trim() === '') before--;
  const marker = before >= 0 ? lines[before]!.trim() : '';
  const body = open.language === 'console' ? open.body.filter((l) => l.startsWith('$ ')).map((l) => l.slice(2)) : open.body;
  const notRun = NOT_RUN.exec(marker)?.[1];
  const exit = EXIT.exec(marker)?.[1];
  return { line: open.line, script: `${body.join('\n')}\n`, ...(notRun ? { notRun } : {}), expectedExit: exit ? Number(exit) : 0 };
}

/** The block's commands: continuation lines joined, comments and blank lines left out. */
export function commands(script: string): string[] {
  return script
    .replace(/\s*\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter((line) => line !== '');
}

/** A command that runs here: a local rollout, or a shell helper around one. */
const RUNNABLE: RegExp[] = [
  /^(npx )?rollout \S/,
  /^source <\(rollout completion (bash|zsh)\)$/,
  /^[A-Z_]+=\$\((rollout|sed) .*\)$/, // a value read from an earlier command (a session id, an endpoint)
  /^until \[ -s \S+ \]; do sleep [\d.]+; done$/, // waiting for a background process's first line
  /^kill %1$/,
  /^\.\/rollout-relay --/, // the relay script an earlier command wrote (`rollout relay script --output rollout-relay`)
];
/** What needs a machine this test does not have, or is a synopsis rather than a command. */
const NEEDS_MORE: RegExp[] = [
  /--aws\b/,
  /--api\b/,
  /--endpoint (?!"\$ENDPOINT")/, // only the endpoint of a serve this block started (read into $ENDPOINT)
  /(^|[^$"\w])(ID|URL|FILE|DIR|SEED_ID|SESSION_ID)\b(?!=)/, // a placeholder, not a shell variable
  /\s\[[-a-z]/, // an optional part: [--json]
  /<[a-z][^>]*>/, // <a placeholder>
  /\(--/, // a choice: (--site FILE | --site-config FILE)
];

/** Why a command cannot run here, or undefined when it can. */
export function whyNotRunnable(command: string, script: string): string | undefined {
  if (!RUNNABLE.some((pattern) => pattern.test(command))) return `'${command}' is no local rollout command`;
  const needs = NEEDS_MORE.find((pattern) => pattern.test(command));
  if (needs) return `'${command}' needs more than this machine, or is a synopsis (${needs.source})`;
  // A long-running process only in the background, and only in a block that stops it.
  if (/^rollout (serve|simulate)\b/.test(command) && !(command.endsWith('&') && /^kill %1$/m.test(script))) {
    return `'${command}' runs until stopped: run it in the background (&) and end the block with 'kill %1'`;
  }
  return undefined;
}

export type Verdict = { run: true } | { run: false; reason: string; marked: boolean };

/** Run it, skip it (marked, with its reason), or neither: unclassified, with why. */
export function classify(block: ShellBlock): Verdict {
  if (block.notRun) return { run: false, reason: block.notRun, marked: true };
  for (const command of commands(block.script)) {
    const why = whyNotRunnable(command, block.script);
    if (why) return { run: false, reason: why, marked: false };
  }
  return { run: true };
}
