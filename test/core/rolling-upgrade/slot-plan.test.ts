import { learnSlotSeconds, planSlots, reservationChanges } from '../../../core/rolling-upgrade/slot-plan';

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

  it('plans no slot for a node whose job never ends (scenario seed 1157: a reservation at now+Infinity failed every increment)', () => {
    const plan = planSlots({
      now: T0,
      maxUnavailable: 1,
      slotSeconds: 100,
      holders: [],
      todo: [
        { name: 'endless', readyAt: Infinity },
        { name: 'idle', readyAt: T0 },
      ],
    });
    expect(Object.fromEntries([...plan].map(([n, at]) => [n, (at - T0) / 1000]))).toEqual({ idle: 0 });
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
  // Buckets of 300 s; slots last 600 s; nothing starts before the next increment, 60 s on.
  const options = { now: T0, slotSeconds: 600, leadSeconds: 60, toleranceSeconds: 300 };
  const prefix = 'rollout-u1-';
  const bucket = (seconds: number) => `${prefix}${Math.round(T0 / 1000) + seconds}`;

  it('holds nodes whose slots fall in one bucket with one reservation from its start (not before the next increment), lasting two slots', () => {
    const changes = reservationChanges(
      'u1',
      new Map([
        ['n1', T0],
        ['n2', s(100)],
        ['n3', s(3700)],
      ]),
      [],
      options,
    );
    expect(changes).toEqual({
      put: [
        { name: bucket(0), nodes: ['n1', 'n2'], startsAt: s(60), endsAt: s(60 + 1200) },
        { name: bucket(3600), nodes: ['n3'], startsAt: s(3600), endsAt: s(3600 + 1200) },
      ],
      update: [],
      remove: [],
    });
  });

  it('leaves a node whose slot moved within the tolerance, moves one whose slot moved further, and deletes a reservation left empty', () => {
    const existing = [
      { name: bucket(3600), nodes: ['near', 'far'], startsAt: s(3600), endsAt: s(4800) },
      { name: bucket(900), nodes: ['started'], startsAt: s(900), endsAt: s(2100) },
    ];
    const changes = reservationChanges(
      'u1',
      new Map([
        ['near', s(3800)],
        ['far', s(5000)],
      ]),
      existing,
      options,
    );
    expect(changes.put).toEqual([{ name: bucket(4800), nodes: ['far'], startsAt: s(4800), endsAt: s(6000) }]);
    expect(changes.update).toEqual([{ ...existing[0], nodes: ['near'] }]);
    expect(changes.remove).toEqual([bucket(900)]);
  });

  it('keeps a node in a reservation that has begun while its slot is near, and takes it out once its slot moved away (Slurm cannot move a started one)', () => {
    const existing = [{ name: bucket(-300), nodes: ['due', 'later'], startsAt: s(-100), endsAt: s(1100) }];
    const changes = reservationChanges(
      'u1',
      new Map([
        ['due', s(200)],
        ['later', s(2000)],
      ]),
      existing,
      options,
    );
    expect(changes.update).toEqual([{ ...existing[0], nodes: ['due'] }]);
    expect(changes.put).toEqual([{ name: bucket(1800), nodes: ['later'], startsAt: s(1800), endsAt: s(3000) }]);
    expect(changes.remove).toEqual([]);
  });

  it('changes nothing when the plan still fits what the site holds', () => {
    const existing = [{ name: bucket(0), nodes: ['a', 'b'], startsAt: s(60), endsAt: s(1260) }];
    expect(
      reservationChanges(
        'u1',
        new Map([
          ['b', s(120)],
          ['a', s(30)],
        ]),
        existing,
        options,
      ),
    ).toEqual({ put: [], update: [], remove: [] });
  });
});

describe('learnSlotSeconds', () => {
  it('starts from the first node and moves a fifth of the way towards each next one', () => {
    expect(learnSlotSeconds(undefined, [])).toBeUndefined();
    expect(learnSlotSeconds(undefined, [700])).toBe(700);
    expect(learnSlotSeconds(700, [800])).toBeCloseTo(720);
    // A node that waited in its slot counts as 1.5 x the estimate at most.
    expect(learnSlotSeconds(700, [7000])).toBeCloseTo(0.8 * 700 + 0.2 * 1050);
  });
});
