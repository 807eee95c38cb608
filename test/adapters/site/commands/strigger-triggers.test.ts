import { createSiteFromProfile } from '../../../../adapters/site';
import { ScontrolWorkloadManager } from '../../../../adapters/site/commands/scontrol-workload-manager';
import { parseTriggerRow, StriggerTriggers } from '../../../../adapters/site/commands/strigger-triggers';
import { NameMappedWorkloadManager } from '../../../../adapters/site/node-name-map';
import { InvalidInputError, SiteServiceError } from '../../../../core/errors';
import { parseSiteProfile } from '../../../../core/site/site-profile';
import type { CommandResult, CommandTransport } from '../../../../ports/command-transport';
import type { NodeNameMap, SiteTriggers, WorkloadManager } from '../../../../ports/site';
import { TRIGGER_PASS_MS } from '../../../../simulator/models/trigger-manager';
import { nodesOf } from '../../../support/simulator';
import { startSsmTestSite, type SsmTestSite } from '../../../support/ssm-site';

/**
 * A session's Slurm triggers through strigger (issue 29), against the simulated head node over SSM: what arm
 * sets, keeps and replaces, what disarm clears, the strigger commands each takes (one slurmctld RPC each), and
 * a firing after a reboot. The same against a real Slurm per release: test/real-slurm/strigger-triggers.test.ts.
 */

const NAMES = ['c01', 'c02', 'c03', 'c04'];
const RELAY = '/opt/rollout/bin/rollout relay deliver --spool /var/spool/rollout-relay --endpoint http://10.0.0.5:8084';
const S = 'a1b2c3d4-0000-4000-8000-000000000001';
const OTHER = 'a1b2c3d4-0000-4000-8000-000000000002';

let t: SsmTestSite;
/** Every script the triggers ran, in order. */
let scripts: string[];
/** What runs a script before it goes to the head node (a test's race), if anything. */
let before: ((script: string) => Promise<CommandResult | undefined>) | undefined;

beforeEach(async () => {
  t = await startSsmTestSite({
    nodes: nodesOf(NAMES),
    timing: { bootSeconds: 5, returnSeconds: 1 },
    slurm: { version: '24.11.5', accountingStorage: 'none' },
  });
  scripts = [];
  before = undefined;
});
afterEach(() => t.close());

/** The SSM transport, each script counted (and answered by `before` when it answers). */
function counted(): CommandTransport {
  const inner = t.transport;
  return {
    run: async (script, options) => {
      scripts.push(script);
      return (await before?.(script)) ?? inner.run(script, options);
    },
    start: (script, options) => inner.start(script, options),
    findStarted: (tag, since) => inner.findStarted(tag, since),
    poll: (id) => inner.poll(id),
  };
}

const triggers = (relay = RELAY) => new StriggerTriggers({ transport: counted(), relay, backstopSeconds: 120 });

/** `strigger --get --noheader` on the head node, as rows. */
async function listed() {
  const result = await t.transport.run("'strigger' '--get' '--noheader'");
  expect(result.exitCode).toBe(0);
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => parseTriggerRow(line)!);
}

/** The strigger verbs of the scripts run since `from`: `get`, `set`, `clear`. */
const verbs = (from = 0) => scripts.slice(from).map((s) => /'--(get|set|clear)'/.exec(s)?.[1] ?? s);

describe('parseTriggerRow', () => {
  it("reads strigger.c's row: a blank FLAGS column, and a PROGRAM with spaces kept whole", () => {
    expect(
      parseTriggerRow('      4 node       c[01-03] up                                       0 root     PERM  /opt/r relay --event up --session s1'),
    ).toEqual({
      id: 4,
      resType: 'node',
      resId: 'c[01-03]',
      type: 'up',
      flags: 'PERM',
      program: '/opt/r relay --event up --session s1',
    });
    expect(parseTriggerRow('     12 node             * drained                                  0 slurm          /opt/r a b')).toMatchObject({
      id: 12,
      resId: '*',
      flags: '',
      program: '/opt/r a b',
    });
    expect(parseTriggerRow('TRIG_ID RES_TYPE   RES_ID TYPE OFFSET USER FLAGS PROGRAM')).toBeUndefined();
  });
});

