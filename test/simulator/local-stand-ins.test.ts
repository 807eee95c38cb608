import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { LocalTransport } from '../../adapters/site/commands/local-transport';
import { StriggerTriggers } from '../../adapters/site/commands/strigger-triggers';
import { writeHeadNodeStandIns } from '../../simulator/local-stand-ins';
import { startTestSite, type TestSite } from '../support/simulator';

const run = promisify(execFile);

describe('the head-node stand-ins a local-transport profile runs (rollout simulate --transport local)', () => {
  let t: TestSite;
  let dir: string;
  beforeAll(async () => {
    t = await startTestSite({ nodes: [{ name: 'c01', nid: 1 }], slurm: { version: '22.05.8' } });
    dir = await mkdtemp(path.join(os.tmpdir(), 'stand-ins-'));
  });
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('pass argv as is, and SLURM_TIME_FORMAT along: %s prints epoch times, as scontrol does', async () => {
    const programs = await writeHeadNodeStandIns(dir, `${t.site.urls.control}/sim/exec`);
    await run(programs.scontrol, ['update', 'NodeName=c01', 'State=DRAIN', 'Reason=admin: bad dimm']);
    const iso = (await run(programs.scontrol, ['-o', 'show', 'node', 'c01'])).stdout;
    expect(iso).toMatch(/ Reason=admin: bad dimm \[root@\d{4}-\d\d-\d\dT[\d:]+\]\n$/);
    const epoch = (await run('env', ['SLURM_TIME_FORMAT=%s', programs.scontrol, '-o', 'show', 'node', 'c01'])).stdout;
    expect(epoch).toMatch(/ Reason=admin: bad dimm \[root@\d{10}\]\n$/);
    expect(t.site.simulator.headNode.commandLog.at(-1)).toBe("'env' 'SLURM_TIME_FORMAT=%s' 'scontrol' '-o' 'show' 'node' 'c01'");
  });

  test("strigger: a session's triggers set and cleared through it, the relay's words whole", async () => {
    const programs = await writeHeadNodeStandIns(dir, `${t.site.urls.control}/sim/exec`);
    const relay = '/usr/local/bin/rollout relay deliver --spool /var/spool/rollout-relay';
    const triggers = new StriggerTriggers({ transport: new LocalTransport(), relay, strigger: programs.strigger });
    const ids = await triggers.arm('s1', ['c01'], ['up', 'drained']);
    expect(t.site.simulator.workloadManager.triggers.list().map((trigger) => [trigger.id, trigger.resId, trigger.program, trigger.perm])).toEqual([
      [ids[0], 'c01', `${relay} --event up --session s1`, true],
      [ids[1], 'c01', `${relay} --event drained --session s1`, true],
    ]);
    await expect(triggers.arm('s1', ['c01'], ['up', 'drained'])).resolves.toEqual(ids);
    await expect(triggers.disarm('s1')).resolves.toBe(2);
    expect(t.site.simulator.workloadManager.triggers.list()).toEqual([]);
  });
});
