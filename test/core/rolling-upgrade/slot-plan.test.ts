import { learnSlotSeconds, planSlots, reservationChanges, reservationName } from '../../../core/rolling-upgrade/slot-plan';

const T0 = Date.UTC(2026, 0, 1);
const s = (seconds: number) => T0 + seconds * 1000;

describe('planSlots', () => {
  it('gives free slots to the earliest-ready nodes first, then each node the slot that frees first', () => {
    const plan = planSlots({
      now: T0,
      maxUnavailable: 2,
      slotSeconds: 100,
      // One slot is held, taken 40 s ago: it frees at +60.
      holders: [{ admittedAt: s(-40) }],
      todo: [
        { name: 'busy-long', readyAt: s(1000) },
        { name: 'idle-a', readyAt: T0 },
        { name: 'idle-b', readyAt: T0 },
        { name: 'busy-short', readyAt: s(30) },
      ],
    });
    expect(Object.fromEntries([...plan].map(([n, at]) => [n, (at - T0) / 1000]))).toEqual({
      'idle-a': 0, // the free slot
      'idle-b': 60, // the held slot, once it frees
      'busy-short': 100, // idle-a's slot, after it
      'busy-long': 1000, // its job's limit, slots free long before
    });
  });

  it('never plans more than maxUnavailable slots at once', () => {
    const todo = Array.from({ length: 40 }, (_, i) => ({ name: `n${i}`, readyAt: s((i * 37) % 300) }));
    const plan = planSlots({ now: T0, maxUnavailable: 4, slotSeconds: 120, holders: [{ admittedAt: T0 }, { admittedAt: s(-60) }], todo });
    const intervals = [...plan.values(), T0, s(-60)].map((start) => [start, start + 120_000] as const);
    for (const [start] of intervals) expect(intervals.filter(([a, b]) => a <= start && start < b).length).toBeLessThanOrEqual(4);
    for (const node of todo) expect(plan.get(node.name)).toBeGreaterThanOrEqual(node.readyAt);
  });
});

describe('reservationChanges', () => {
  const options = { now: T0, slotSeconds: 600, leadSeconds: 60, toleranceSeconds: 300 };
  const name = (node: string) => reservationName('u1', node);

  it('creates a reservation per planned node from its slot (not before the next increment), lasting two slots', () => {
    const changes = reservationChanges('u1', new Map([['n1', T0], ['n2', s(3600)]]), [], options);
    expect(changes).toEqual({
      put: [
        { name: name('n1'), nodes: ['n1'], startsAt: s(60), endsAt: s(60 + 1200) },
        { name: name('n2'), nodes: ['n2'], startsAt: s(3600), endsAt: s(3600 + 1200) },
      ],
      move: [],
      remove: [],
    });
  });

  it('moves a future reservation only past the tolerance, and removes those of nodes no longer planned', () => {
    const existing = [
      { name: name('near'), nodes: ['near'], startsAt: s(3700), endsAt: s(4900) },
      { name: name('far'), nodes: ['far'], startsAt: s(1000), endsAt: s(2200) },
      { name: name('started-node'), nodes: ['started-node'], startsAt: s(500), endsAt: s(1700) },
    ];
    const changes = reservationChanges('u1', new Map([['near', s(3600)], ['far', s(5000)]]), existing, options);
    expect(changes.put).toEqual([]);
    expect(changes.move).toEqual([{ name: name('far'), nodes: ['far'], startsAt: s(5000), endsAt: s(6200) }]);
    expect(changes.remove).toEqual([name('started-node')]);
  });

  it('leaves a reservation that has begun while its slot is near, and makes it again when the slot moved away (Slurm cannot move a started one)', () => {
    const existing = [
      { name: name('due'), nodes: ['due'], startsAt: s(-100), endsAt: s(1100) },
      { name: name('later'), nodes: ['later'], startsAt: s(-100), endsAt: s(1100) },
    ];
    const changes = reservationChanges('u1', new Map([['due', s(200)], ['later', s(2000)]]), existing, options);
    expect(changes.move).toEqual([]);
    expect(changes.remove).toEqual([name('later')]);
    expect(changes.put).toEqual([{ name: name('later'), nodes: ['later'], startsAt: s(2000), endsAt: s(3200) }]);
  });
});

describe('learnSlotSeconds', () => {
  it('starts from the first node and moves a fifth of the way towards each next one', () => {
    expect(learnSlotSeconds(undefined, [])).toBeUndefined();
    expect(learnSlotSeconds(undefined, [700])).toBe(700);
    expect(learnSlotSeconds(700, [800])).toBeCloseTo(720);
  });
});
