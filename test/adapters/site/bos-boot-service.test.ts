import { BosBootService, bosSessionName } from '../../../adapters/site/bos-boot-service';
import { EmptyBootSessionError, SiteServiceError } from '../../../core/errors';
import { nodeNames, startTestSite, type TestSite } from '../../support/simulator';
import { stubServer } from '../../support/stub-server';

const BOOT = 300;
const RETURN = 60;
const [ok, failing, hanging, lost, busy] = nodeNames(5);

describe('BosBootService on the simulator', () => {
  let t: TestSite;
  const boot = () => t.clients.bootService;
  const wlmNode = async (name: string) => (await t.clients.workloadManager.getNodes([name])).get(name)!;

  beforeEach(async () => {
    t = await startTestSite({
      nodes: [
        { name: ok!, nid: 1 },
        { name: failing!, nid: 2, faults: { boot: 'fail' } },
        { name: hanging!, nid: 3, faults: { boot: 'hang' } },
        { name: lost!, nid: 4, faults: { returnToService: 'never' } },
        { name: busy!, nid: 5, wlm: { state: 'ALLOCATED', busySeconds: BOOT + RETURN + 1000 } },
      ],
      groups: { upgrading: [ok!, failing!, hanging!, lost!], healthy: [ok!], busy: [busy!] },
      bootTemplates: ['cos-2.4'],
      timing: { bootSeconds: BOOT, returnSeconds: RETURN },
    });
  });
  afterEach(() => t.close());

  it('knows which templates exist', async () => {
    await expect(boot().templateExists('cos-2.4')).resolves.toBe(true);
    await expect(boot().templateExists('cos-9')).resolves.toBe(false);
  });

  it('reboots every node of the limit with its own outcome', async () => {
    // As from real BOS, the POST answers a pending session whose components are not listed yet.
    const created = await boot().createSession({ name: 's1', operation: 'reboot', templateName: 'cos-2.4', limit: { label: 'upgrading' } });
    expect(created).toEqual({ name: 's1', status: 'running', nodes: {} });
    expect(await boot().getSession('s1')).toEqual({
      name: 's1',
      status: 'running',
      nodes: { [ok!]: 'booting', [failing!]: 'booting', [hanging!]: 'booting', [lost!]: 'booting' },
    });
    // As in Slurm, a node whose slurmd went away is only not responding until SlurmdTimeout (600 s on this site).
    expect(await wlmNode(ok!)).toMatchObject({ base: 'IDLE', flags: ['NOT_RESPONDING'] });

    t.advance(BOOT - 1);
    expect(Object.values((await boot().getSession('s1'))!.nodes)).toEqual(['booting', 'booting', 'booting', 'booting']);

    t.advance(1);
    const booted = (await boot().getSession('s1'))!;
    expect(booted.nodes).toEqual({ [ok!]: 'succeeded', [failing!]: 'failed', [hanging!]: 'booting', [lost!]: 'succeeded' });
    // A hung node keeps the session running for ever: the caller's boot timeout has to end it.
    expect(booted.status).toBe('running');
    // slurmd has not registered yet.
    expect(await wlmNode(ok!)).toMatchObject({ base: 'IDLE', flags: ['NOT_RESPONDING'], bootTime: undefined });

    t.advance(RETURN);
    const returned = await t.clients.workloadManager.getNodes([ok!, failing!, hanging!, lost!]);
    expect(returned.get(ok!)).toMatchObject({ base: 'IDLE', flags: [] });
    for (const name of [failing!, hanging!, lost!]) expect(returned.get(name)).toMatchObject({ base: 'IDLE', flags: ['NOT_RESPONDING'] });

    t.advance(365 * 24 * 3600);
    expect((await boot().getSession('s1'))!.nodes[hanging!]).toBe('booting');
    // Past SlurmdTimeout: DOWN, `Not responding`.
    expect(await wlmNode(lost!)).toMatchObject({ base: 'DOWN', reason: 'Not responding' });
    expect(t.state().nodes[lost!]!.wlmState).toBe('DOWN*');
  });

  it('completes a session once every node has succeeded or failed', async () => {
    await boot().createSession({ name: 's1', operation: 'reboot', templateName: 'cos-2.4', limit: { nodes: [ok!, failing!] } });
    t.advance(BOOT);
    expect(await boot().getSession('s1')).toEqual({ name: 's1', status: 'complete', nodes: { [ok!]: 'succeeded', [failing!]: 'failed' } });
  });

  it('serves sessions as BOS does, the nullable fields as null until they are set', async () => {
    const read = async () => (await fetch(`${t.site.urls.bos}/v2/sessions/s1`)).json() as Promise<{ tenant: unknown; status: Record<string, unknown> }>;
    await boot().createSession({ name: 's1', operation: 'reboot', templateName: 'cos-2.4', limit: { nodes: [ok!, failing!] } });
    expect(await read()).toMatchObject({ tenant: null, status: { status: 'running', end_time: null, error: null } });
    t.advance(BOOT);
    const done = await read();
    expect(done.status).toMatchObject({ status: 'complete', error: null });
    expect(new Date(done.status['end_time'] as string).getTime()).toBe(t.site.simulator.clock.now());
  });

  it('sets bootTime only when slurmd registers after a real reboot, and keeps the drain across it', async () => {
    await t.clients.workloadManager.drain(ok!, 'rolling-upgrade');
    await t.clients.workloadManager.resume(ok!);
    await t.clients.workloadManager.drain(ok!, 'rolling-upgrade');
    expect((await wlmNode(ok!)).bootTime).toBeUndefined();

    const requestedAt = t.site.simulator.clock.now();
    await boot().createSession({ name: 's1', operation: 'reboot', templateName: 'cos-2.4', limit: { label: 'healthy' } });
    t.advance(BOOT + RETURN);
    expect(await wlmNode(ok!)).toEqual({
      name: ok,
      base: 'IDLE',
      flags: ['DRAIN'],
      reason: 'rolling-upgrade',
      bootTime: requestedAt + (BOOT + RETURN) * 1000,
    });
    expect(t.state().nodes[ok!]).toMatchObject({ wlmState: 'DRAINED', bootCount: 1 });
  });

  it('kills the job of a busy node it reboots, and the killed job does not come back', async () => {
    await boot().createSession({ name: 's1', operation: 'reboot', templateName: 'cos-2.4', limit: { nodes: [busy!, ok!] } });
    expect(t.state().nodes[busy!]!.killedJobs).toBe(1);
    expect(t.state().nodes[ok!]!.killedJobs).toBe(0);

    t.advance(BOOT + RETURN);
    expect((await wlmNode(busy!)).base).toBe('IDLE');
    // Past the killed job's old end time nothing changes.
    t.advance(2000);
    expect(t.state().nodes[busy!]!.wlmState).toBe('IDLE');
  });

  it('records a violation when a node still booting is put in another session', async () => {
    await boot().createSession({ name: 's1', operation: 'reboot', templateName: 'cos-2.4', limit: { label: 'healthy' } });
    t.advance(BOOT / 2);
    await boot().createSession({ name: 's2', operation: 'reboot', templateName: 'cos-2.4', limit: { nodes: [ok!, lost!] } });
    const { violations } = t.state();
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(new RegExp(`${ok}.*'s2'.*'s1'`));

    // The superseded boot's registration is ignored: the node returns after the second boot only.
    const secondAt = t.site.simulator.clock.now();
    t.advance(BOOT / 2 + RETURN);
    expect((await wlmNode(ok!)).flags).toEqual(['NOT_RESPONDING']);
    t.advance(BOOT / 2);
    expect((await wlmNode(ok!)).bootTime).toBe(secondAt + (BOOT + RETURN) * 1000);
  });

  it('records no violation for sessions that follow one another', async () => {
    await boot().createSession({ name: 's1', operation: 'reboot', templateName: 'cos-2.4', limit: { label: 'healthy' } });
    t.advance(BOOT);
    await boot().createSession({ name: 's2', operation: 'reboot', templateName: 'cos-2.4', limit: { label: 'healthy' } });
    t.advance(BOOT + RETURN);
    expect(t.state()).toMatchObject({ violations: [], nodes: { [ok!]: { bootCount: 2, wlmState: 'IDLE' } } });
  });

  it('treats creating the same session name again as the same session', async () => {
    const request = { name: 's1', operation: 'reboot', templateName: 'cos-2.4', limit: { label: 'healthy' } } as const;
    const first = await boot().createSession(request);
    t.advance(BOOT);
    const again = await boot().createSession(request);
    expect(again).toEqual({ ...first, status: 'complete', nodes: { [ok!]: 'succeeded' } });
    expect(t.state().nodes[ok!]!.bootCount).toBe(1);
    expect(t.state().violations).toEqual([]);
  });

  it('gives BOS a valid session name for ours, the same one on every retry', async () => {
    const ours = 'rollout-8f14e45f-ceea-467a-a866-051d5f4e1b2c-step-12';
    const request = { name: ours, operation: 'reboot', templateName: 'cos-2.4', limit: { label: 'healthy' } } as const;
    const created = await boot().createSession(request);
    expect(created.name).toBe(ours);
    // Cut to 45 characters, still naming the run; two steps of one run get two names.
    expect(bosSessionName(ours)).toMatch(/^r-8f14e45f-ceea-467a-a866-051d5f4e1b2c-[0-9a-f]{6}$/);
    expect(bosSessionName(ours)).toHaveLength(45);
    expect(bosSessionName(ours.replace('step-12', 'step-13'))).not.toBe(bosSessionName(ours));
    expect(bosSessionName(`a-name-of-no-run-${'x'.repeat(40)}`)).toMatch(/^rollout-[0-9a-f]{32}$/);
    expect(bosSessionName('s1')).toBe('s1');
    // The simulator refuses names real BOS refuses, so the session exists under the BOS name.
    expect(t.site.simulator.bootService.getSession(bosSessionName(ours))).toBeDefined();
    t.advance(BOOT);
    expect(await boot().createSession(request)).toEqual({ name: ours, status: 'complete', nodes: { [ok!]: 'succeeded' } });
    expect(t.state().nodes[ok!]!.bootCount).toBe(1);
  });

  it('returns undefined for a session that does not exist', async () => {
    await expect(boot().getSession('nope')).resolves.toBeUndefined();
  });

  it('fails with a SiteServiceError for an unknown template or limit', async () => {
    for (const change of [{ templateName: 'cos-9' }, { limit: { label: 'no-such-group' } }]) {
      const err = await boot()
        .createSession({ name: 's1', operation: 'reboot', templateName: 'cos-2.4', limit: { label: 'healthy' }, ...change })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SiteServiceError);
      expect(err).toMatchObject({ service: 'boot-service', status: 400 });
    }
  });
});

