import { spawnSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { claimDataDir, claimDataDirWaiting, findLiveRuntime, runWaitingFor } from '../../local/data-dir';

const tempDir = () => mkdtemp(path.join(os.tmpdir(), 'rollout-registry-'));

describe('data directory ownership', () => {
  it('lets one claim hold a directory at a time, and the next claim in once it is released', async () => {
    const dir = await tempDir();
    const first = await claimDataDir(dir);
    expect(first).toBeDefined();
    expect(await claimDataDir(dir)).toBeUndefined();
    await first!.release();
    const second = await claimDataDir(dir);
    expect(second).toBeDefined();
    await second!.release();
  });

  it('announces the endpoint only once the owner serves, and says whether it runs workflows', async () => {
    const dir = await tempDir();
    const claim = (await claimDataDir(dir))!;
    await expect(findLiveRuntime(dir, 100)).rejects.toMatchObject({ name: 'DataDirInUseError', pid: process.pid });
    await claim.announce('http://127.0.0.1:1', 'rollout', true);
    expect(await findLiveRuntime(dir)).toMatchObject({ pid: process.pid, dynamoDbEndpoint: 'http://127.0.0.1:1', runsWorkflows: true });
    await claim.release();
    expect(await findLiveRuntime(dir)).toBeUndefined();
  });

  it("takes over a dead process's claim", async () => {
    const dir = await tempDir();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    await writeFile(path.join(dir, 'runtime.json'), JSON.stringify({ pid: Number(dead), startedAt: new Date().toISOString() }));
    expect(await findLiveRuntime(dir)).toBeUndefined();
    const claim = await claimDataDir(dir);
    expect(claim).toBeDefined();
    await claim!.release();
  });

  it('gives up waiting for a directory another live process keeps, naming it', async () => {
    const dir = await tempDir();
    const held = (await claimDataDir(dir))!;
    await expect(claimDataDirWaiting(dir, 150)).rejects.toThrow(`data directory ${dir} is in use by process ${process.pid}`);
    await held.release();
  });

  it('says that a run waits for the directory while it waits, so readers in a loop let it in first', async () => {
    const dir = await tempDir();
    const reader = (await claimDataDir(dir))!;
    expect(await runWaitingFor(dir)).toBe(false);
    const run = claimDataDirWaiting(dir, 10_000);
    for (const deadline = Date.now() + 5_000; !(await runWaitingFor(dir)) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
    expect(await runWaitingFor(dir)).toBe(true);
    await reader.release();
    const claim = await run;
    expect(await runWaitingFor(dir)).toBe(false);
    await claim.release();
  });

  it("ignores a dead run's word that it waits", async () => {
    const dir = await tempDir();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    await writeFile(path.join(dir, 'runtime.waiting.json'), JSON.stringify({ pid: Number(dead) }));
    expect(await runWaitingFor(dir)).toBe(false);
  });
});
