import { applyPhaseResult, groupsToStart, parseDeploymentStrategy, planDeployment, startDeploymentRun } from '../../../core/group-deployment';
import { batchesPerPage, pageHistoryEvents, PAGE_HISTORY_BUDGET } from '../../../core/group-deployment/batch-pages';
import { maxPolls, pollWaitSeconds } from '../../../core/group-deployment/poll-schedule';

const SCHEDULE = { pollIntervalSeconds: 30, maxPollSeconds: 600 };
import type { InventoryNode } from '../../../ports/site';

const node = (name: string): InventoryNode => ({ name, nid: 0, role: 'Compute', tags: [], labels: {} });
const inventory = ['ntp1', 'ctl1', 'shared', 'mon1'].map(node);
const group = (name: string, nodes: string[], dependsOn: string[] = []) => ({
  name,
  critical: false,
  depends_on: dependsOn,
  selectors: [{ node_names: nodes }],
});

describe('groupsToStart', () => {
  // Plan order: ntp, ctl, mon. `shared` is owned by ctl (first to select it) but counted by mon too.
  const plan = planDeployment(
    parseDeploymentStrategy({ groups: [group('ntp', ['ntp1']), group('ctl', ['ctl1', 'shared'], ['ntp']), group('mon', ['mon1', 'shared'])] }),
    inventory,
  );

  it('holds back a ready group while the owner of a node it counts has not finished', () => {
    expect(groupsToStart(plan, startDeploymentRun(plan), 5)).toEqual(['ntp']);
  });

  it('starts it once the owner has finished', () => {
    let state = startDeploymentRun(plan);
    for (const [group, nodes] of [
      ['ntp', ['ntp1']],
      ['ctl', ['ctl1', 'shared']],
    ] as const) {
      state = applyPhaseResult(plan, state, { group, phase: 'PREPARE', succeededNodes: nodes });
      state = applyPhaseResult(plan, state, { group, phase: 'DEPLOY', succeededNodes: nodes });
    }
    expect(groupsToStart(plan, state, 5)).toEqual(['mon']);
  });

  it('starts at most the limit, in plan order', () => {
    const independent = planDeployment(parseDeploymentStrategy({ groups: [group('a', ['ntp1']), group('b', ['ctl1']), group('c', ['mon1'])] }), inventory);
    expect(groupsToStart(independent, startDeploymentRun(independent), 2)).toEqual(['a', 'b']);
    expect(groupsToStart(independent, startDeploymentRun(independent), 1)).toEqual(['a']);
  });
});

describe('batchesPerPage', () => {
  it('counts the polls of doubling waits up to the cap', () => {
    expect(maxPolls(100, SCHEDULE)).toBe(3); // 30 + 60 + 10 (the last wait ends at the timeout)
    expect(maxPolls(3600, SCHEDULE)).toBe(10); // 30..480 (930 s), then 600 s polls until 3600 s
  });
  it('waits the poll interval first, then doubles up to the cap, never past the timeout, at least a second', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((wait) => pollWaitSeconds(SCHEDULE, wait))).toEqual([30, 60, 120, 240, 480, 600, 600]);
    expect(pollWaitSeconds(SCHEDULE, 3, 100)).toBe(100);
    expect(pollWaitSeconds(SCHEDULE, 3, 0)).toBe(1);
    // A poll interval above the cap is kept for the first wait, as asked.
    expect(pollWaitSeconds({ pollIntervalSeconds: 3600, maxPollSeconds: 600 }, 0)).toBe(3600);
  });
  it.each([1800, 3600, 14_400, 86_400, 604_800])('keeps a page of a %i s timeout inside the history budget', (timeout) => {
    const size = batchesPerPage(timeout, SCHEDULE, 100);
    expect(size).toBeGreaterThanOrEqual(1);
    expect(pageHistoryEvents(size, maxPolls(timeout, SCHEDULE))).toBeLessThanOrEqual(PAGE_HISTORY_BUDGET);
  });
  it('uses the configured page size when timeouts are short', () => {
    expect(batchesPerPage(1800, SCHEDULE, 100)).toBe(100);
  });
});
