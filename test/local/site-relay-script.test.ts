import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SiteEventKind } from '../../core/site/site-event';
import { startServedControlPlane } from '../../local/serve';
import { drainSpool, firingId, spooledFirings, spoolFiring } from '../../local/site-relay';
import { RELAY_SCRIPT_FIRED_AT_VARIABLE, RELAY_SCRIPT } from '../../local/site-relay-script';
import { runCliInProcess } from '../support/cli';
import { buildSite } from '../support/sites';

/**
 * The relay as a POSIX sh script (`rollout relay script`, local/site-relay-script.ts), for a slurmctld host without
 * Node: run by /bin/sh and dash, it spools a firing byte for byte as spoolFiring does (file name, JSON body, id),
 * never half a file, exits at once; what it spools `rollout relay drain` delivers to `rollout serve`.
 */

let work: string;
let script: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'relay-script-'));
  script = path.join(work, 'rollout-relay');
  const written = await runCliInProcess(['relay', 'script', '--output', script]);
  expect(written.code).toBe(0);
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});
let spool: string;
beforeEach(async () => {
  spool = await mkdtemp(path.join(work, 'spool-'));
});

interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}
/** Runs the script with `shell`, its arguments and, given, a fixed firedAt (the test-only variable). */
function runScript(shell: string, args: string[], firedAt?: Date): Promise<ScriptRun> {
  const env = { PATH: process.env.PATH, ...(firedAt ? { [RELAY_SCRIPT_FIRED_AT_VARIABLE]: firedAt.toISOString() } : {}) };
  const started = Date.now();
  return new Promise((resolve) =>
    execFile(shell, [script, ...args], { env }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr, ms: Date.now() - started }),
    ),
  );
}

/** /bin/sh, then dash and bash where installed and not /bin/sh itself (dash is Debian's): the script must be plain POSIX sh. */
const SHELLS = ['/bin/sh', '/usr/bin/dash', '/bin/bash']
  .filter((shell) => existsSync(shell))
  .filter((shell, i, all) => all.findIndex((other) => realpathSync(other) === realpathSync(shell)) === i);
const FIRED_AT = new Date('2026-11-29T01:00:00.123Z');

const FIRINGS: { label: string; event: SiteEventKind; hostlist: string; session?: string }[] = [
  { label: 'up c[01-02],d3 for a session', event: 'up', hostlist: 'c[01-02],d3', session: 'upgrade-7f3a.b:c_d' },
  { label: 'drained nid[0001-0004,0007],login-1 without a session', event: 'drained', hostlist: 'nid[0001-0004,0007],login-1' },
  { label: 'down c01 for a session', event: 'down', hostlist: 'c01', session: 's1' },
];

