import { SimClock } from '../../time/sim-clock';

describe('SimClock', () => {
  it('starts at startAt and runs timeScale times faster than real time', () => {
    let real = 5_000;
    const clock = new SimClock({ timeScale: 1000, startAt: Date.UTC(2030, 5, 1), realNow: () => real });
    expect(clock.now()).toBe(Date.UTC(2030, 5, 1));
    real += 250;
    expect(clock.now()).toBe(Date.UTC(2030, 5, 1) + 250 * 1000);
  });

  it('starts on 2026-01-01 by default', () => {
    const clock = new SimClock({ timeScale: 10, realNow: () => 0 });
    expect(clock.now()).toBe(Date.UTC(2026, 0, 1));
  });

  it('gives whole milliseconds', () => {
    let real = 0;
    const clock = new SimClock({ timeScale: 3, realNow: () => real });
    real = 0.1;
    expect(Number.isInteger(clock.now())).toBe(true);
  });

  it('converts simulated seconds to real milliseconds', () => {
    const clock = new SimClock({ timeScale: 1000 });
    expect(clock.realMsFor(300)).toBe(300);
    expect(clock.realMsFor(0.5)).toBe(0.5);
  });

  it('follows real time when none is injected', async () => {
    const clock = new SimClock({ timeScale: 1000 });
    const before = clock.now();
    await new Promise((r) => setTimeout(r, 20));
    // Only a lower bound (with timer slack): a slow machine may take longer, never much shorter.
    expect(clock.now() - before).toBeGreaterThanOrEqual(15 * 1000);
  });

  it.each([0, -1, Number.NaN, Infinity])('rejects timeScale %p', (timeScale) => {
    expect(() => new SimClock({ timeScale })).toThrow(RangeError);
  });
});
