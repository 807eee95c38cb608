import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { commandFromSpec, describeCommand, eachCommand } from '../../cli/command-spec';
import { rolloutProgram } from '../../cli/program';
import { TEST_SITE_UPGRADE, upgradeArgs } from '../../scripts/upgrade-args';
import { runCli, type CliResult } from '../support/cli';

const ROOT = path.resolve(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'rollout.js');
const SITE = path.join(ROOT, 'examples', 'sites', 'rolling-upgrade-64.yaml');
const run = promisify(execFile);

/** Every command's help text, by its words. */
function helpTexts(root: Command): Map<string, string> {
  const texts = new Map<string, string>();
  eachCommand(root, (command, words) => texts.set(words.join(' '), command.helpInformation()));
  return texts;
}

describe('the compiled CLI', () => {
  it('answers --help and --version from the description of the program, the same text the program itself gives', async () => {
    const full = rolloutProgram();
    const described = helpTexts(commandFromSpec(describeCommand(full)));
    const texts = helpTexts(full);
    expect([...described.keys()]).toEqual([...texts.keys()]);
    for (const [words, text] of texts) expect(described.get(words)).toBe(text);

    // As processes: the compiled entry, which answers these without loading the commands.
    const version = (JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(await runCli(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    const help = await runCli(['session', 'list', '--help']);
    expect(help).toEqual({ code: 0, stdout: texts.get('rollout session list'), stderr: '' });
  });

  it('gives every command --json, but the servers (their first line is JSON already), the completion script, the relay sh script and the HTML report (`session get --json` is its JSON)', () => {
    const withoutJson: string[] = [];
    eachCommand(rolloutProgram(), (command, words) => {
      if (command.commands.length === 0 && !command.options.some((option) => option.long === '--json')) withoutJson.push(words.join(' '));
    });
    expect(withoutJson).toEqual(['rollout report', 'rollout simulate', 'rollout serve', 'rollout relay script', 'rollout completion']);
  });

  it('says a mistyped or missing option, argument or command in one line with where to look, exit 2', async () => {
    const REQUIRED_BUT_TEMPLATE = ['--starting-label', 'a', '--upgrading-label', 'b', '--failed-label', 'c', '--step-size', '1'];
    const cases: [string[], RegExp][] = [
      [['session', 'list', '--jsn'], /^error: unknown option '--jsn' \(did you mean --json\?\) \(see 'rollout session list --help'\)\n$/],
      // Every missing option at once, not one per try; the site too when none of its options was given.
      [
        ['upgrade', '--site', SITE, '--step-size', '2'],
        /^error: required options '--starting-label <label>', '--upgrading-label <label>', '--failed-label <label>' and '--template <id>' not specified \(see 'rollout upgrade --help'\)\n$/,
      ],
      [
        ['upgrade', '--template', 'cos-2.4'],
        /^error: required options '--starting-label <label>', '--upgrading-label <label>', '--failed-label <label>', '--step-size <n>' and one of '--site <file>', '--site-config <file>', '--endpoint <url>' or '--aws' not specified \(see 'rollout upgrade --help'\)\n$/,
      ],
      [
        ['upgrade', '--endpoint', 'http://127.0.0.1:1', ...REQUIRED_BUT_TEMPLATE],
        /^error: required option '--template <id>' not specified \(see 'rollout upgrade --help'\)\n$/,
      ],
      [['session', 'get'], /^error: missing required argument 'id' \(see 'rollout session get --help'\)\n$/],
      [['sesion', 'list'], /^error: unknown command 'sesion' \(did you mean session\?\) \(see 'rollout --help'\)\n$/],
    ];
    for (const [args, line] of cases) expect(await runCli(args)).toEqual({ code: 2, stdout: '', stderr: expect.stringMatching(line) });
  });

  it('builds again when a source changed since the build, so a process never runs stale code', async () => {
    const check = `import { cliBuildIsFresh } from ${JSON.stringify(path.join(ROOT, 'scripts', 'build-cli.mjs'))}; console.log(cliBuildIsFresh())`;
    const cliBuildIsFresh = async () => (await run(process.execPath, ['--input-type=module', '-e', check])).stdout.trim() === 'true';
    expect(await cliBuildIsFresh()).toBe(true);
    const source = path.join(ROOT, 'cli', 'exit-codes.ts');
    const { atime, mtime } = await stat(source);
    try {
      await utimes(source, atime, new Date(Date.now() + 3_600_000));
      expect(await cliBuildIsFresh()).toBe(false);
    } finally {
      await utimes(source, atime, mtime);
    }
    expect(await cliBuildIsFresh()).toBe(true);
  });

  it('ends quietly when the reader of its output goes away (rollout ... | head)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-epipe-'));
    try {
      // The compiled entry's own output (completion) and a command's (session list, through the program).
      for (const args of [
        ['completion', 'zsh'],
        ['session', 'list', '--data-dir', dir],
      ]) {
        const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
        child.stdout.destroy();
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('rollout completion', () => {
  it('bash: completes commands, subcommands, options and the choices of an option, from the program', async () => {
    const complete = async (line: string[]) => {
      const words = line.map((word) => `'${word}'`).join(' ');
      const script = `source <("${process.execPath}" "${BIN}" completion bash); COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _rollout; printf '%s\\n' "\${COMPREPLY[@]}"`;
      return (await run('bash', ['-c', script])).stdout.trim().split('\n').filter(Boolean);
    };
    expect(await complete(['rollout', 'se'])).toEqual(['session', 'serve']);
    expect(await complete(['rollout', 'session', ''])).toEqual([
      'list',
      'get',
      'status',
      'watch',
      'resume',
      'pause',
      'approve',
      'stop',
      'cancel',
      '-h',
      '--help',
    ]);
    expect(await complete(['rollout', 'session', 'list', '--j'])).toEqual(['--json']);
    expect(await complete(['rollout', 'plan', 'deploy', '--format', ''])).toEqual(['text', 'json', 'mermaid']);
    expect(await complete(['rollout', 'completion', ''])).toEqual(['-h', '--help']);
    expect(await complete(['rollout', 'upgrade', '--step-size', ''])).toEqual([]);
    // The values of options the request's schema checks (not commander), offered all the same.
    expect(await complete(['rollout', 'upgrade', '--mode', ''])).toEqual(['lockstep', 'window']);
    expect(await complete(['rollout', 'plan', 'upgrade', '--order', ''])).toEqual(['plan', 'idle-first']);
    expect(await complete(['rollout', 'upgrade', '--approval', ''])).toEqual(['none', 'each-batch']);
    expect(await complete(['rollout', 'session', 'list', '--kind', ''])).toEqual(['upgrade', 'deployment', 'tasks']);
  });

  it('bash: completes the session ids of the data directory the line names, quickly (`session list --ids`)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-complete-ids-'));
    try {
      const site = path.join(dir, 'site.yaml');
      const names = ['n1', 'n2'];
      await writeFile(
        site,
        stringify({ nodes: names.map((name, i) => ({ name, nid: i + 1 })), groups: { compute: names, upgrading: [], failed: [] }, bootTemplates: ['cos-2.4'] }),
      );
      const dataDir = path.join(dir, 'data');
      const upgraded = await runCli(upgradeArgs({ ...TEST_SITE_UPGRADE, site, stepSize: 1, dataDir, json: true }));
      expect(upgraded.code).toBe(0);
      const id = (JSON.parse(upgraded.stdout) as { upgradeId: string }).upgradeId;
      const complete = async (line: string[]) => {
        const words = line.map((word) => `'${word}'`).join(' ');
        // `rollout` as the user has it on PATH: here, this checkout's entry.
        const script = `rollout() { "${process.execPath}" "${BIN}" "$@"; }; source <(rollout completion bash); COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _rollout; printf '%s\\n' "\${COMPREPLY[@]}"`;
        const started = Date.now();
        const completed = (await run('bash', ['-c', script])).stdout.trim().split('\n').filter(Boolean);
        return { completed, ms: Date.now() - started };
      };
      const ids = await complete(['rollout', 'session', 'get', '--data-dir', dataDir, '']);
      expect(ids.completed).toContain(id);
      expect(await runCli(['session', 'list', '--data-dir', dataDir, '--ids'])).toEqual({ code: 0, stdout: `${id}\n`, stderr: '' });
      // Without a data directory or an endpoint on the line there is nothing to ask: no ids, only the options.
      expect((await complete(['rollout', 'session', 'stop', ''])).completed.every((word) => word.startsWith('-'))).toBe(true);
      expect((await complete(['rollout', 'session', 'stop', '--data-dir', dataDir, id.slice(0, 4)])).completed).toEqual([id]);
      console.log(`completion of ids took ${ids.ms} ms`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  // zsh is not on a machine with only Node: skipped there, saying why; in CI (.ci/run installs it) it must run.
  const haveZsh = ['/usr/bin/zsh', '/bin/zsh', '/usr/local/bin/zsh'].some((file) => existsSync(file));
  if (!haveZsh && process.env.CI) throw new Error('zsh is missing: .ci/run installs it for the completion test');
  if (!haveZsh) console.warn('cli-startup.test.ts: the zsh completion test is skipped: zsh is not installed (apt-get install zsh; .ci/run does)');
  (haveZsh ? it : it.skip)(
    `zsh: the script loads, and hands each command its own options and subcommands${haveZsh ? '' : ' (SKIPPED: zsh is not installed)'}`,
    async () => {
      // zsh's completion functions stubbed to print what they were given: what our function chooses is what is checked.
      const complete = async (line: string[]) => {
        const words = line.map((word) => `'${word}'`).join(' ');
        const script = [
          'compdef() { :; }',
          '_arguments() { printf "%s\\n" "$@"; }',
          `source <("${process.execPath}" "${BIN}" completion zsh)`,
          `words=(${words}); CURRENT=${line.length}`,
          '_rollout',
        ].join('\n');
        return (await run('zsh', ['-f', '-c', script])).stdout.trim().split('\n');
      };
      const session = await complete(['rollout', 'session', '']);
      expect(session).toContain('1: :{_describe command subcommands}');
      const list = await complete(['rollout', 'session', 'list', '--']);
      expect(list).toContain('--json[print JSON]');
      expect(list).toContain('--data-dir[data directory of the sessions]:dir:_files -/');
      expect(list).not.toContain('1: :{_describe command subcommands}');
      const plan = await complete(['rollout', 'plan', 'deploy', '--format', '']);
      expect(plan).toContain('--format[how to print the plan]:format:(text json mermaid)');
      expect(await complete(['rollout', 'upgrade', '--mode', ''])).toContain('--mode[lockstep]:mode:(lockstep window)');
      // A session id is asked of the sessions the line names.
      expect(await complete(['rollout', 'session', 'get', ''])).toContain('1:id:_rollout_ids');
    },
  );
});

describe('rollout serve on a busy port', () => {
  let busy: Server;
  afterEach(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  it('says which port, which option and what to do; exit 1', async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    const results: CliResult[] = [
      await runCli(['serve', '--site', SITE, '--port', String(port)]),
      await runCli(['serve', '--site', SITE, '--api-port', String(port)]),
      await runCli(['serve', '--site', SITE, '--dynamodb-port', String(port)]),
    ];
    expect(results.map((result) => ({ ...result, stderr: result.stderr.trim() }))).toEqual(
      ['--port', '--api-port', '--dynamodb-port'].map((option) => ({
        code: 1,
        stdout: '',
        stderr: `error: port ${port} on 127.0.0.1 is already in use (another rollout serve?): stop what listens there, or give another ${option} (${option} 0 takes any free port)`,
      })),
    );
  });
});

describe('--data-dir', () => {
  it('a run that creates it says so once, on stderr', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-new-dir-'));
    try {
      const dataDir = path.join(dir, 'new');
      const site = path.join(dir, 'site.yaml');
      await writeFile(
        site,
        stringify({
          nodes: [
            { name: 'n1', nid: 1 },
            { name: 'n2', nid: 2 },
          ],
          groups: { compute: ['n1', 'n2'], upgrading: [], failed: [] },
          bootTemplates: ['cos-2.4'],
        }),
      );
      const args = upgradeArgs({ ...TEST_SITE_UPGRADE, site, json: true, dataDir });
      const first = await runCli(args);
      expect(first.stderr.split('\n').filter((line) => line.includes('data directory'))).toEqual([`creating the data directory ${dataDir}`]);
      expect((await stat(dataDir)).isDirectory()).toBe(true);
      const listed = await runCli(['session', 'list', '--data-dir', dataDir, '--json']);
      expect(JSON.parse(listed.stdout)).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