describe('StriggerTriggers on the simulated head node', () => {
  it('arm sets one permanent trigger per kind on the nodes as one hostlist, the relay with the event and session as its program: 5 commands', async () => {
    const ids = await triggers().arm(S, ['c01', 'c02', 'c03'], ['up', 'down', 'drained']);
    expect(ids).toHaveLength(3);
    expect(verbs()).toEqual(['get', 'set', 'set', 'set', 'get']);
    expect(await listed()).toEqual(
      (['up', 'down', 'drained'] as const).map((kind, i) => ({
        id: ids[i],
        resType: 'node',
        resId: 'c[01-03]',
        type: kind,
        flags: 'PERM',
        program: `${RELAY} --event ${kind} --session ${S}`,
      })),
    );
    // The relay's words travel as one shell word: --program is one argument.
    expect(scripts[1]).toBe(`'strigger' '--set' '--node=c[01-03]' '--up' '--flags=PERM' '--program=${RELAY} --event up --session ${S}'`);
  });

  it('arm again changes nothing: the same ids, one read', async () => {
    const first = await triggers().arm(S, NAMES, ['up', 'down', 'drained']);
    const from = scripts.length;
    // The nodes in another order, a kind named twice: the same hostlist and kinds.
    expect(await triggers().arm(S, ['c04', 'c02', 'c03', 'c01'], ['up', 'down', 'drained', 'up'])).toEqual(first);
    expect(verbs(from)).toEqual(['get']);
    expect((await listed()).map((row) => row.id)).toEqual(first);
  });

  it("arm on other nodes replaces the session's triggers, and leaves another session's and the kinds not asked", async () => {
    const other = await triggers().arm(OTHER, ['c01'], ['up']);
    const first = await triggers().arm(S, ['c01', 'c02'], ['up', 'drained']);
    const from = scripts.length;
    const second = await triggers().arm(S, ['c03', 'c04'], ['up']);
    expect(verbs(from)).toEqual(['get', 'set', 'clear', 'get']);
    expect(second[0]).not.toBe(first[0]);
    expect((await listed()).map((row) => [row.id, row.resId, row.type, row.program.split(' ').at(-1)])).toEqual([
      [other[0], 'c01', 'up', OTHER],
      // drained was not asked this time: kept.
      [first[1], 'c[01-02]', 'drained', S],
      [second[0], 'c[03-04]', 'up', S],
    ]);
  });

  it("disarm clears every trigger of the session, one read and one clear each, and leaves another session's", async () => {
    await triggers().arm(S, NAMES, ['up', 'down', 'drained']);
    const other = await triggers().arm(OTHER, NAMES, ['up', 'down', 'drained']);
    const from = scripts.length;
    expect(await triggers().disarm(S)).toBe(3);
    expect(verbs(from)).toEqual(['get', 'clear', 'clear', 'clear']);
    expect((await listed()).map((row) => row.id)).toEqual(other);
    expect((await listed()).every((row) => row.program.endsWith(`--session ${OTHER}`))).toBe(true);
    // Again: nothing left of it, one read.
    const again = scripts.length;
    expect(await triggers().disarm(S)).toBe(0);
    expect(verbs(again)).toEqual(['get']);
  });

  it('a trigger set between the read and the set (a duplicate) counts as set; one gone before its clear (ESRCH) as cleared', async () => {
    // Another arm of the same session sets them just after this one read.
    let raced = false;
    before = async (script) => {
      if (raced || !script.includes("'--set'")) return undefined;
      raced = true;
      await new StriggerTriggers({ transport: t.transport, relay: RELAY }).arm(S, NAMES, ['up', 'down']);
      return undefined;
    };
    const ids = await triggers().arm(S, NAMES, ['up', 'down']);
    expect((await listed()).map((row) => row.id)).toEqual(ids);

    // Another disarm clears the up trigger just before this one's clear of it.
    before = async (script) => (script.includes(`'--id=${ids[0]}'`) ? (await t.transport.run(script), undefined) : undefined);
    expect(await triggers().disarm(S)).toBe(1);
    expect(await listed()).toEqual([]);
  });

  it('a firing after a node reboot runs the relay with --event up, the session and the hostlist', async () => {
    await triggers().arm(S, NAMES, ['up', 'down', 'drained']);
    const model = t.site.simulator.workloadManager.triggers;
    const reboot = await t.transport.run("'scontrol' 'reboot' 'c02'");
    expect(reboot.exitCode).toBe(0);
    // The boot (5 s), its registration, and the next trigger pass (16 s at most), a command syncing each second.
    for (let s = 0; s < 5 + TRIGGER_PASS_MS / 1000 + 2 && !model.firings.some((f) => f.event === 'up'); s++) {
      t.advance(1);
      await listed();
    }
    const up = model.firings.filter((f) => f.event === 'up');
    expect(up.map((f) => [f.program, f.hostlist, f.outcome])).toEqual([[`${RELAY} --event up --session ${S}`, 'c02', 'ran']]);
    // Permanent: still listed, the same id.
    expect((await listed()).map((row) => row.id)).toContain(up[0]!.triggerId);
  });

  it('refuses a session id a trigger cannot carry, and no nodes, before any command runs', async () => {
    for (const bad of ['two words', "s';reboot", '', 'a/b']) {
      await expect(triggers().arm(bad, NAMES, ['up'])).rejects.toThrow(InvalidInputError);
      await expect(triggers().arm(bad, NAMES, [])).rejects.toThrow(/session: .* is not a session id/);
      await expect(triggers().disarm(bad)).rejects.toThrow(/session: .* is not a session id/);
    }
    await expect(triggers().arm(S, [], ['up'])).rejects.toThrow(/nodes must name a node/);
    await expect(triggers().arm(S, ['c01;reboot'], ['up'])).rejects.toThrow(InvalidInputError);
    // No kind asked: nothing to set, nothing run.
    await expect(triggers().arm(S, NAMES, [])).resolves.toEqual([]);
    expect(scripts).toEqual([]);
  });

  it('a failing strigger is a SiteServiceError naming the command and its words', async () => {
    before = async (script) =>
      script.includes("'--set'") ? { exitCode: 1, stdout: '', stderr: 'slurm_set_trigger: Access/permission denied\n', stdoutTruncated: false } : undefined;
    const err = await triggers()
      .arm(S, NAMES, ['up'])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteServiceError);
    expect((err as Error).message).toContain("'strigger' '--set' '--node=c[01-04]' '--up'");
    expect((err as Error).message).toContain('exited 1: slurm_set_trigger: Access/permission denied');
  });
});