describe.each(SHELLS)('the relay script run by %s', (shell) => {
  test.each(FIRINGS)('$label: the same file, bytes and id as spoolFiring', async ({ label: _label, ...firing }) => {
    const args = ['--spool', spool, '--event', firing.event, ...(firing.session ? ['--session', firing.session] : []), firing.hostlist];
    const run = await runScript(shell, args, FIRED_AT);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const reference = await mkdtemp(path.join(work, 'reference-'));
    const expected = await spoolFiring(reference, { ...firing, firedAt: FIRED_AT });
    const [spooled, ...others] = await spooledFirings(spool);
    expect(others).toEqual([]);
    expect(spooled!.body).toEqual(expected.body);
    expect(spooled!.body.id).toBe(firingId(firing.event, firing.hostlist, FIRED_AT.toISOString(), firing.session));
    expect(path.basename(spooled!.file)).toBe(path.basename(expected.file));
    expect(await readFile(spooled!.file, 'utf8')).toBe(await readFile(expected.file, 'utf8'));
    expect(run.stdout).toBe(`${expected.body.id}: spooled in ${spooled!.file}\n`);
    // Only the firing: no temporary file left behind.
    expect(await readdir(spool)).toEqual([path.basename(expected.file)]);
  });

  test('as slurmctld runs it (stdin, stdout and stderr closed, on the clock): exits 0 at once, the firing spooled with the time it ran', async () => {
    const before = Date.now();
    const command = `${shell} "${script}" --event up --session s2 --spool "${spool}" --endpoint http://127.0.0.1:9 'c[01-02]' <&- >&- 2>&-`;
    const run = await new Promise<ScriptRun>((resolve) =>
      execFile('/bin/sh', ['-c', command], (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr, ms: Date.now() - before }),
      ),
    );
    console.log(`the relay script by ${shell}, descriptors closed: ${run.ms} ms`);
    expect(run.code).toBe(0);
    expect(run.ms).toBeLessThan(2000);
    const [firing] = await spooledFirings(spool);
    const firedAt = Date.parse(firing!.body.firedAt);
    expect(firedAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(firedAt).toBeLessThanOrEqual(Date.now());
    expect(firing!.body).toEqual({
      id: firingId('up', 'c[01-02]', firing!.body.firedAt, 's2'),
      event: 'up',
      nodes: 'c[01-02]',
      session: 's2',
      firedAt: firing!.body.firedAt,
    });
  });

  test('the same firing twice is one file; --endpoint is ignored with a note; --json prints the id, the file and the outcome', async () => {
    const args = ['--spool', spool, '--event', 'drained', '--session', 's3', '--endpoint', 'http://127.0.0.1:8084', '--json', 'c05'];
    const first = await runScript(shell, args, FIRED_AT);
    const second = await runScript(shell, args, FIRED_AT);
    expect([first.code, second.code]).toEqual([0, 0]);
    expect(first.stderr).toMatch(/--endpoint http:\/\/127\.0\.0\.1:8084 ignored: this script only spools/);
    const [firing, ...others] = await spooledFirings(spool);
    expect(others).toEqual([]);
    expect(JSON.parse(first.stdout)).toEqual({ id: firing!.body.id, file: firing!.file, outcome: { spooled: true } });
  });

  test('a bad argument exits 2 naming it and spools nothing; a spool it cannot create exits 1', async () => {
    const bad: [string[], RegExp][] = [
      [['--event', 'idle', 'c01'], /--event must be one of up, down, drained/],
      [['--event', 'up', '--session', 'a;b', 'c01'], /--session must be a session id/],
      [['--event', 'up', '--session', '', 'c01'], /--session must be a session id/],
      [['--event', 'up', '--session', 's'.repeat(129), 'c01'], /--session must be at most 128/],
      [['--event', 'up', 'c0"1'], /the hostlist 'c0"1' has a character/],
      [['--event', 'up'], /the hostlist is required/],
      [['--event', 'up', 'c01', 'c02'], /one hostlist only/],
      [['--event', 'up', '--spool'], /--spool needs a value/],
      [['--event', 'up', '--bogus', 'c01'], /unknown option --bogus/],
    ];
    for (const [args, message] of bad) {
      const run = await runScript(shell, args[0] === '--event' && !args.includes('--spool') ? ['--spool', spool, ...args] : args);
      expect([run.code, run.stderr]).toEqual([2, expect.stringMatching(message)]);
    }
    expect(await readdir(spool)).toEqual([]);
    const unwritable = await runScript(shell, ['--spool', '/proc/rollout-relay-spool', '--event', 'up', 'c01']);
    expect([unwritable.code, unwritable.stderr]).toEqual([1, expect.stringMatching(/cannot create the spool directory/)]);
  });
});

describe('rollout relay script', () => {
  test('prints the script; --output writes it executable (0755)', async () => {
    const printed = await runCliInProcess(['relay', 'script']);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toBe(RELAY_SCRIPT);
    expect(printed.stdout.startsWith('#!/bin/sh\n')).toBe(true);
    expect(await readFile(script, 'utf8')).toBe(RELAY_SCRIPT);
    expect((await stat(script)).mode & 0o777).toBe(0o755);
  });

  test('what the script spooled, `rollout relay drain` delivers to `rollout serve`: recorded with its nodes expanded and its session', async () => {
    await runScript('/bin/sh', ['--spool', spool, '--event', 'up', '--session', 'no-such-session', 'c[01-02],d3'], FIRED_AT);
    await runScript('/bin/sh', ['--spool', spool, '--event', 'drained', 'c04'], FIRED_AT);
    const ids = Object.fromEntries((await spooledFirings(spool)).map((f) => [f.body.event, f.body.id]));
    const served = await startServedControlPlane({ site: { kind: 'simulated', definition: buildSite(2) } });
    try {
      const result = await drainSpool({ spool, endpoint: served.endpoints.apiEndpoint!, maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 });
      expect(result).toEqual({ delivered: 2, duplicates: 0, rejected: 0, remaining: 0, attempts: 1 });
      const events = await (await fetch(`${served.endpoints.apiEndpoint}/site-events`)).json();
      expect(events).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ id: ids.up, event: 'up', nodes: ['c01', 'c02', 'd3'], session: 'no-such-session', firedAt: FIRED_AT.toISOString() }),
          expect.objectContaining({ id: ids.drained, event: 'drained', nodes: ['c04'], firedAt: FIRED_AT.toISOString() }),
        ]),
      );
      expect(await readdir(spool)).toEqual([]);
    } finally {
      await served.close();
    }
  });
});
