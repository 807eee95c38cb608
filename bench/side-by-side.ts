import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * `npm run bench -- --before=REF [bench flags]`: the same bench run twice on this host, one after
 * the other, first on the code of REF (a git worktree of it, made once under the temporary
 * directory, with its own `npm ci`), then on this tree. Each run is a fresh process; beside what the
 * bench prints, each reports its CPU time (user + system: what the work cost, whatever else runs on
 * a shared host), its peak RSS, its wall time, and the load average at its start and end.
 */
export function runSideBySide(ref: string, benchArgs: readonly string[], write: (text: string) => void): void {
  const here = process.cwd();
  const sha = shortSha(ref);
  const head = shortSha('HEAD');
  const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: here, encoding: 'utf8' }).trim() !== '';
  const before = worktreeOf(ref);
  for (const [label, tree] of [
    [`before (${ref} = ${sha})`, before],
    [`after (${head}${dirty ? ' + uncommitted changes' : ''})`, here],
  ] as const) {
    write(`==== ${label}\n`);
    write(`${runMeasured(tree, benchArgs)}\n`);
  }
}

function shortSha(ref: string): string {
  return execFileSync('git', ['rev-parse', '--short', `${ref}^{commit}`], { encoding: 'utf8' }).trim();
}

/**
 * A worktree of `ref` with its dependencies installed: `BENCH_BEFORE_DIR` if set (it must be checked out at
 * that commit with no tracked file changed), else one made under the temporary directory once and reused.
 */
export function worktreeOf(ref: string): string {
  const repo = process.cwd();
  const sha = shortSha(ref);
  const given = process.env['BENCH_BEFORE_DIR'];
  if (given) {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: given, encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: given, encoding: 'utf8' }).trim();
    if (head !== sha || changed !== '' || !existsSync(path.join(given, 'node_modules')))
      throw new Error(`BENCH_BEFORE_DIR ${given}: not a clean checkout of ${sha} with node_modules`);
    return given;
  }
  const dir = path.join(os.tmpdir(), 'baremetal-rollout-bench', sha);
  if (!existsSync(path.join(dir, 'package.json'))) {
    mkdirSync(path.dirname(dir), { recursive: true });
    execFileSync('git', ['worktree', 'add', '--detach', '--force', dir, sha], { cwd: repo, stdio: 'inherit' });
  }
  if (!existsSync(path.join(dir, 'node_modules'))) execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
  return dir;
}

/** Prints the process's own CPU time and peak RSS as it exits, on stderr, as one JSON line (preloaded into each bench process). */
const REPORTER = `process.on('exit', () => { const u = process.resourceUsage(); process.stderr.write('\\n@@bench-resources ' + JSON.stringify({ userMs: u.userCPUTime / 1000, systemMs: u.systemCPUTime / 1000, maxRssKb: u.maxRSS }) + '\\n'); });\n`;

function runMeasured(tree: string, benchArgs: readonly string[]): string {
  const reporter = path.join(os.tmpdir(), 'baremetal-rollout-bench', 'resources.cjs');
  mkdirSync(path.dirname(reporter), { recursive: true });
  writeFileSync(reporter, REPORTER);
  const loadBefore = os.loadavg();
  const started = performance.now();
  const result = spawnSync(process.execPath, ['--require', reporter, 'bin/run-ts.js', 'bench/run.ts', ...benchArgs], {
    cwd: tree,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const wallSeconds = (performance.now() - started) / 1000;
  const loadAfter = os.loadavg();
  const marker = /@@bench-resources (\{.*\})/.exec(result.stderr ?? '');
  const resources = marker ? (JSON.parse(marker[1]!) as { userMs: number; systemMs: number; maxRssKb: number }) : undefined;
  const errors = (result.stderr ?? '').replace(/\n?@@bench-resources .*\n?/, '').trim();
  const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(' ');
  return [
    result.stdout.trimEnd(),
    ...(result.status !== 0 ? [`  (exit ${result.status}) ${errors.split('\n').slice(-5).join('\n  ')}`] : []),
    `  process: ${wallSeconds.toFixed(1)} s wall, ${resources ? `${((resources.userMs + resources.systemMs) / 1000).toFixed(1)} s CPU (user ${(resources.userMs / 1000).toFixed(1)} + system ${(resources.systemMs / 1000).toFixed(1)}), peak RSS ${(resources.maxRssKb / 1024).toFixed(0)} MB` : 'CPU not reported'}` +
      `, load average ${load(loadBefore)} at the start, ${load(loadAfter)} at the end (${os.cpus().length} cores)`,
  ].join('\n');
}
