// First: every caller of the request parsers reaches a counting wrapper of the real one.
import '../support/counted-parsers';
import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { parseDeploymentStrategy } from '../../core/group-deployment/parse-strategy';
import { parseDeploymentRequest } from '../../core/group-deployment/deployment-request';
import { parseUpgradeRequest } from '../../core/rolling-upgrade/upgrade-request';
import { call, startServedApi } from '../support/api';
import { eventually } from '../support/embedded';
import { buildSite, nodeName, upgradeRequest } from '../support/sites';

let served: Awaited<ReturnType<typeof startServedApi>>;
let runtime: EmbeddedRuntime;

beforeAll(async () => {
  served = await startServedApi(buildSite(4));
  runtime = served.runtime;
});
afterAll(() => served.close());

describe('one validation per boundary on the REST path', () => {
  it('parses a POST /sessions request once at the API edge and once in Open Session (a trust boundary: the console starts it too)', async () => {
    const parses = jest.mocked(parseUpgradeRequest);
    parses.mockClear();
    const created = await call(runtime, served.apiEndpoint, 'POST', '/sessions', upgradeRequest());
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await eventually(runtime, async () => ((await runtime.store.getSession(id)) ? true : undefined), 'the session opened');
    // The route's parse feeds its site checks (the boot template, the groups); the control plane between them parses nothing.
    expect(parses).toHaveBeenCalledTimes(2);
  });

  it('parses a POST /deployments request and its strategy once at the API edge and once in Start Deployment', async () => {
    const [requests, strategies] = [jest.mocked(parseDeploymentRequest), jest.mocked(parseDeploymentStrategy)];
    requests.mockClear();
    strategies.mockClear();
    const strategy = { groups: [{ name: 'all', critical: true, depends_on: [], selectors: [{ node_names: [nodeName(0), nodeName(1)] }] }] };
    const created = await call(runtime, served.apiEndpoint, 'POST', '/deployments', { strategy, pollIntervalSeconds: 10 });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await eventually(runtime, async () => ((await runtime.deployments.getDeployment(id)) ? true : undefined), 'the deployment started');
    expect({ requests: requests.mock.calls.length, strategies: strategies.mock.calls.length }).toEqual({ requests: 2, strategies: 2 });
  });
});
