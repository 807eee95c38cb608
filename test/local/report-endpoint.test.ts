import { buildSite, upgradeRequest } from '../support/sites';
import { startServedApi } from '../support/api';
import { until } from '../support/until';
import { REPORT_REFRESH_SECONDS } from '../../local/report-endpoint';

/**
 * `rollout serve` serves each upgrade session's HTML report at `GET /sessions/{id}/report`, beside the
 * REST routes on the API's port: reloading itself while the session runs, racks from the site's inventory.
 */
describe('GET /sessions/{id}/report of rollout serve', () => {
  it('answers the page of a running session (reloading itself), then of the ended one (not reloading); 404 and 405 otherwise', async () => {
    // 20 nodes: racks r0 (n000-n015) and r1 (n016-n019) in the inventory.
    const served = await startServedApi(buildSite(20));
    const { runtime, apiEndpoint } = served;
    const get = (path: string, method = 'GET') =>
      runtime.clock.busy(async () => {
        const response = await fetch(`${apiEndpoint}${path}`, { method });
        return { status: response.status, headers: response.headers, text: await response.text() };
      });
    try {
      const run = await runtime.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 2, batches: [2], approval: 'each-batch' }));
      // Parked for the approval of batch 2: running, and staying so.
      await until(async () => (await runtime.store.getSession(run.id))?.progress.window?.awaitingApproval === 1, 'parked for the approval of batch 2');
      const running = await get(`/sessions/${run.id}/report`);
      expect(running.status).toBe(200);
      expect(running.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(running.headers.get('cache-control')).toBe('no-store');
      expect(running.text).toContain(`<meta http-equiv="refresh" content="${REPORT_REFRESH_SECONDS}">`);
      expect(running.text).toMatch(/state <b id="state">UPDATING<\/b>/);
      expect(running.text).toContain('<table id="messages">');
      // The racks the inventory gives (the names are not xnames).
      expect(running.text).toMatch(/<tr><td>r0<\/td><td>16<\/td>/);
      expect(running.text).toMatch(/<tr><td>r1<\/td><td>4<\/td>/);
      expect(running.text).toContain('<table id="nodes" class="sortable">');

      // HEAD: the headers alone; another method: 405 naming the allowed ones; an unknown id: 404 pointing to the list.
      const head = await get(`/sessions/${run.id}/report`, 'HEAD');
      expect({ status: head.status, text: head.text }).toEqual({ status: 200, text: '' });
      const post = await get(`/sessions/${run.id}/report`, 'POST');
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
      const unknown = await get('/sessions/no-such-session/report');
      expect(unknown).toMatchObject({ status: 404, text: "no upgrade session with id 'no-such-session': rollout session list shows them\n" });
      // The REST routes beside it still answer.
      const rest = await get(`/sessions/${run.id}`);
      expect(rest.status).toBe(200);
      expect(JSON.parse(rest.text)).toMatchObject({ upgradeId: run.id, state: 'UPDATING' });

      await runtime.gate(run.id, 'approve');
      expect((await run.outcome).status).toBe('SUCCEEDED');
      const ended = await get(`/sessions/${run.id}/report`);
      expect(ended.status).toBe(200);
      expect(ended.text).not.toContain('http-equiv="refresh"');
      expect(ended.text).toMatch(/state <b id="state">READY<\/b>/);
      expect(ended.text).toMatch(/took <b id="makespan">(\d+h )?\d+m( \d+s)?<\/b>/);
    } finally {
      await served.close();
    }
  }, 120_000);
});
