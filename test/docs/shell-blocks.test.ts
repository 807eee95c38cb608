import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../contracts/paths';
import { classify, commands, type ShellBlock, shellBlocks, whyNotRunnable } from './shell-blocks';

/**
 * The README guard (issue 28 item 4): the shell blocks of README.md and docs/ run as written. Each block is run or
 * marked `<!-- not run: why -->` (shell-blocks.ts says which is which); an unmarked block that cannot run here
 * fails the test. The blocks of one file run in order, each in a bash of its own (`-e`: the first failing command
 * ends it), in one temporary directory per file that mirrors the repository (a symlink per top-level entry): a
 * block reads `examples/...` as written, writes only there, and a later block sees what an earlier one wrote (a
 * data directory). `rollout` is `node bin/rollout.js` through a shim on PATH (as `npm link` would put it there);
 * `npx rollout` resolves the package's own bin, offline. Each block must exit 0, or the status `<!-- exit N -->`
 * documents. Every process a block starts is in its own process group, which is ended after it.
 */

const BLOCK_TIMEOUT_MS = 120_000;

/**
 * README.md and every markdown file under docs/, but the generated references (docs/reference/: written from the
 * program and the schemas, held to them by their own test; their usage lines are synopses, not commands).
 */
function markdownFiles(): string[] {
  const docs = readdirSync(path.join(PROJECT_ROOT, 'docs'), { recursive: true, encoding: 'utf8' });
  const guides = docs.filter((file) => file.endsWith('.md') && !file.startsWith(`reference${path.sep}`)).map((file) => path.join('docs', file));
  return ['README.md', ...guides.sort()];
}

interface Ran {
  code: number | null;
  output: string;
}

function runBlock(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), BLOCK_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGTERM'); // anything the block left in the background
      } catch {
        // the group has ended already
      }
      resolve({ code, output });
    });
  });
}

/** A directory that reads as the repository (every top-level entry a symlink) and keeps what the blocks write. */
async function repositoryMirror(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-docs-'));
  for (const entry of await readdir(PROJECT_ROOT)) {
    if (!entry.startsWith('.')) await symlink(path.join(PROJECT_ROOT, entry), path.join(dir, entry));
  }
  return dir;
}

describe('the classification of shell blocks', () => {
  const block = (script: string, marker = ''): ShellBlock => shellBlocks(`${marker}\n\`\`\`sh\n${script}\`\`\`\n`)[0]!;

  it('runs a local rollout command, and the helpers around one', () => {
    expect(classify(block('rollout plan upgrade --site examples/sites/x.yaml \\\n  --step-size 8   # a comment\n'))).toEqual({ run: true });
    expect(classify(block('ID=$(rollout session list --data-dir .rollout --ids | head -n 1)\nrollout session get "$ID" --data-dir .rollout\n'))).toEqual({
      run: true,
    });
    expect(classify(block('rollout serve --site s.yaml > serve.json &\nuntil [ -s serve.json ]; do sleep 0.2; done\nkill %1\n'))).toEqual({ run: true });
    expect(classify(block("rollout relay script --output rollout-relay\n./rollout-relay --spool relay-spool --event up 'c[01-02]'\n"))).toEqual({ run: true });
  });

  it('leaves a block that needs more, or is a synopsis, unclassified unless it is marked', () => {
    for (const script of [
      'rollout session get ID --endpoint http://127.0.0.1:8083\n',
      'rollout upgrade --aws --starting-label a\n',
      'rollout session list --data-dir .rollout [--json]\n',
      'rollout upgrade --site-config <the profile>\n',
      'aws events put-rule --name x\n',
      'npm run scenarios -- --count 1000\n',
      'rollout serve --site s.yaml\n',
    ]) {
      expect(classify(block(script))).toMatchObject({ run: false, marked: false });
      expect(classify(block(script, '<!-- not run: needs a cluster -->'))).toEqual({ run: false, reason: 'needs a cluster', marked: true });
    }
  });

  it('reads a documented exit status, the commands of a console block, and the blocks of a file in order', () => {
    const [first, second] = shellBlocks(
      'text\n<!-- exit 2 -->\n\n```sh\nrollout upgrade\n```\n```yaml\nx: 1\n```\n```console\n$ rollout --help\nUsage: rollout\n```\n',
    );
    expect(first).toMatchObject({ line: 4, expectedExit: 2, script: 'rollout upgrade\n' });
    expect(second).toMatchObject({ line: 10, expectedExit: 0, script: 'rollout --help\n' });
    expect(commands('a \\\n  b # c\n\n# d\ne\n')).toEqual(['a b', 'e']);
    expect(whyNotRunnable('rollout session get ID --data-dir d', '')).toContain('synopsis');
  });
});

describe('the shell blocks of README.md and docs/', () => {
  let shim: string;
  const counts = { run: 0, notRun: 0 };
  const notRunReasons: string[] = [];

  beforeAll(async () => {
    shim = await mkdtemp(path.join(os.tmpdir(), 'rollout-shim-'));
    const rollout = path.join(shim, 'rollout');
    await writeFile(rollout, `#!/bin/sh\nexec "${process.execPath}" "${path.join(PROJECT_ROOT, 'bin', 'rollout.js')}" "$@"\n`);
    await chmod(rollout, 0o755);
  });
  afterAll(async () => {
    await rm(shim, { recursive: true, force: true });
    // The figure the issue asks for, and the reasons of the blocks left out, for review.
    console.log(`docs shell blocks: ${counts.run} run, ${counts.notRun} marked not run\n${notRunReasons.map((reason) => `  not run: ${reason}`).join('\n')}`);
  });

  it('every block is runnable here or marked with why not', async () => {
    const unclassified: string[] = [];
    for (const file of markdownFiles()) {
      for (const block of shellBlocks(await readFile(path.join(PROJECT_ROOT, file), 'utf8'))) {
        const verdict = classify(block);
        if (!verdict.run && !verdict.marked) unclassified.push(`${file}:${block.line}: ${verdict.reason}`);
      }
    }
    expect(unclassified).toEqual([]);
  });

  it.each(markdownFiles().map((file) => [file]))(
    'the runnable blocks of %s run as written',
    async (file) => {
      const blocks = shellBlocks(await readFile(path.join(PROJECT_ROOT, file), 'utf8'));
      const env = { ...process.env, PATH: `${shim}${path.delimiter}${process.env.PATH}`, npm_config_offline: 'true', CI: 'true' };
      const dir = await repositoryMirror();
      const failures: string[] = [];
      try {
        for (const block of blocks) {
          const verdict = classify(block);
          if (!verdict.run) {
            if (verdict.marked) {
              counts.notRun++;
              notRunReasons.push(`${file}:${block.line}: ${verdict.reason}`);
            }
            continue;
          }
          counts.run++;
          const ran = await runBlock(block.script, dir, env);
          if (ran.code !== block.expectedExit) {
            failures.push(
              `${file}:${block.line}: exit ${ran.code}, expected ${block.expectedExit}\n${block.script}--- its output, the end:\n${ran.output.slice(-2000)}`,
            );
          }
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      expect(failures).toEqual([]);
    },
    300_000,
  );

  it('ran every block it did not skip', async () => {
    let runnable = 0;
    for (const file of markdownFiles())
      runnable += shellBlocks(await readFile(path.join(PROJECT_ROOT, file), 'utf8')).filter((block) => classify(block).run).length;
    expect(counts.run).toBe(runnable);
    // README's examples alone are more than this: a parser that found no block would pass everything.
    expect(runnable).toBeGreaterThanOrEqual(10);
  });
});
