import { SlurmInventory, type GroupMembership } from '../../../../adapters/site/commands/slurm-inventory';
import { memoryConnectorState } from '../../../support/connector-state';
import { SiteServiceError } from '../../../../core/errors';
import { nodeNames, nodesOf } from '../../../support/simulator';
import { startSsmTestSite, type SsmTestSite } from '../../../support/ssm-site';

const names = nodeNames(12);

describe('slurm inventory over SSM: partitions and node features', () => {
  let t: SsmTestSite;
  afterEach(() => t.close());

  const start = () =>
    startSsmTestSite({
      nodes: nodesOf(names, (_, i) => ({
        rack: i < 6 ? 'x3000' : 'x3001',
        role: i === 0 ? 'login' : 'compute',
        tags: i % 2 ? ['gpu'] : [],
        labels: { zone: 'a' },
      })),
      groups: { compute: names.slice(1), 'rollout-failed': [] },
    });

  it('reads groups from features and the partition, in natural name order', async () => {
    t = await start();
    const inventory = new SlurmInventory({ transport: t.transport });
    expect(await inventory.getGroupMembers('compute')).toEqual(names.slice(1));
    expect(await inventory.getGroupMembers('batch')).toEqual(names);
    expect(await inventory.getGroupMembers('gpu')).toEqual(names.filter((_, i) => i % 2));
    // Slurm has no empty feature: an empty or unknown label is an empty group.
    expect(await inventory.getGroupMembers('rollout-failed')).toEqual([]);
    expect(await inventory.getGroupMembers('rollout-upgrading')).toEqual([]);
  });

  it('edits membership as node features, keeping each node other features, one command per resulting feature set', async () => {
    t = await start();
    const inventory = new SlurmInventory({ transport: t.transport });
    await inventory.addGroupMembers('rollout-upgrading', names.slice(0, 4));
    await inventory.addGroupMembers('rollout-upgrading', names.slice(0, 2));
    expect(await inventory.getGroupMembers('rollout-upgrading')).toEqual(names.slice(0, 4));
    expect(new Set(t.site.simulator.inventory.getGroup('rollout-upgrading').members)).toEqual(new Set(names.slice(0, 4)));
    const updates = t.site.simulator.headNode.commandLog.filter((c) => c.includes('update'));
    // Node 0 (login, not in compute), odd nodes (gpu) and even ones have different feature sets: three commands.
    const features = (...list: string[]) => `'AvailableFeatures=${list.join(',')}' 'ActiveFeatures=${list.join(',')}'`;
    // The login node, the gpu nodes and the others end with different feature sets: three commands.
    expect(updates).toEqual([
      `'scontrol' 'update' 'NodeName=x3000c0s1b0n0' ${features('rack:x3000', 'role:login', 'zone:a', 'rollout-upgrading')}`,
      `'scontrol' 'update' 'NodeName=x3000c0s[2,4]b0n0' ${features('rack:x3000', 'role:compute', 'zone:a', 'gpu', 'compute', 'rollout-upgrading')}`,
      `'scontrol' 'update' 'NodeName=x3000c0s3b0n0' ${features('rack:x3000', 'role:compute', 'zone:a', 'compute', 'rollout-upgrading')}`,
    ]);
    await inventory.removeGroupMembers('rollout-upgrading', names);
    expect(await inventory.getGroupMembers('rollout-upgrading')).toEqual([]);
    expect(await inventory.getGroupMembers('compute')).toEqual(names.slice(1));
    await expect(inventory.addGroupMembers('batch', names.slice(0, 1))).rejects.toThrow(/partition/);
    await expect(inventory.addGroupMembers('rollout-upgrading', ['ghost1'])).rejects.toBeInstanceOf(SiteServiceError);
  });

  it('lists nodes with rack, role, nid, labels and tags from features', async () => {
    t = await start();
    const nodes = await new SlurmInventory({ transport: t.transport }).listNodes();
    expect(nodes).toHaveLength(12);
    expect(nodes[0]).toEqual({ name: names[0], nid: 1, rack: 'x3000', role: 'login', roles: ['login'], tags: [], labels: { zone: 'a' } });
    expect(nodes[7]).toEqual({ name: names[7], nid: 8, rack: 'x3001', role: 'compute', roles: ['compute'], tags: ['gpu', 'compute'], labels: { zone: 'a' } });
  });

  it("reads a node's deployment roles from its role features, all of them in order, or from the features the profile's roleKey names", async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names.slice(0, 2), (_, i) => (i === 0 ? { roles: ['controller', 'ceph-osd'] } : {})) });
    const nodes = await new SlurmInventory({ transport: t.transport }).listNodes();
    expect(nodes.map((n) => [n.role, n.roles])).toEqual([
      ['controller', ['controller', 'ceph-osd']],
      ['Compute', ['Compute']],
    ]);
    const byOtherKey = await new SlurmInventory({ transport: t.transport, roleKey: 'fuel' }).listNodes();
    expect(byOtherKey.map((n) => [n.role, n.roles, n.labels])).toEqual([
      ['compute', undefined, { role: 'ceph-osd' }],
      ['compute', undefined, { role: 'Compute' }],
    ]);
  });

  it('reads a listing past the 24,000 characters SSM keeps: partitions first, then features in chunks of nodes', async () => {
    // One feature set per node (`nid:<n>`), as the convention of docs/guides/upgrade-a-slurm-cluster.md gives: a line per node.
    const many = nodeNames(700);
    t = await startSsmTestSite({ nodes: nodesOf(many, (_, i) => ({ rack: 'x3000', labels: { nid: String(i + 1), zone: 'a' } })), groups: { compute: many } });
    const inventory = new SlurmInventory({ transport: t.transport });
    const nodes = await inventory.listNodes();
    expect(nodes).toHaveLength(700);
    expect(nodes[699]).toEqual({ name: many[699], nid: 700, rack: 'x3000', role: 'Compute', roles: ['Compute'], tags: ['compute'], labels: { zone: 'a' } });
    expect(t.site.simulator.headNode.commandLog).toEqual([
      "'sinfo' '--noheader' '--format=%R %f %N'",
      "'sinfo' '--noheader' '--format=%R %N'",
      "'sinfo' '--noheader' '--nodes=x3000c0s[1-350]b0n0' '--format=%R %f %N'",
      "'sinfo' '--noheader' '--nodes=x3000c0s[351-700]b0n0' '--format=%R %f %N'",
      // Longer names and nids in the second half: it did not fit either, and was halved again.
      "'sinfo' '--noheader' '--nodes=x3000c0s[351-525]b0n0' '--format=%R %f %N'",
      "'sinfo' '--noheader' '--nodes=x3000c0s[526-700]b0n0' '--format=%R %f %N'",
    ]);
    expect(await inventory.getGroupMembers('batch')).toEqual(many);
    expect(await inventory.getGroupMembers('compute')).toEqual(many);
  });

  it('reads the named nodes alone (getNodes) with sinfo --nodes=<hostlist>, as listed; a nid by name order from a hostlist listing when no nid: feature gives it', async () => {
    t = await start();
    const listed = await new SlurmInventory({ transport: t.transport }).listNodes();
    const log = t.site.simulator.headNode.commandLog;
    log.length = 0;
    const read = await new SlurmInventory({ transport: t.transport }).getNodes([names[7]!, names[1]!, 'ghost1', names[7]!]);
    expect(read).toEqual(
      new Map([
        [names[7]!, listed[7]],
        [names[1]!, listed[1]],
      ]),
    );
    expect(log).toEqual(["'sinfo' '--noheader' '--nodes=x3000c0s[2,8]b0n0,ghost1' '--format=%R %f %N'", "'sinfo' '--noheader' '--format=%N'"]);
  });

  it('getNodes: no hostlist listing when nid: features give the nids, none at all while its own listing is young enough to reuse', async () => {
    t = await startSsmTestSite({ nodes: nodesOf(names, (_, i) => ({ rack: 'x3000', labels: { nid: String(100 + i) } })) });
    const log = t.site.simulator.headNode.commandLog;
    const inventory = new SlurmInventory({ transport: t.transport });
    const read = await inventory.getNodes([names[3]!]);
    expect(read.get(names[3]!)).toMatchObject({ name: names[3], nid: 103, rack: 'x3000' });
    expect(log).toEqual(["'sinfo' '--noheader' '--nodes=x3000c0s4b0n0' '--format=%R %f %N'"]);
    await inventory.listNodes();
    log.length = 0;
    expect((await inventory.getNodes([names[5]!, names[6]!])).get(names[6]!)).toMatchObject({ nid: 106 });
    expect(log).toEqual([]);
  });

  it('getNodes lists again where the last listing fit in one sinfo (slurmctld loads every node either way), by hostlist where it took a command per chunk', async () => {
    let now = 0;
    const clock = { now: () => now };
    t = await start();
    const log = t.site.simulator.headNode.commandLog;
    const small = new SlurmInventory({ transport: t.transport, clock });
    await small.listNodes();
    now += 31_000;
    log.length = 0;
    expect((await small.getNodes([names[2]!])).get(names[2]!)).toMatchObject({ name: names[2], nid: 3 });
    expect(await small.getNodes([names[4]!])).toHaveProperty('size', 1);
    expect(log).toEqual(["'sinfo' '--noheader' '--format=%R %f %N'"]);
    await t.close();

    const many = nodeNames(700);
    t = await startSsmTestSite({ nodes: nodesOf(many, (_, i) => ({ rack: 'x3000', labels: { nid: String(i + 1), zone: 'a' } })), groups: { compute: many } });
    const large = new SlurmInventory({ transport: t.transport, clock });
    await large.listNodes();
    now += 31_000;
    t.site.simulator.headNode.commandLog.length = 0;
    expect((await large.getNodes([many[9]!, many[600]!])).get(many[600]!)).toMatchObject({ nid: 601 });
    expect(t.site.simulator.headNode.commandLog).toEqual(["'sinfo' '--noheader' '--nodes=x3000c0s[10,601]b0n0' '--format=%R %f %N'"]);
  });

  it('puts back the features of a group it edits when Slurm lost them (reconfigure, restart), from its record in the rollout table', async () => {
    t = await start();
    const memberships = memoryConnectorState().records<GroupMembership>('slurm-inventory');
    const inventory = new SlurmInventory({ transport: t.transport, memberships });
    await inventory.addGroupMembers('upgrading', [names[2]!, names[3]!]);
    // What `scontrol reconfigure` does to features set by scontrol (slurm.conf's come back), done by hand: the feature is gone.
    await new SlurmInventory({ transport: t.transport }).removeGroupMembers('upgrading', [names[2]!]);
    expect(await new SlurmInventory({ transport: t.transport }).getGroupMembers('upgrading')).toEqual([names[3]]);
    expect(await inventory.getGroupMembers('upgrading')).toEqual([names[2], names[3]]);
    expect(await new SlurmInventory({ transport: t.transport }).getGroupMembers('upgrading')).toEqual([names[2], names[3]]);
    await inventory.removeGroupMembers('upgrading', [names[2]!, names[3]!]);
    expect(await memberships.get('upgrading')).toEqual({ name: 'upgrading', members: [] });
    expect(await inventory.getGroupMembers('upgrading')).toEqual([]);
  });

  it('rejects a hostile label before any command runs', async () => {
    t = await start();
    const inventory = new SlurmInventory({ transport: t.transport });
    await expect(inventory.addGroupMembers('x;reboot', names)).rejects.toThrow(/not a valid group label/);
    expect(t.site.simulator.headNode.commandLog).toEqual([]);
  });
});
