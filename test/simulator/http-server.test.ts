import path from 'node:path';
import { readFileSync } from 'node:fs';
import { siteStateContract } from '../../simulator/site-state-file';
import { startTestSite, type TestSite } from '../support/simulator';

const NODES = ['x3000c0s1b0n0', 'x3000c0s2b0n0', 'x3000c0s3b0n0'];

describe('site simulator HTTP API', () => {
  let t: TestSite;
  const call = async (method: string, path: string, body?: unknown, raw?: string) => {
    const res = await fetch(t.site.url + path, {
      method,
      headers: { 'content-type': 'application/json' },
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeEach(async () => {
    t = await startTestSite({
      nodes: NODES.map((name, i) => ({ name, nid: i + 1, wlm: i === 0 ? { state: 'ALLOCATED', busySeconds: 100 } : undefined })),
      groups: { compute: NODES },
      bootTemplates: ['cos-2.4'],
      timing: { bootSeconds: 10, returnSeconds: 5 },
    });
  });
  afterEach(() => t.close());

  describe('slurmrestd', () => {
    // The default site runs Slurm 24.11, whose slurmrestd ships v0.0.40-42 (slurm-version.ts).
    it.each(['v0.0.40', 'v0.0.41', 'v0.0.42'])('serves nodes under %s', async (version) => {
      const { status, body } = await call('GET', `/slurm/${version}/nodes`);
      expect(status).toBe(200);
      expect((body.nodes as { name: string }[]).map((n) => n.name)).toEqual(NODES);
      expect(body.errors).toEqual([]);
    });

    it.each(['v0.0.39', 'v0.0.43'])('does not serve %s, which Slurm 24.11 does not ship', async (version) => {
      expect((await call('GET', `/slurm/${version}/nodes`)).status).toBe(404);
    });

    it('describes a node as slurmrestd v0.0.41 does', async () => {
      const { body } = await call('GET', `/slurm/v0.0.41/node/${NODES[0]}`);
      expect(body.nodes).toEqual([
        {
          name: NODES[0],
          state: ['ALLOCATED'],
          reason: '',
          boot_time: { set: false, infinite: false, number: 0 },
          features: ['role:Compute', 'compute'],
          active_features: ['role:Compute', 'compute'],
        },
      ]);
    });

    it('answers an unknown node 200 with errors[] and no nodes, word for word as Slurm 24.11.5 does (captured)', async () => {
      const { status, body } = await call('GET', '/slurm/v0.0.41/node/ghost01');
      const real = JSON.parse(readFileSync(path.join(__dirname, '..', 'fixtures', 'slurm', 'node-unknown-24.11.5-v0.0.42.json'), 'utf8')) as {
        _status: number;
        errors: unknown[];
      };
      expect(status).toBe(real._status);
      expect(body.errors).toEqual(real.errors);
      expect(body).not.toHaveProperty('nodes');
    });

    it.each([
      ['a DRAIN without a reason', { state: ['DRAIN'] }],
      ['a FAIL with a blank reason', { state: ['FAIL'], reason: ' ' }],
      ['an unsupported state', { state: ['REBOOT'] }],
      ['two states at once', { state: ['DRAIN', 'RESUME'], reason: 'x' }],
      ['a state that is not a list', { state: 'DRAIN', reason: 'x' }],
    ])('refuses %s with 400', async (_case, body) => {
      const res = await call('POST', `/slurm/v0.0.41/node/${NODES[1]}`, body);
      expect(res.status).toBe(400);
      expect(t.state().nodes[NODES[1]!]).toMatchObject({ drainCount: 0, failCount: 0, wlmState: 'IDLE' });
    });
  });

  describe('requests', () => {
    it('answers 400 to a body that is not JSON, in the service error shape', async () => {
      const res = await call('POST', '/bos/v2/sessions', undefined, '{"name": ');
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/not valid JSON/);
    });

    it.each<[string, string, string | Buffer, RegExp]>([
      ['a duplicate key', '/bos/v2/sessions', '{"template_name": "cos-2.4", "template_name": "cos-9", "operation": "reboot"}', /template_name: duplicate key/],
      ['a whole number in exponent form', '/hsm/v2/groups', '{"label": "g", "members": {"ids": []}, "x": 1e3}', /x: "1e3" is not a decimal integer/],
      ['bytes that are not UTF-8', '/hsm/v2/groups', Buffer.from([0x7b, 0xff, 0x7d]), /not UTF-8 text/],
      ['a comment', '/hsm/v2/groups', '{"label": "g" /* c */}', /not valid JSON/],
    ])('answers 400 to a body with %s, and changes nothing', async (_case, path, raw, message) => {
      const before = siteStateContract(t.state());
      const res = await fetch(t.site.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toMatch(message);
      expect(siteStateContract(t.state())).toEqual(before);
    });

    it('answers 400 to a POST without a body', async () => {
      expect((await call('POST', '/hsm/v2/groups')).status).toBe(400);
    });

    it('answers 404 to unknown paths and 405 to a wrong method', async () => {
      expect((await call('GET', '/nothing/here')).status).toBe(404);
      expect((await call('GET', '/hsm/v2/nothing')).status).toBe(404);
      expect((await call('DELETE', '/bos/v2/sessions')).status).toBe(405);
    });

    it('decodes path segments', async () => {
      await call('POST', '/hsm/v2/groups', { label: 'odd label/x' });
      const res = await call('GET', `/hsm/v2/groups/${encodeURIComponent('odd label/x')}`);
      expect(res.body).toMatchObject({ label: 'odd label/x', members: { ids: [] } });
    });
  });

  describe('BOS', () => {
    const session = { name: 's1', operation: 'reboot', template_name: 'cos-2.4', limit: 'compute' };

    it('creates a session (201) and refuses the same name again (409)', async () => {
      const created = await call('POST', '/bos/v2/sessions', session);
      expect(created.status).toBe(201);
      // As BOS stores it: pending, no components yet, nullable fields null.
      expect(created.body).toMatchObject({
        name: 's1',
        template_name: 'cos-2.4',
        limit: 'compute',
        components: '',
        tenant: null,
        status: { status: 'pending', end_time: null, error: null },
      });
      // V2Session.components: the nodes as one comma-separated string.
      expect((await call('GET', '/bos/v2/sessions/s1')).body).toMatchObject({ components: NODES.join(','), status: { status: 'running' } });
      expect((await call('POST', '/bos/v2/sessions', session)).status).toBe(409);
      expect(t.state().nodes[NODES[0]!]!.bootCount).toBe(1);
    });

    it('reports each node under /v2/components and the session under /v2/sessions/{id}/status', async () => {
      await call('POST', '/bos/v2/sessions', session);
      const components = await call('GET', '/bos/v2/components?session=s1');
      expect(components.status).toBe(200);
      expect(components.body).toEqual(
        NODES.map((id) =>
          expect.objectContaining({
            id,
            session: 's1',
            enabled: true,
            error: '',
            status: { phase: 'powering_on', status: 'power_on_called', status_override: '' },
          }),
        ),
      );
      expect((await call('GET', `/bos/v2/components?ids=${NODES[1]}`)).body).toHaveLength(1);
      expect((await call('GET', '/bos/v2/components?session=other')).body).toEqual([]);
      expect((await call('GET', `/bos/v2/components/${NODES[0]}`)).body).toMatchObject({ id: NODES[0], enabled: true });
      expect((await call('GET', '/bos/v2/sessions/s1/status')).body).toMatchObject({ status: 'running', managed_components_count: 3 });
      expect((await call('GET', '/bos/v2/sessions/nope/status')).status).toBe(404);
    });

    it('names a session itself when the request gives no name, and refuses names BOS would refuse', async () => {
      const { name: _name, ...unnamed } = session;
      const created = await call('POST', '/bos/v2/sessions', unnamed);
      expect(created.status).toBe(201);
      expect(created.body.name).toMatch(/^[0-9a-f-]{36}$/);
      expect((await call('POST', '/bos/v2/sessions', { ...session, name: 'Upper_Case' })).status).toBe(400);
      expect((await call('POST', '/bos/v2/sessions', { ...session, name: 'x'.repeat(46) })).status).toBe(400);
    });

    it.each([
      ['an unknown template', { template_name: 'cos-9' }, /template 'cos-9'/],
      ['an unknown limit group', { limit: 'no-such-group' }, /neither a group nor a node/],
      ['a limit naming unknown nodes', { limit: `${NODES[0]},ghost` }, /ghost/],
      ['an operation other than reboot', { operation: 'shutdown' }, /reboot sessions only/],
      ['an unknown operation', { operation: 'explode' }, /operation/],
    ])('refuses %s with 400 and boots nothing', async (_case, change, detail) => {
      const res = await call('POST', '/bos/v2/sessions', { ...session, ...change });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(detail);
      expect(Object.values(t.state().nodes).map((n) => n.bootCount)).toEqual([0, 0, 0]);
      expect((await call('GET', '/bos/v2/sessions/s1')).status).toBe(404);
    });

    it('serves templates and answers 404 for unknown ones', async () => {
      expect((await call('GET', '/bos/v2/sessiontemplates/cos-2.4')).status).toBe(200);
      expect((await call('GET', '/bos/v2/sessiontemplates/cos-9')).status).toBe(404);
    });
  });

  describe('HSM', () => {
    it('creates, edits and deletes groups with HSM status codes', async () => {
      expect((await call('POST', '/hsm/v2/groups', { label: 'new', members: { ids: [NODES[2], NODES[0]] } })).status).toBe(201);
      expect((await call('POST', '/hsm/v2/groups', { label: 'new' })).status).toBe(409);
      expect((await call('POST', '/hsm/v2/groups/new/members', { id: NODES[0] })).status).toBe(409);
      expect((await call('POST', '/hsm/v2/groups/new/members', { id: NODES[1] })).status).toBe(201);
      expect((await call('POST', '/hsm/v2/groups/new/members', { id: 'ghost' })).status).toBe(400);
      expect((await call('GET', '/hsm/v2/groups/new')).body.members).toEqual({ ids: [NODES[2], NODES[0], NODES[1]] });
      expect((await call('DELETE', `/hsm/v2/groups/new/members/${NODES[0]}`)).status).toBe(200);
      expect((await call('DELETE', `/hsm/v2/groups/new/members/${NODES[0]}`)).status).toBe(404);
      expect((await call('DELETE', '/hsm/v2/groups/new')).status).toBe(200);
      const missing = await call('GET', '/hsm/v2/groups/new');
      expect(missing.status).toBe(404);
      expect(missing.body.detail).toMatch(/new/);
    });

    it('lists groups, and the nodes as SMD State/Components and memberships', async () => {
      const groups = await call('GET', '/hsm/v2/groups');
      expect(groups.body).toEqual([{ label: 'compute', description: '', tags: [], members: { ids: NODES } }]);
      const components = await call('GET', '/hsm/v2/State/Components?type=Node');
      expect((components.body.Components as { ID: string; Role: string; Type: string }[]).map((c) => [c.ID, c.Role, c.Type])).toEqual(
        NODES.map((n) => [n, 'Compute', 'Node']),
      );
      expect((await call('GET', '/hsm/v2/State/Components?type=NodeBMC')).body).toEqual({ Components: [] });
      expect((await call('GET', `/hsm/v2/State/Components?id=${NODES[1]}`)).body.Components).toHaveLength(1);
      const memberships = (await call('GET', '/hsm/v2/memberships?type=Node')) as unknown as { body: { id: string; groupLabels: string[] }[] };
      expect(memberships.body[0]).toEqual({ id: NODES[0], groupLabels: ['compute'], partitionName: '' });
    });
  });

  describe('provisioner', () => {
    it.each([
      ['an unknown node', { name: 'a', action: 'prepare', nodes: ['ghost'] }],
      ['an unknown action', { name: 'a', action: 'destroy', nodes: [NODES[0]] }],
      ['no node list', { name: 'a', action: 'deploy' }],
    ])('refuses %s with 400', async (_case, body) => {
      expect((await call('POST', '/provisioner/v1/actions', body)).status).toBe(400);
      expect((await call('GET', '/provisioner/v1/actions/a')).status).toBe(404);
    });
  });

  describe('control', () => {
    it('reports simulated time, the --site-state-out document and the whole state', async () => {
      t.advance(42);
      const time = await call('GET', '/sim/time');
      expect(time.body).toEqual({ now: t.site.simulator.clock.startAt + 42_000, timeScale: 1 });
      const state = await call('GET', '/sim/state');
      expect(state.body).toEqual(JSON.parse(JSON.stringify(siteStateContract(t.state()))));
      expect(state.body.groups).toEqual({ compute: NODES });
      expect(Object.keys(state.body)).toEqual(['groups', 'nodes', 'taskLog']);
      expect((await call('GET', '/sim/full-state')).body).toEqual(JSON.parse(JSON.stringify(t.state())));
    });
  });
});

describe('site simulator apiFaults that hang', () => {
  it('leaves the request unanswered and unserved (the client meets its timeout), then serves the next one', async () => {
    const t = await startTestSite({
      nodes: NODES.map((name, i) => ({ name, nid: i + 1 })),
      groups: { compute: NODES },
      apiFaults: [{ service: 'workload-manager', method: 'POST', hang: true, count: 1 }],
    });
    try {
      const drain = () =>
        fetch(`${t.site.url}/slurm/v0.0.41/node/${NODES[0]}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ state: ['DRAIN'], reason: 'test' }),
          signal: AbortSignal.timeout(200),
        });
      await expect(drain()).rejects.toMatchObject({ name: 'TimeoutError' });
      expect(t.state().nodes[NODES[0]!]!.drainCount).toBe(0);
      expect((await drain()).status).toBe(200);
      expect(t.state().nodes[NODES[0]!]!.drainCount).toBe(1);
    } finally {
      await t.close();
    }
  });
});

describe("site simulator slurmrestd of Slurm 22.05 (what a real 22.05.8's slurmrestd answered)", () => {
  let t: TestSite;
  beforeEach(async () => {
    t = await startTestSite({ nodes: NODES.map((name, i) => ({ name, nid: i + 1 })), slurm: { version: '22.05.8' } });
  });
  afterEach(() => t.close());
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(t.site.url + path, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, body: (text.startsWith('{') ? JSON.parse(text) : undefined) as Record<string, unknown> | undefined };
  };

  it('serves v0.0.36 to v0.0.38 only', async () => {
    for (const version of ['v0.0.36', 'v0.0.37', 'v0.0.38']) expect((await call('GET', `/slurm/${version}/nodes`)).status).toBe(200);
    for (const version of ['v0.0.35', 'v0.0.39', 'v0.0.41']) expect((await call('GET', `/slurm/${version}/nodes`)).status).toBe(404);
  });

  it("prints v0.0.38's shape: the base state a lowercase string, flags apart, plain times, comma-separated features", async () => {
    await fetch(`${t.site.url}/slurm/v0.0.38/nodes`);
    t.site.simulator.workloadManager.drain(NODES[1]!, 'admin: bad dimm');
    const { body } = await call('GET', `/slurm/v0.0.38/node/${NODES[1]}`);
    expect(body!.meta).toEqual({
      plugin: { type: 'openapi/v0.0.38', name: 'Slurm OpenAPI v0.0.38' },
      Slurm: { version: { major: 22, micro: 8, minor: 5 }, release: '22.05.8' },
    });
    expect((body!.nodes as unknown[])[0]).toMatchObject({
      name: NODES[1],
      state: 'idle',
      state_flags: ['DRAIN'],
      reason: 'admin: bad dimm',
      boot_time: 0,
      features: 'role:Compute',
      active_features: 'role:Compute',
    });
  });

  it('answers an unknown node 500 with errors[] and an empty nodes list', async () => {
    const { status, body } = await call('GET', '/slurm/v0.0.38/node/nope');
    expect(status).toBe(500);
    expect(body!.errors).toEqual([{ error: 'Invalid node name specified', errno: 2018 }]);
    expect(body!.nodes).toEqual([]);
  });

  it('cannot update a node: POST is not defined (405)', async () => {
    const { status, text } = await call('POST', `/slurm/v0.0.38/node/${NODES[0]}`, { state: ['DRAIN'], reason: 'x' });
    expect(status).toBe(405);
    expect(text).toContain('Requested REST method is not defined at URL');
    expect(t.state().nodes[NODES[0]!]!.drainCount).toBe(0);
  });
});
