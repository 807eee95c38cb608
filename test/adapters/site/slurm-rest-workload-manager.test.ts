import { SiteServiceError } from '../../../core/errors';
import { SlurmRestWorkloadManager } from '../../../adapters/site/slurm-rest-workload-manager';
import { nodeNames, startTestSite, type TestSite } from '../../support/simulator';

const [busy, idle, down, silent, long] = nodeNames(5);

describe('SlurmRestWorkloadManager on the simulator', () => {
  let t: TestSite;
  const wlm = () => t.clients.workloadManager;
  const node = async (name: string) => (await wlm().getNodes([name])).get(name)!;

  beforeEach(async () => {
    t = await startTestSite({
      nodes: [
        { name: busy!, nid: 1, wlm: { state: 'ALLOCATED', busySeconds: 60 } },
        { name: idle!, nid: 2 },
        { name: down!, nid: 3, wlm: { state: 'DOWN', reason: 'bad dimm' } },
        { name: silent!, nid: 4, wlm: { state: 'DOWN', responding: false } },
        { name: long!, nid: 5, wlm: { state: 'MIXED' } },
      ],
    });
  });
  afterEach(() => t.close());

  it('drains a busy node: DRAINING until its job ends, then DRAINED', async () => {
    await wlm().drain(busy!, 'rolling-upgrade');
    expect(await node(busy!)).toEqual({ name: busy, base: 'ALLOCATED', flags: ['DRAIN'], reason: 'rolling-upgrade', bootTime: undefined });
    expect(t.state().nodes[busy!]!.wlmState).toBe('DRAINING');

    t.advance(59);
    expect((await node(busy!)).base).toBe('ALLOCATED');
    t.advance(1);
    expect(await node(busy!)).toMatchObject({ base: 'IDLE', flags: ['DRAIN'], reason: 'rolling-upgrade' });
    expect(t.state().nodes[busy!]).toMatchObject({ wlmState: 'DRAINED', drainCount: 1, killedJobs: 0 });
  });

  it('reads when the running jobs end from GET /jobs: a job with no limit never ends, an idle node is absent', async () => {
    const ends = await (wlm() as SlurmRestWorkloadManager).getJobEnds([busy!, idle!, long!]);
    expect([...ends.keys()].sort()).toEqual([busy!, long!].sort());
    expect(ends.get(long!)).toBe(Infinity);
    t.advance(30);
    expect((await (wlm() as SlurmRestWorkloadManager).getJobEnds([busy!])).get(busy!)).toBe(ends.get(busy!));
    t.advance(30);
    expect((await (wlm() as SlurmRestWorkloadManager).getJobEnds([busy!])).size).toBe(0);
  });

  it('drains an idle node to DRAINED at once', async () => {
    await wlm().drain(idle!, 'maintenance');
    expect(await node(idle!)).toMatchObject({ base: 'IDLE', flags: ['DRAIN'] });
    expect(t.state().nodes[idle!]!.wlmState).toBe('DRAINED');
  });

  it('keeps a job without an end running: the node never drains', async () => {
    await wlm().drain(long!, 'rolling-upgrade');
    t.advance(365 * 24 * 3600);
    expect(t.state().nodes[long!]!.wlmState).toBe('DRAINING');
    expect((await node(long!)).base).toBe('MIXED');
  });

  it('ends a job without any request: the node turns IDLE on its own', async () => {
    t.advance(60);
    expect((await node(busy!)).base).toBe('IDLE');
  });

  it('resumes: clears DRAIN, FAIL and the reason; a DOWN node that responds comes back IDLE', async () => {
    await wlm().fail(idle!, 'upgrading-boot-session-failed');
    await wlm().resume(idle!);
    expect(await node(idle!)).toEqual({ name: idle, base: 'IDLE', flags: [], reason: undefined, bootTime: undefined });

    await wlm().resume(down!);
    expect(await node(down!)).toMatchObject({ base: 'IDLE', flags: [], reason: undefined });
    expect(t.state().nodes[down!]!.resumeCount).toBe(1);
  });

  it('resumes a not-responding DOWN node to IDLE*, and SlurmdTimeout sets it DOWN again (as Slurm: node_mgr.c update_node, ping_nodes.c)', async () => {
    await wlm().resume(silent!);
    expect(await node(silent!)).toMatchObject({ base: 'IDLE', flags: ['NOT_RESPONDING'] });
    expect(t.state().nodes[silent!]!.wlmState).toBe('IDLE*');
    t.advance(600);
    expect(await node(silent!)).toMatchObject({ base: 'DOWN', flags: ['NOT_RESPONDING'], reason: 'Not responding' });
  });

  it('fails a node: FAIL (without DRAIN, as Slurm) with the reason; FAILING while its job runs', async () => {
    await wlm().fail(idle!, 'upgrading-time-out-wlm-waiting');
    await wlm().fail(busy!, 'upgrading-time-out-wlm-waiting');
    expect(await node(idle!)).toMatchObject({ base: 'IDLE', flags: ['FAIL'], reason: 'upgrading-time-out-wlm-waiting' });
    expect(t.state().nodes[idle!]).toMatchObject({ wlmState: 'FAIL', failCount: 1 });
    expect(t.state().nodes[busy!]!.wlmState).toBe('FAILING');
  });

  it('leaves unknown names out of getNodes, whether it lists all nodes or asks one by one', async () => {
    const few = [idle!, 'ghost'];
    const many = [...nodeNames(5), ...Array.from({ length: 30 }, (_, i) => `ghost${i}`)];
    expect([...(await wlm().getNodes(few)).keys()]).toEqual([idle]);
    expect([...(await wlm().getNodes(many)).keys()].sort()).toEqual(nodeNames(5).sort());
  });

  it('lists every node in one request when many are asked for, one request each when few are', async () => {
    await t.close();
    t = await startTestSite({
      nodes: nodeNames(40).map((name, nid) => ({ name, nid })),
      // Only the listing fails: proves which path getNodes took.
      apiFaults: [{ service: 'workload-manager', method: 'GET', path: '/nodes', status: 503, count: 100 }],
    });
    await expect(wlm().getNodes(nodeNames(3))).resolves.toHaveProperty('size', 3);
    await expect(wlm().getNodes(nodeNames(40))).rejects.toThrow(SiteServiceError);
  });

  it('starts each node in the state the site file gives', async () => {
    const given = [
      [{ state: 'IDLE', busySeconds: 10 }, 'ALLOCATED', ['ALLOCATED']],
      // COMPLETING and FAIL are flags: the base stays IDLE, and FAIL comes without DRAIN (as Slurm).
      [{ state: 'COMPLETING', busySeconds: 10 }, 'COMPLETING', ['IDLE', 'COMPLETING']],
      [{ state: 'DRAINING', busySeconds: 10, reason: 'r' }, 'DRAINING', ['ALLOCATED', 'DRAIN']],
      [{ state: 'DRAINED', reason: 'r' }, 'DRAINED', ['IDLE', 'DRAIN']],
      [{ state: 'FAIL', reason: 'r' }, 'FAIL', ['IDLE', 'FAIL']],
      [{ state: 'IDLE', responding: false }, 'IDLE*', ['IDLE', 'NOT_RESPONDING']],
    ] as const;
    await t.close();
    t = await startTestSite({ nodes: given.map(([wlm], i) => ({ name: `n${i}`, nid: i, wlm })) });
    const nodes = await wlm().getNodes(given.map((_, i) => `n${i}`));
    given.forEach(([, display, state], i) => {
      expect(t.state().nodes[`n${i}`]!.wlmState).toBe(display);
      const { base, flags } = nodes.get(`n${i}`)!;
      expect([base, ...flags]).toEqual(state);
    });
  });

  it('speaks another configured slurmrestd version', async () => {
    const v42 = new SlurmRestWorkloadManager({ baseUrl: t.site.url, apiVersion: 'v0.0.42' });
    await v42.drain(idle!, 'x');
    expect((await v42.getNodes([idle!])).get(idle!)!.flags).toEqual(['DRAIN']);
  });

  it('updates many nodes in one batch POST /nodes from v0.0.42, per node on v0.0.41', async () => {
    await t.close();
    const names = ['n1', 'n2', 'n3'];
    // Every per-node update fails: only the batch endpoint can succeed.
    t = await startTestSite({
      nodes: names.map((name, i) => ({ name, nid: i + 1 })),
      apiFaults: [{ service: 'workload-manager', method: 'POST', path: '/node/', status: 500, count: 100 }],
    });
    const v42 = new SlurmRestWorkloadManager({ baseUrl: t.site.url, apiVersion: 'v0.0.42' });
    await v42.drainNodes(names, 'rolling-upgrade');
    expect([...(await v42.getNodes(names)).values()].map((n) => [n.name, n.flags, n.reason])).toEqual(names.map((n) => [n, ['DRAIN'], 'rolling-upgrade']));
    await v42.failNodes(names.slice(0, 1), 'upgrading-boot-session-failed');
    await v42.resumeNodes(names.slice(1));
    expect(t.state().nodes.n1!.wlmState).toBe('FAIL');
    expect(t.state().nodes.n2!.wlmState).toBe('IDLE');
    // slurmrestd v0.0.40+ answers an unknown node 200 with errors[] (src/slurmrestd/plugins/openapi/slurmctld/nodes.c).
    await expect(v42.drainNodes(['n1', 'ghost'], 'x')).rejects.toMatchObject({
      service: 'workload-manager',
      status: 200,
      message: expect.stringContaining('Invalid node name specified'),
    });
    const v41 = new SlurmRestWorkloadManager({ baseUrl: t.site.url, apiVersion: 'v0.0.41' });
    await expect(v41.resumeNodes(['n2'])).rejects.toMatchObject({ status: 500 });
  });

  it('turns an unknown node on update into a SiteServiceError with the status and the error Slurm reported (200 with errors[], as slurmrestd v0.0.40+ answers)', async () => {
    const err = await wlm()
      .drain('ghost', 'x')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteServiceError);
    expect(err).toMatchObject({ service: 'workload-manager', status: 200 });
    expect((err as Error).message).toContain('Invalid node name specified');
  });
});
