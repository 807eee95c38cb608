import path from 'node:path';
import type { EmbeddedRuntime } from '../../../local/embedded-runtime';
import { loadSiteFile, type SiteDefinition } from '../../../simulator';
import { parseUpgradeRequest } from '../../../core/rolling-upgrade/upgrade-request';
import { planUpgrade } from '../../../core/rolling-upgrade/upgrade-plan';
import { readPlanSite } from '../../../lambdas/activities/rolling-upgrade/plan-site';
import { runUpgrade, startTestRuntime } from '../../support/embedded';
import { EXAMPLE_REQUEST } from '../../../scripts/upgrade-args';

/**
 * `rollout plan upgrade` is the run's plan: on the example sites (simulated, virtual time), every
 * node's out-of-service interval in the plan (quiet until back) is within one poll interval of the
 * one the site recorded in the run (simulator/models/workload-manager.ts: drained and idle, until
 * back in service), in both modes. The plan assumes no node fails (it says so), so the sites run
 * here without their fault injections: a failure changes the run, not the plan.
 */

const SITES = path.resolve(__dirname, '..', '..', '..', 'examples', 'sites');
const POLL_SECONDS = 30;
/** `npm start`'s request (package.json "start"), and the README's window variant. */
const LOCKSTEP = { ...EXAMPLE_REQUEST, pollIntervalSeconds: POLL_SECONDS };
const WINDOW = { ...LOCKSTEP, mode: 'window', maxUnavailable: 6, batches: [1] };

async function withoutFaults(file: string): Promise<SiteDefinition> {
  const site = await loadSiteFile(path.join(SITES, file));
  return { ...site, nodes: site.nodes.map((node) => ({ ...node, faults: { tasks: {} } })) };
}

/** Each node's planned [out of service, back], in seconds from the start. */
async function planned(runtime: EmbeddedRuntime, site: SiteDefinition, input: Record<string, unknown>): Promise<Map<string, [number, number]>> {
  const request = parseUpgradeRequest(input);
  const members = await runtime.site.inventory.getGroupMembers(request.startingLabel);
  const now = runtime.clock.now();
  const plan = planUpgrade({
    request,
    plan: members,
    site: await readPlanSite(runtime.site, members),
    now,
    serviceSeconds: site.timing.bootSeconds + site.timing.returnSeconds,
  });
  expect(plan.leftAlone).toEqual({});
  return new Map(members.map((name) => [name, [(plan.nodes[name]!.outOfServiceAt - now) / 1000, (plan.nodes[name]!.backAt - now) / 1000]]));
}

describe('the plan is the run: each node out of service when the plan says, within a poll', () => {
  let runtime: EmbeddedRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it.each([
    ['rolling-upgrade-64.yaml', 'lock-step', LOCKSTEP],
    ['rolling-upgrade-64.yaml', 'window', WINDOW],
    ['cray-csm-64.yaml', 'lock-step', LOCKSTEP],
  ])(
    '%s, %s',
    async (file, _mode, input) => {
      const site = await withoutFaults(file);
      runtime = await startTestRuntime({ site });
      const plan = await planned(runtime, site, input);
      const { report } = await runUpgrade(runtime, input);

      expect(report).toMatchObject({ completed: true, counts: { UPGRADED: plan.size, FAILED: 0 } });
      const recorded = runtime.simulator.state().nodes;
      const off = [...plan].map(([name, [out, back]]) => {
        const [interval, ...more] = recorded[name]!.outOfService;
        expect(more).toEqual([]);
        return { name, plan: [out, back], run: interval, off: Math.max(Math.abs(interval![0] - out), Math.abs((interval![1] ?? Infinity) - back)) };
      });
      expect(off.filter((node) => !(node.off <= POLL_SECONDS))).toEqual([]);
      if (input === LOCKSTEP) {
        // An idle node of step 1 waits out of service for the step's slowest job (5,400 s) before the step boots: the plan says so too.
        const slowest = Math.max(...site.nodes.slice(0, 8).map((node) => node.wlm.busySeconds));
        expect(plan.get('x3000c0s1b0n0')).toEqual([0, slowest + site.timing.bootSeconds + site.timing.returnSeconds]);
      }
    },
    120_000,
  );
});