/**
 * Bodies as real BOS v2 serves them (Cray-HPE/bos api/openapi.yaml.in; the server stores
 * `V2Session.to_dict()`, so nullable fields travel as null): the POST answers the pending record
 * with no components yet; components are filled in by BOS's session-setup operator.
 */
describe('BosBootService against BOS v2 bodies with null fields', () => {
  const created = {
    name: 's1',
    tenant: null,
    operation: 'reboot',
    template_name: 'cos-2.4',
    limit: 'x3000c0s1b0n0,x3000c0s2b0n0',
    stage: false,
    components: '',
    include_disabled: false,
    status: { start_time: '2024-05-01T10:00:00', end_time: null, status: 'pending', error: null },
  };
  const running = { ...created, components: 'x3000c0s1b0n0,x3000c0s2b0n0', status: { ...created.status, status: 'running' } };
  const components = [
    {
      id: 'x3000c0s1b0n0',
      actual_state: { boot_artifacts: { kernel: '', kernel_parameters: '', initrd: '' }, bss_token: '', last_updated: '2024-05-01T10:05:00' },
      desired_state: {
        boot_artifacts: { kernel: 's3://k', kernel_parameters: 'console=ttyS0', initrd: 's3://i' },
        configuration: '',
        bss_token: '',
        last_updated: '2024-05-01T10:00:01',
      },
      staged_state: {},
      last_action: { last_updated: '2024-05-01T10:05:00', action: 'powering_on', failed: false },
      event_stats: { power_on_attempts: 1, power_off_graceful_attempts: 1, power_off_forceful_attempts: 0 },
      status: { phase: '', status: 'stable', status_override: '' },
      enabled: false,
      error: '',
      session: 's1',
      retry_policy: 3,
    },
    { id: 'x3000c0s2b0n0', status: { phase: 'powering_on', status: null }, enabled: true, error: null, session: 's1' },
  ];
  const routes = (path: string, method: string) => {
    if (method === 'POST' && path === '/v2/sessions') return { status: 201, text: JSON.stringify(created) };
    if (path === '/v2/sessions/s1') return { status: 200, text: JSON.stringify(running) };
    if (path === '/v2/components?session=s1') return { status: 200, text: JSON.stringify(components) };
    return { status: 404, text: '{"title":"Not Found","status":404}' };
  };

  it('reads a just-created session and a running one, nulls included', async () => {
    const stub = await stubServer(routes);
    try {
      const bos = new BosBootService({ baseUrl: stub.url });
      await expect(
        bos.createSession({ name: 's1', operation: 'reboot', templateName: 'cos-2.4', limit: { nodes: ['x3000c0s1b0n0', 'x3000c0s2b0n0'] } }),
      ).resolves.toEqual({
        name: 's1',
        status: 'running',
        nodes: {},
      });
      await expect(bos.getSession('s1')).resolves.toEqual({ name: 's1', status: 'running', nodes: { x3000c0s1b0n0: 'succeeded', x3000c0s2b0n0: 'booting' } });
    } finally {
      await stub.close();
    }
  });

  it("sends a limit as BOS's comma-separated list: the nodes joined, one node alone, a group by its label; never an empty one", async () => {
    const stub = await stubServer(routes);
    try {
      const bos = new BosBootService({ baseUrl: stub.url });
      for (const limit of [{ nodes: ['x3000c0s1b0n0', 'x3000c0s2b0n0'] }, { nodes: ['x3000c0s1b0n0'] }, { label: 'upgrading' }])
        await bos.createSession({ name: 's1', operation: 'reboot', templateName: 'cos-2.4', limit });
      const posted = stub.seen.filter((r) => r.method === 'POST').map((r) => (JSON.parse(r.body) as { limit: string }).limit);
      expect(posted).toEqual(['x3000c0s1b0n0,x3000c0s2b0n0', 'x3000c0s1b0n0', 'upgrading']);
      // BOS reads an empty limit as none at all (every node of the template's boot sets): refused before the request.
      const before = stub.seen.length;
      const err = await bos.createSession({ name: 's2', operation: 'reboot', templateName: 'cos-2.4', limit: { nodes: [] } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmptyBootSessionError);
      expect((err as Error).message).toBe('boot-service: boot session s2 would reboot no node: its limit lists no node; nothing was booted');
      expect(stub.seen.length).toBe(before);
    } finally {
      await stub.close();
    }
  });

  it('reports the error of a session BOS could not run', async () => {
    const failed = {
      ...running,
      status: { ...running.status, status: 'complete', end_time: '2024-05-01T10:01:00', error: 'No nodes were found to act upon.' },
    };
    const stub = await stubServer((path, method) => (path === '/v2/sessions/s1' ? { status: 200, text: JSON.stringify(failed) } : routes(path, method)));
    try {
      const status = await new BosBootService({ baseUrl: stub.url }).getSession('s1');
      expect(status).toMatchObject({ status: 'complete', error: 'No nodes were found to act upon.' });
    } finally {
      await stub.close();
    }
  });
});
