import { BUSY_FLEET, boundNodes, busyFleetSite } from '../../bench/busy-fleet';
import { listScheduleMakespan, makespanLowerBound } from '../../bench/lower-bound';

describe('listScheduleMakespan', () => {
  it.each([
    ['one slot runs everything in a row', [0, 0, 0], 1, 10, 30],
    ['a late release waits for nobody', [0, 5, 100], 2, 10, 110],
    ['five at once on two slots take three rounds', [0, 0, 0, 0, 0], 2, 10, 30],
    ['the fourth waits for the first slot to free, or its release, whichever is later', [50, 0, 0, 0], 3, 10, 60],
    ['releases are sorted first', [30, 0, 20, 10], 1, 10, 40],
    ['a release inside a busy stretch starts when a slot frees', [0, 0, 3], 2, 10, 20],
    ['nothing to do takes no time', [], 4, 10, 0],
  ])('%s', (_what, releases, slots, hold, expected) => {
    expect(listScheduleMakespan(releases, slots, hold)).toBe(expected);
  });

  it('refuses fewer than one slot', () => {
    expect(() => listScheduleMakespan([0], 0, 10)).toThrow('slots must be at least 1, got 0');
  });
});

describe('makespanLowerBound', () => {
  it('is the list schedule when every node holds its slot equally long', () => {
    const nodes = [0, 0, 0, 0].map((r) => ({ releaseSeconds: r, holdSeconds: 720 }));
    expect(makespanLowerBound(nodes, 2)).toBe(1440);
  });

  it("never falls below the latest node's release plus its own hold", () => {
    // With the shortest hold (4) the list schedule ends at 8; node a alone needs 10.
    expect(
      makespanLowerBound(
        [
          { releaseSeconds: 0, holdSeconds: 10 },
          { releaseSeconds: 0, holdSeconds: 4 },
        ],
        1,
      ),
    ).toBe(10);
    expect(
      makespanLowerBound(
        [
          { releaseSeconds: 86400, holdSeconds: 720 },
          { releaseSeconds: 0, holdSeconds: 720 },
        ],
        32,
      ),
    ).toBe(87120);
  });
});

describe('busyFleetSite', () => {
  it('is reproducible and about as busy as asked, with jobs capped and a few boot failures', () => {
    const site = busyFleetSite({ nodes: 512, ...BUSY_FLEET });
    expect(busyFleetSite({ nodes: 512, ...BUSY_FLEET })).toEqual(site);
    const busy = site.nodes.filter((n) => n.wlm.busySeconds > 0);
    expect(busy.length / 512).toBeGreaterThan(0.5);
    expect(busy.length / 512).toBeLessThan(0.7);
    expect(Math.max(...busy.map((n) => n.wlm.busySeconds))).toBeLessThanOrEqual(86400);
    const failing = site.nodes.filter((n) => n.faults.boot === 'fail').length;
    expect(failing).toBeGreaterThan(0);
    expect(failing).toBeLessThan(20);
    // Jobs end at 20-100% of their time limit (issue 21 goal 6), as real jobs do.
    expect(site.workload).toEqual({ utilisation: 0.6, jobSeconds: { median: 7200, sigma: 1, max: 86400 }, endFraction: { min: 0.2, max: 1 }, seed: 7 });
    const bound = boundNodes(site);
    expect(bound.filter((n) => n.holdSeconds === 600)).toHaveLength(failing);
    expect(bound.filter((n) => n.holdSeconds === 720)).toHaveLength(512 - failing);
  });
});
