import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LocalTransport } from '../../adapters/site/commands/local-transport';
import { parseTriggerRow, StriggerTriggers } from '../../adapters/site/commands/strigger-triggers';
import { parseRelayProgram } from '../../core/site/site-event';
import { RealSlurmCluster, type RealSlurmRelease } from '../../scripts/slurm/real-slurm';
import { rpcsDuring } from '../../scripts/slurm/sdiag';
import { TRIGGER_PASS_MS } from '../../simulator/models/trigger-manager';
import { describeRealSlurm } from '../support/describe-real-slurm';

/**
 * A session's triggers (StriggerTriggers, issue 29) on a real Slurm, per release: arm on a 4-node cluster with a
 * relay that is a script in the cluster's dir (it appends its arguments to a file; a chroot's slurmctld sees the
 * dir at the same path), a node drained and rebooted as slurm-reboot does (`scontrol reboot <node>`), the
 * firings' words (`--event drained|up --session S <node>`), arm again (the same 3 triggers), disarm (none of the
 * session's left, another session's kept). The slurmctld RPCs of arm and disarm are counted with sdiag and printed.
 */

const S = 'a1b2c3d4-0000-4000-8000-00000000aaaa';
const OTHER = 'a1b2c3d4-0000-4000-8000-00000000bbbb';
/** Two trigger passes and a margin: the longest a firing may take after the change. */
const FIRING_MS = 2 * TRIGGER_PASS_MS + 4000;

async function script(release: RealSlurmRelease) {
  const started = Date.now();
  const cluster = await RealSlurmCluster.start({ release, nodes: 4, restd: false, rebootDelaySeconds: 1, returnToService: 2 });
  try {
    const relayScript = path.join(cluster.dir, 'relay.sh');
    const firingsFile = path.join(cluster.dir, 'relay-firings.log');
    writeFileSync(relayScript, `#!/bin/sh\necho "$*" >> ${firingsFile}\n`);
    chmodSync(relayScript, 0o755);
    // The relay with words of its own, as a site's `rollout relay deliver --spool ...`.
    const relay = `${relayScript} deliver --spool ${path.join(cluster.dir, 'spool')}`;
    const triggers = new StriggerTriggers({ transport: new LocalTransport({ env: cluster.env }), relay });
    const listed = async () =>
      (await cluster.run('strigger', ['--get', '--noheader'])).stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => parseTriggerRow(line)!);
    const ofSession = async (session: string) => (await listed()).filter((row) => parseRelayProgram(row.program)?.session === session);
    const firings = () => (existsSync(firingsFile) ? readFileSync(firingsFile, 'utf8').split('\n').filter(Boolean) : []);
    const awaitFiring = async (words: string) => {
      const from = Date.now();
      while (!firings().includes(words) && Date.now() - from < FIRING_MS) await new Promise((r) => setTimeout(r, 200));
      return (Date.now() - from) / 1000;
    };

    const other = await triggers.arm(OTHER, ['c01'], ['up']);
    // A counter start of its own: a slurmctld just started may still move its 'Data since', which rpcsDuring refuses.
    await cluster.sdiagReset();
    const armed = await rpcsDuring(cluster.env, () => triggers.arm(S, cluster.nodes, ['up', 'down', 'drained']));
    const rows = await ofSession(S);
    expect(rows.map((row) => [row.id, row.resType, row.resId, row.type, row.flags, row.program])).toEqual(
      (['up', 'down', 'drained'] as const).map((kind, i) => [armed.result[i], 'node', 'c[01-04]', kind, 'PERM', `${relay} --event ${kind} --session ${S}`]),
    );
    const again = await rpcsDuring(cluster.env, () => triggers.arm(S, ['c04', 'c03', 'c02', 'c01'], ['up', 'down', 'drained']));
    expect(again.result).toEqual(armed.result);
    expect((await ofSession(S)).map((row) => row.id)).toEqual(armed.result);

    // As a rolling upgrade takes a node: drained (idle: fires drained), then rebooted by slurm-reboot (fires up on its registration).
    await cluster.scontrol('update', 'NodeName=c02', 'State=DRAIN', 'Reason=strigger-triggers test');
    const drainedSeconds = await awaitFiring(`deliver --spool ${path.join(cluster.dir, 'spool')} --event drained --session ${S} c02`);
    await cluster.scontrol('reboot', 'c02');
    const upSeconds = await awaitFiring(`deliver --spool ${path.join(cluster.dir, 'spool')} --event up --session ${S} c02`);
    const seen = firings();
    // Permanent: the same 3 still listed after firing (a fired one's copy first in slurmctld's list).
    expect((await ofSession(S)).map((row) => row.id).sort()).toEqual([...armed.result].sort());

    const disarmed = await rpcsDuring(cluster.env, () => triggers.disarm(S));
    expect(disarmed.result).toBe(3);
    expect(await ofSession(S)).toEqual([]);
    expect((await ofSession(OTHER)).map((row) => row.id)).toEqual(other);
    const disarmedAgain = await rpcsDuring(cluster.env, () => triggers.disarm(S));
    expect(disarmedAgain.result).toBe(0);
    return { version: cluster.version, armed, again, disarmed, disarmedAgain, seen, drainedSeconds, upSeconds, seconds: (Date.now() - started) / 1000 };
  } finally {
    await cluster.stop();
  }
}

describeRealSlurm('StriggerTriggers on a real Slurm', (release) => {
  test('arm sets 3 permanent triggers (5 RPCs), arm again keeps them (1), a drain and a reboot fire the relay with the session, disarm clears them (4)', async () => {
    const r = await script(release);
    const rpcs = (m: { byType: Record<string, number>; total: number }) => `${m.total} (${JSON.stringify(m.byType)})`;
    console.log(
      [
        `StriggerTriggers, Slurm ${r.version}: ${r.seconds.toFixed(1)} s`,
        `  arm (3 kinds, fresh): ${rpcs(r.armed)}`,
        `  arm again:            ${rpcs(r.again)}`,
        `  disarm (3):           ${rpcs(r.disarmed)}`,
        `  disarm again (0):     ${rpcs(r.disarmedAgain)}`,
        `  firings (drained after ${r.drainedSeconds.toFixed(1)} s, up after ${r.upSeconds.toFixed(1)} s):`,
        ...r.seen.map((line) => `    ${line}`),
      ].join('\n'),
    );
    const words = (kind: string) => expect.stringMatching(new RegExp(`^deliver --spool \\S+ --event ${kind} --session ${S} c02$`));
    expect(r.seen).toEqual(expect.arrayContaining([words('drained'), words('up')]));
    expect(r.armed.byType).toMatchObject({ REQUEST_TRIGGER_GET: 2, REQUEST_TRIGGER_SET: 3 });
    expect(r.again.byType).toMatchObject({ REQUEST_TRIGGER_GET: 1 });
    expect(r.again.byType.REQUEST_TRIGGER_SET).toBeUndefined();
    expect(r.disarmed.byType).toMatchObject({ REQUEST_TRIGGER_GET: 1, REQUEST_TRIGGER_CLEAR: 3 });
    expect(r.disarmedAgain.byType).toMatchObject({ REQUEST_TRIGGER_GET: 1 });
    expect(r.disarmedAgain.byType.REQUEST_TRIGGER_CLEAR).toBeUndefined();
  }, 120_000);
});
