import { GroupNotFoundError, SiteServiceError } from '../../../core/errors';
import { nodeNames, startTestSite, type TestSite } from '../../support/simulator';

const NODES = nodeNames(6);
// Deliberately not in name order: the group's own order must survive.
const STARTING = [NODES[4]!, NODES[1]!, NODES[5]!, NODES[0]!];

describe('HsmInventory on the simulator', () => {
  let t: TestSite;
  const inventory = () => t.clients.inventory;

  beforeEach(async () => {
    t = await startTestSite({
      nodes: NODES.map((name, i) => ({ name, nid: 100 + i, rack: 'x3000', tags: i % 2 ? ['gpu'] : [], roles: i % 2 ? ['compute'] : [], labels: { slot: String(i) } })),
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

  it('lists the inventory nodes with their attributes', async () => {
    const nodes = await inventory().listNodes();
    expect(nodes.map((n) => n.name)).toEqual(NODES);
    expect(nodes[1]).toEqual({ name: NODES[1], nid: 101, rack: 'x3000', role: 'Compute', tags: ['gpu'], roles: ['compute'], labels: { slot: '1' }, alive: true, available: true });
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
      const err = await inventory().getGroupMembers('starting').catch((e: unknown) => e);
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
    const err = await inventory().removeGroupMembers('upgrading', [NODES[0]!, NODES[1]!]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteServiceError);
    expect(err).toMatchObject({ service: 'inventory', status: 404 });
    expect((err as Error).message).toMatch(new RegExp(`${NODES[0]!} from group 'upgrading' answered 404, yet they are still members`));
    await expect(inventory().getGroupMembers('upgrading')).resolves.toEqual([NODES[0]]);
    // The retry removes it.
    await inventory().removeGroupMembers('upgrading', [NODES[0]!]);
    await expect(inventory().getGroupMembers('upgrading')).resolves.toEqual([]);
  });
});
