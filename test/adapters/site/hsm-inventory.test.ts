import { GroupNotFoundError, SiteServiceError } from '../../../core/errors';
import { HsmInventory, ID_QUERY_CHARS, idQueries } from '../../../adapters/site/hsm-inventory';
import { nodeNames, startTestSite, type TestSite } from '../../support/simulator';
import { stubServer } from '../../support/stub-server';

const NODES = nodeNames(6);
// Deliberately not in name order: the group's own order must survive.
const STARTING = [NODES[4]!, NODES[1]!, NODES[5]!, NODES[0]!];

describe('HsmInventory on the simulator', () => {
  let t: TestSite;
  const inventory = () => t.clients.inventory;

  beforeEach(async () => {
    t = await startTestSite({
      nodes: NODES.map((name, i) => ({
        name,
        nid: 100 + i,
        rack: 'x3000',
        tags: i % 2 ? ['gpu'] : [],
        roles: i % 2 ? ['compute'] : [],
        labels: { slot: String(i) },
      })),
      groups: { starting: STARTING, upgrading: [] },
    });
  });
  afterEach(() => t.close());

  it('returns members in the group order', async () => {
    await expect(inventory().getGroupMembers('starting')).resolves.toEqual(STARTING);
  });

  it('appends new members in the order given and leaves present ones alone, idempotently', async () => {
    await inventory().addGroupMembers('starting', [NODES[2]!, NODES[1]!, NODES[3]!]);
    await inventory().addGroupMembers('starting', [NODES[2]!, NODES[3]!]);
    await expect(inventory().getGroupMembers('starting')).resolves.toEqual([...STARTING, NODES[2], NODES[3]]);
  });

  it('adds many members concurrently, each exactly once', async () => {
    // Concurrent requests may land in any order: only the set is guaranteed for what one call adds.
    const many = nodeNames(6).reverse();
    await inventory().addGroupMembers('upgrading', [...many, ...many]);
    const members = await inventory().getGroupMembers('upgrading');
    expect(members).toHaveLength(many.length);
    expect(new Set(members)).toEqual(new Set(many));
  });

  it('removes members, ignores absent ones and keeps the order of the rest', async () => {
    await inventory().removeGroupMembers('starting', [NODES[1]!, NODES[2]!]);
    await inventory().removeGroupMembers('starting', [NODES[1]!]);
    await expect(inventory().getGroupMembers('starting')).resolves.toEqual([NODES[4], NODES[5], NODES[0]]);
  });

  it.each([
    ['getGroupMembers', (i: TestSite['clients']['inventory']) => i.getGroupMembers('missing')],
    ['addGroupMembers', (i: TestSite['clients']['inventory']) => i.addGroupMembers('missing', [NODES[0]!])],
    ['removeGroupMembers', (i: TestSite['clients']['inventory']) => i.removeGroupMembers('missing', [NODES[0]!])],
  ])('%s throws GroupNotFoundError for a missing group', async (_method, act) => {
    const err = await act(inventory()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GroupNotFoundError);
    expect(err).toMatchObject({ label: 'missing', message: "failed to obtain Node Group named 'missing'" });
  });

  it('lists the group labels', async () => {
    await expect(inventory().listGroupLabels!()).resolves.toEqual(['starting', 'upgrading']);
  });

  it('lists the nodes from SMD State/Components and memberships: the site groups a node is in are tags too', async () => {
    const nodes = await inventory().listNodes();
    expect(nodes.map((n) => n.name)).toEqual(NODES);
    expect(nodes[1]).toEqual({
      name: NODES[1],
      nid: 101,
      rack: 'x3000',
      role: 'Compute',
      tags: ['starting', 'gpu'],
      roles: ['compute'],
      labels: { slot: '1' },
      alive: true,
      available: true,
    });
    expect(nodes[2]).toEqual({
      name: NODES[2],
      nid: 102,
      rack: 'x3000',
      role: 'Compute',
      tags: [],
      roles: [],
      labels: { slot: '2' },
      alive: true,
      available: true,
    });
  });

  it('reads the named nodes alone (getNodes): the same nodes listNodes gives, an unknown name absent', async () => {
    const listed = new Map((await inventory().listNodes()).map((n) => [n.name, n]));
    const read = await inventory().getNodes!([NODES[3]!, NODES[1]!, NODES[3]!, 'x9999c0s1b0n0']);
    expect([...read.keys()].sort()).toEqual([NODES[1], NODES[3]].sort());
    expect(read.get(NODES[1]!)).toEqual(listed.get(NODES[1]!));
    expect(read.get(NODES[3]!)).toEqual(listed.get(NODES[3]!));
    await expect(inventory().getNodes!([])).resolves.toEqual(new Map());
  });

  it('asks SMD by id, in chunks that keep each URL short, and reads every node of a large fleet so', async () => {
    await t.close();
    const many = Array.from({ length: 30 }, (_, cabinet) => nodeNames(40, `x${3000 + cabinet}`)).flat();
    t = await startTestSite({ nodes: many.map((name, i) => ({ name, nid: i + 1 })), groups: { compute: many } });
    const listed = await inventory().listNodes();
    const read = await inventory().getNodes!(many);
    expect(read.size).toBe(1_200);
    expect(many.every((name, i) => read.get(name)?.nid === i + 1 && read.get(name)!.tags.includes('compute'))).toBe(true);
    expect([...read.values()].sort((a, b) => a.nid - b.nid)).toEqual(listed);
  });

  it('turns injected API faults into SiteServiceError naming the request, and works again after them', async () => {
    await t.close();
    t = await startTestSite({
      nodes: NODES.map((name, nid) => ({ name, nid })),
      groups: { starting: STARTING },
      apiFaults: [{ service: 'inventory', method: 'GET', path: '/groups/starting', status: 503, count: 2, afterCalls: 1 }],
    });
    await expect(inventory().getGroupMembers('starting')).resolves.toEqual(STARTING);
    for (let i = 0; i < 2; i++) {
      const err = await inventory()
        .getGroupMembers('starting')
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SiteServiceError);
      expect(err).toMatchObject({ service: 'inventory', status: 503 });
      expect((err as Error).message).toMatch(/GET http:\/\/.*\/hsm\/v2\/groups\/starting answered 503: injected fault/);
    }
    await expect(inventory().getGroupMembers('starting')).resolves.toEqual(STARTING);
  });

  it('does not take a member DELETE answering 404 as done: a removal is done only when a read shows the member gone', async () => {
    await t.close();
    t = await startTestSite({
      nodes: NODES.map((name, nid) => ({ name, nid })),
      groups: { upgrading: [NODES[0]!, NODES[1]!] },
      apiFaults: [{ service: 'inventory', method: 'DELETE', path: `/members/${NODES[0]!}`, status: 404, count: 1 }],
    });
    const err = await inventory()
      .removeGroupMembers('upgrading', [NODES[0]!, NODES[1]!])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteServiceError);
    expect(err).toMatchObject({ service: 'inventory', status: 404 });
    expect((err as Error).message).toMatch(new RegExp(`${NODES[0]!} from group 'upgrading' answered 404, yet they are still members`));
    await expect(inventory().getGroupMembers('upgrading')).resolves.toEqual([NODES[0]]);
    // The retry removes it.
    await inventory().removeGroupMembers('upgrading', [NODES[0]!]);
    await expect(inventory().getGroupMembers('upgrading')).resolves.toEqual([]);
  });
});