describe('the scontrol connector with siteEvents', () => {
  const profile = (siteEvents?: object) =>
    parseSiteProfile({
      transport: { type: 'local' },
      commandPaths: { strigger: '/opt/slurm/bin/strigger' },
      workloadManager: { type: 'scontrol', ...(siteEvents ? { siteEvents } : {}) },
      bootService: { type: 'bos', url: 'http://127.0.0.1:1' },
      inventory: { type: 'file', path: 'inventory.yaml' },
      allowInsecureHttp: true,
    });

  it("has triggers with the profile's relay and backstop, strigger at the profile's path; none without siteEvents", async () => {
    const { site } = await createSiteFromProfile(profile({ relay: RELAY, backstopSeconds: 300 }));
    expect(site.workloadManager).toBeInstanceOf(ScontrolWorkloadManager);
    expect(site.workloadManager.triggers).toMatchObject({ relay: RELAY, backstopSeconds: 300 });
    // strigger at the profile's path, run on this host (local transport), where it is not: the error names the command.
    await expect(site.workloadManager.triggers!.disarm(S)).rejects.toThrow(/^.*'\/opt\/slurm\/bin\/strigger' '--get' '--noheader' exited 127/);
    expect((await createSiteFromProfile(profile())).site.workloadManager.triggers).toBeUndefined();
  });

  it("a name-mapped workload manager arms the inner one's triggers on Slurm's names", async () => {
    const armed: unknown[] = [];
    const inner: SiteTriggers = { relay: RELAY, arm: async (...args) => (armed.push(args), [1]), disarm: async () => 2 };
    const names: NodeNameMap = {
      toWorkloadManager: async (n) => new Map(n.map((name) => [name, `nid00000${name.slice(-1)}`])),
      toInventory: async () => new Map(),
    };
    const mapped = new NameMappedWorkloadManager({ triggers: inner } as unknown as WorkloadManager, names);
    expect(mapped.triggers).toMatchObject({ relay: RELAY });
    expect(mapped.triggers!.backstopSeconds).toBeUndefined();
    await expect(mapped.triggers!.arm(S, ['x1', 'x2'], ['up'])).resolves.toEqual([1]);
    expect(armed).toEqual([[S, ['nid000001', 'nid000002'], ['up']]]);
    await expect(mapped.triggers!.disarm(S)).resolves.toBe(2);
    expect(new NameMappedWorkloadManager({} as WorkloadManager, names).triggers).toBeUndefined();
  });
});
