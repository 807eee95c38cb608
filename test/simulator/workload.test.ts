import type { InvalidInputError } from '../../core/errors';
import { parseSiteDefinition, type SiteDefinitionInput } from '../../simulator';
import { SimClock } from '../../time/sim-clock';
import { SiteSimulator } from '../../simulator/site-simulator';

const HOUR = 3600_000;
const workload = { utilisation: 0.6, jobSeconds: { median: 7200, sigma: 1, max: 86400 }, seed: 7 };

/** A simulator whose clock the test moves by hand (simulated ms since the start). */
function simulate(input: Partial<SiteDefinitionInput> & Pick<SiteDefinitionInput, 'nodes'>) {
  let elapsed = 0;
  const clock = new SimClock({ timeScale: 1, startAt: 0, realNow: () => elapsed });
  const sim = new SiteSimulator(parseSiteDefinition({ bootTemplates: ['img'], ...input }), clock);
  return { sim, at: (ms: number) => ((elapsed = ms), sim) };
}

const nodes = (count: number) => Array.from({ length: count }, (_, i) => ({ name: `n${i}`, nid: i }));
const busy = (display: string | undefined) => display === 'ALLOCATED' || display === 'DRAINING';

describe('the busy-fleet workload', () => {
  it('without a workload, an idle node stays idle and a busy one runs only its first job', () => {
    const { at } = simulate({
      nodes: [
        { name: 'a', nid: 1 },
        { name: 'b', nid: 2, wlm: { state: 'ALLOCATED', busySeconds: 100 } },
      ],
    });
    expect(at(50_000).state().nodes['b']).toMatchObject({ wlmState: 'ALLOCATED', initialBusySeconds: 100 });
    const later = at(30 * 24 * HOUR).state().nodes;
    expect([later['a']!.wlmState, later['b']!.wlmState]).toEqual(['IDLE', 'IDLE']);
    expect(later['a']!.initialBusySeconds).toBe(0);
  });

  it('keeps nodes busy about the utilisation share of the time', () => {
    const { at } = simulate({ nodes: nodes(200), workload });
    let busyCount = 0;
    let samples = 0;
    for (let t = 2 * 24 * HOUR; t < 40 * 24 * HOUR; t += 6 * HOUR) {
      for (const node of Object.values(at(t).state().nodes)) {
        samples++;
        if (busy(node.wlmState)) busyCount++;
      }
    }
    expect(busyCount / samples).toBeGreaterThan(0.55);
    expect(busyCount / samples).toBeLessThan(0.65);
  });

  it("reproduces a node's jobs from the seed, whatever happens to other nodes", () => {
    const history = (drainOther: boolean) => {
      const { sim, at } = simulate({ nodes: nodes(5), workload });
      const seen: string[] = [];
      for (let t = 0; t < 10 * 24 * HOUR; t += 600_000) {
        at(t);
        if (drainOther && t === 24 * HOUR) sim.workloadManager.drain('n0', 'rolling-upgrade');
        seen.push(sim.workloadManager.get('n3')!.display);
      }
      return seen;
    };
    const plain = history(false);
    expect(plain).toEqual(history(true));
    expect(new Set(plain)).toEqual(new Set(['IDLE', 'ALLOCATED']));
  });

  it('gives a drained node no new job: its wait is what its job has left; it is out of service from then until resumed', () => {
    const { sim, at } = simulate({ nodes: [{ name: 'a', nid: 1, wlm: { state: 'ALLOCATED', busySeconds: 1000 } }], workload });
    at(400_000);
    sim.workloadManager.drain('a', 'rolling-upgrade');
    expect(at(999_000).state().nodes['a']).toMatchObject({ wlmState: 'DRAINING', outOfService: [] });
    expect(at(1_000_000).state().nodes['a']).toMatchObject({ wlmState: 'DRAINED', outOfService: [[1000, null]] });
    expect(at(50 * HOUR).state().nodes['a']!.wlmState).toBe('DRAINED');
    const generation = sim.workloadManager.reboot('a');
    at(51 * HOUR);
    sim.workloadManager.register('a', generation);
    sim.workloadManager.resume('a');
    expect(sim.state().nodes['a']!.outOfService).toEqual([[1000, 51 * 3600]]);
    // Back in service, it takes jobs again.
    let sawJob = false;
    for (let t = 52 * HOUR; t < 100 * HOUR && !sawJob; t += 600_000) sawJob = at(t).state().nodes['a']!.wlmState === 'ALLOCATED';
    expect(sawJob).toBe(true);
  });

  it('opens the interval at the drain of an idle node and closes it when the node is failed', () => {
    const { sim, at } = simulate({ nodes: [{ name: 'a', nid: 1 }] });
    at(10_000);
    sim.workloadManager.drain('a', 'rolling-upgrade');
    at(70_000);
    sim.workloadManager.fail('a', 'upgrading-boot-session-failed');
    expect(at(80_000).state().nodes['a']!.outOfService).toEqual([[10, 70]]);
  });
});

describe('site file: workload and gates', () => {
  it('defaults alive and available to true and serves them from the inventory', () => {
    const { sim } = simulate({
      nodes: [
        { name: 'a', nid: 1, available: false },
        { name: 'b', nid: 2, alive: false },
      ],
    });
    expect(sim.inventory.listNodes().map((n) => [n.name, n.alive, n.available])).toEqual([
      ['a', true, false],
      ['b', false, true],
    ]);
  });

  it('rejects a workload that cannot be, naming the field', () => {
    const problems = (w: unknown) => {
      try {
        parseSiteDefinition({ nodes: nodes(1), workload: w });
      } catch (err) {
        return (err as InvalidInputError).problems.map((p) => `${p.field}: ${p.message}`);
      }
      return [];
    };
    expect(problems({ utilisation: 1, jobSeconds: { median: 10 } })).toEqual(['workload.utilisation: utilisation must be below 1']);
    expect(problems({ utilisation: 0.5, jobSeconds: { median: 10, max: 5 } })).toEqual(['workload.jobSeconds.max: max must be at least the median']);
    expect(problems({ utilisation: 0.5, jobSeconds: { median: 10 }, rate: 3 })).toEqual(['workload.rate: unknown key']);
  });
});
