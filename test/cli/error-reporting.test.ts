import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { JsonLinesEventLog } from '../../adapters/events/event-logs';
import { DETAIL_TYPES, statusEvent } from '../../core/events/status-events';
import { runCliInProcess } from '../support/cli';

/**
 * No stack trace reaches a user (issue 12): every error is one line naming the problem, and
 * `--debug` adds the stack. The cases are the audit's reproductions.
 */

const STACK = /\n\s+at /;
const SITE = 'nodes: [{name: n1, nid: 1}]\ngroups: {compute: [n1]}\n';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-errors-'));
});

/** A port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('errors reach the user as one line', () => {
  it('a control plane that does not answer: named with why, exit 1; --debug adds the stack', async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const plain = await runCliInProcess(['env', 'list', '--endpoint', endpoint]);
    expect(plain).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: cannot reach a rollout control plane at ${endpoint}: connect ECONNREFUSED 127.0.0.1:${endpoint.split(':')[2]}\n`,
    });

    const debug = await runCliInProcess(['env', 'list', '--endpoint', endpoint, '--debug']);
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(STACK);
  });

  it('a host to serve on that does not exist: exit 2 naming --host', async () => {
    const site = path.join(dir, 'site.yaml');
    await writeFile(site, SITE);
    const result = await runCliInProcess(['simulate', '--site', site, '--host', 'not a host']);
    expect(result).toEqual({ code: 2, stdout: '', stderr: "error: cannot serve the simulated site: --host 'not a host' is not a known host or address\n" });
  });

  it('an unexpected error is one line that says so and where the stack is', async () => {
    // The event log a directory: nothing the CLI checks for, so an error it did not expect.
    const dataDir = path.join(dir, 'odd');
    await mkdir(path.join(dataDir, 'events.jsonl'), { recursive: true });
    const result = await runCliInProcess(['events', '--data-dir', dataDir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: EISDIR: illegal operation on a directory, read \(unexpected: --debug shows the stack trace\)\n$/);
    expect((await runCliInProcess(['events', '--data-dir', dataDir, '--debug'])).stderr).toMatch(STACK);
  });

  it('a --data-dir that does not exist, or is a file, is refused where sessions are read: exit 2 naming it', async () => {
    const notADirectory = path.join(dir, 'a-file');
    await writeFile(notADirectory, 'x');
    for (const [dataDir, why] of [
      [path.join(dir, 'no-such-dir'), 'does not exist'],
      [notADirectory, 'is not a directory'],
    ] as const) {
      for (const command of [['session', 'list'], ['session', 'get', 'x'], ['session', 'cancel', 'x'], ['events']]) {
        const result = await runCliInProcess([...command, '--data-dir', dataDir]);
        expect(result).toEqual({ code: 2, stdout: '', stderr: expect.stringMatching(new RegExp(`^error: --data-dir '${dataDir}' ${why}`)) });
      }
    }
  });
});

describe('rollout events over a log a crash tore', () => {
  it('leaves the torn line out with a warning naming it, and the next writer does not glue its event to it', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rollout-events-'));
    const file = path.join(dataDir, 'events.jsonl');
    const event = (step: number) =>
      statusEvent(DETAIL_TYPES.stepFinished, { kind: 'upgrade', sessionId: 's1', at: '2030-01-01T00:00:00.000Z', step, stepCount: 2 }, `step-${step}`);
    await new JsonLinesEventLog(file).publish([event(1)]);
    // A process killed mid-append: half a line, no newline.
    await writeFile(file, `${await readFile(file, 'utf8')}{"seq":2,"source":"rollo`);
    await new JsonLinesEventLog(file).publish([event(2)]);

    const result = await runCliInProcess(['events', '--data-dir', dataDir, '--json']);
    expect(result.code).toBe(0);
    expect(
      result.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { detail: { step: number } }).detail.step),
    ).toEqual([1, 2]);
    expect(result.stderr).toBe(`warning: ${file} line 2 is not a whole event (a write cut short by a crash?): left out\n`);
  });
});