describe('idQueries (HsmInventory.getNodes)', () => {
  it('splits ids into `id=` queries of at most ID_QUERY_CHARS characters, every id once, in order, encoded', () => {
    const ids = Array.from({ length: 1_000 }, (_, i) => `x${3000 + Math.floor(i / 64)}c0s${i % 64}b0n0`);
    const queries = idQueries(ids);
    expect(queries.length).toBeGreaterThan(1);
    for (const query of queries) expect(query.length).toBeLessThanOrEqual(ID_QUERY_CHARS);
    expect(queries.flatMap((q) => new URLSearchParams(q).getAll('id'))).toEqual(ids);
    expect(idQueries(['a b&c'])).toEqual(['id=a%20b%26c']);
    expect(idQueries([])).toEqual([]);
  });
});

/** Bodies as real SMD serves them (hms-smd api/swagger_v2.yaml; the docs-csm example component). */
describe('HsmInventory.listNodes against SMD bodies', () => {
  const components = {
    Components: [
      {
        ID: 'x3000c0s19b1n0',
        Type: 'Node',
        State: 'Ready',
        Flag: 'OK',
        Enabled: true,
        SoftwareStatus: '',
        Role: 'Compute',
        SubRole: 'Worker',
        NID: 1,
        NetType: 'Sling',
        Arch: 'X86',
        Class: 'River',
        ReservationDisabled: false,
        Locked: false,
      },
      {
        ID: 'x3000c0s19b2n0',
        Type: 'Node',
        State: 'Off',
        Flag: 'OK',
        Enabled: false,
        Role: 'Application',
        NID: 2,
        NetType: 'Sling',
        Arch: 'X86',
        Class: 'River',
      },
      { ID: 'x1000c1s7b1n0', Type: 'Node', State: 'On', Flag: 'Warning', Enabled: true, Role: 'Compute', NID: 1000, Arch: 'ARM', Class: 'Mountain' },
    ],
  };
  const memberships = [
    { id: 'x3000c0s19b1n0', groupLabels: ['compute', 'gpu', 'ucp_control_plane:enabled', 'deploy-role:controller'], partitionName: 'p1' },
    { id: 'x3000c0s19b2n0', groupLabels: [], partitionName: '' },
    { id: 'x1000c1s7b1n0', groupLabels: ['rack:row7'], partitionName: null },
  ];

  it('maps ID, NID, Role, SubRole, State, Enabled and the group conventions', async () => {
    const stub = await stubServer((path) =>
      path === '/hsm/v2/State/Components?type=Node'
        ? { status: 200, text: JSON.stringify(components) }
        : path === '/hsm/v2/memberships?type=Node'
          ? { status: 200, text: JSON.stringify(memberships) }
          : { status: 404, text: '{"title":"Not Found"}' },
    );
    try {
      const nodes = await new HsmInventory({ baseUrl: stub.url }).listNodes();
      expect(nodes).toEqual([
        {
          name: 'x3000c0s19b1n0',
          nid: 1,
          rack: 'x3000',
          role: 'Compute',
          tags: ['compute', 'gpu'],
          roles: ['controller'],
          labels: { subrole: 'Worker', partition: 'p1', ucp_control_plane: 'enabled' },
          alive: true,
          available: true,
        },
        { name: 'x3000c0s19b2n0', nid: 2, rack: 'x3000', role: 'Application', tags: [], roles: [], labels: {}, alive: false, available: false },
        { name: 'x1000c1s7b1n0', nid: 1000, rack: 'row7', role: 'Compute', tags: [], roles: [], labels: {}, alive: true, available: true },
      ]);
    } finally {
      await stub.close();
    }
  });
});
