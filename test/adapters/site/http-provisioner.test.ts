import { SiteServiceError } from '../../../core/errors';
import { nodeNames, startTestSite, type TestSite } from '../../support/simulator';

const PREPARE = 120;
const DEPLOY = 600;
const [ok, badPrepare, hangPrepare, badDeploy] = nodeNames(4);

describe('HttpProvisioner on the simulator', () => {
  let t: TestSite;
  const provisioner = () => t.clients.provisioner;

  beforeEach(async () => {
    t = await startTestSite({
      nodes: [
        { name: ok!, nid: 1 },
        { name: badPrepare!, nid: 2, faults: { prepare: 'fail' } },
        { name: hangPrepare!, nid: 3, faults: { prepare: 'hang' } },
        { name: badDeploy!, nid: 4, faults: { deploy: 'fail' } },
      ],
      timing: { prepareSeconds: PREPARE, deploySeconds: DEPLOY },
    });
  });
  afterEach(() => t.close());

  it('prepares each node after prepareSeconds with its own outcome; a hung node keeps the action running', async () => {
    const started = await provisioner().startAction({ name: 'p1', action: 'prepare', nodes: [ok!, badPrepare!, hangPrepare!] });
    expect(started).toEqual({
      name: 'p1',
      action: 'prepare',
      status: 'running',
      nodes: { [ok!]: 'running', [badPrepare!]: 'running', [hangPrepare!]: 'running' },
    });
    t.advance(PREPARE - 1);
    expect(Object.values((await provisioner().getAction('p1'))!.nodes)).toEqual(['running', 'running', 'running']);
    t.advance(1);
    expect(await provisioner().getAction('p1')).toEqual({
      name: 'p1',
      action: 'prepare',
      status: 'running',
      nodes: { [ok!]: 'succeeded', [badPrepare!]: 'failed', [hangPrepare!]: 'running' },
    });
    t.advance(365 * 24 * 3600);
    expect((await provisioner().getAction('p1'))!.status).toBe('running');
  });

  it('deploys after deploySeconds and completes when every node is done', async () => {
    await provisioner().startAction({ name: 'd1', action: 'deploy', nodes: [ok!, badDeploy!] });
    t.advance(PREPARE);
    expect((await provisioner().getAction('d1'))!.status).toBe('running');
    t.advance(DEPLOY - PREPARE);
    expect(await provisioner().getAction('d1')).toMatchObject({ status: 'complete', nodes: { [ok!]: 'succeeded', [badDeploy!]: 'failed' } });
    expect(t.state().nodes[ok!]).toMatchObject({ prepareCount: 0, deployCount: 1 });
  });

  it('treats starting the same action name again as the same action', async () => {
    const request = { name: 'p1', action: 'prepare', nodes: [ok!] } as const;
    await provisioner().startAction(request);
    t.advance(PREPARE);
    await expect(provisioner().startAction(request)).resolves.toMatchObject({ status: 'complete', nodes: { [ok!]: 'succeeded' } });
    expect(t.state().nodes[ok!]!.prepareCount).toBe(1);
  });

  it('records a violation when a node still being worked on is put in another action', async () => {
    await provisioner().startAction({ name: 'p1', action: 'prepare', nodes: [ok!] });
    await provisioner().startAction({ name: 'p2', action: 'deploy', nodes: [ok!] });
    expect(t.state().violations).toEqual([expect.stringMatching(new RegExp(`${ok}.*'p2'.*'p1'`))]);
  });

  it('returns undefined for an unknown action and a SiteServiceError for unknown nodes', async () => {
    await expect(provisioner().getAction('nope')).resolves.toBeUndefined();
    const err = await provisioner()
      .startAction({ name: 'p1', action: 'prepare', nodes: ['ghost'] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiteServiceError);
    expect(err).toMatchObject({ service: 'provisioner', status: 400 });
  });
});
