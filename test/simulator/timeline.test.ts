import { EventQueue } from '../../time/event-queue';
import { Timeline } from '../../simulator/timeline';

describe('EventQueue', () => {
  it('pops in time order, same-time events in the order they were pushed', () => {
    const queue = new EventQueue();
    const times = Array.from({ length: 2000 }, (_, i) => (i * 7919) % 97);
    const ran: number[] = [];
    times.forEach((at, i) => queue.push({ at, run: () => ran.push(i) }));
    for (let e = queue.pop(); e; e = queue.pop()) e.run(e.at);
    expect(ran).toHaveLength(times.length);
    for (let k = 1; k < ran.length; k++) {
      const [a, b] = [ran[k - 1]!, ran[k]!];
      expect(times[a]! < times[b]! || (times[a] === times[b] && a < b)).toBe(true);
    }
  });

  it('is empty after popping everything', () => {
    const queue = new EventQueue();
    queue.push({ at: 1, run: () => undefined });
    queue.pop();
    expect(queue.pop()).toBeUndefined();
    expect(queue.peekTime()).toBeUndefined();
  });
});

describe('Timeline', () => {
  it('runs nothing until synced, then every due event in time order at its own time', () => {
    let now = 0;
    const timeline = new Timeline({ now: () => now });
    const seen: number[] = [];
    for (const at of [30, 10, 20, 40]) timeline.at(at, (t) => seen.push(t));
    now = 35;
    expect(seen).toEqual([]);
    expect(timeline.sync()).toBe(35);
    expect(seen).toEqual([10, 20, 30]);
  });

  it('runs follow-up events that fall due within the same sync, and nested syncs see the event time', () => {
    let now = 0;
    const timeline = new Timeline({ now: () => now });
    const seen: string[] = [];
    timeline.at(10, (t) => {
      seen.push(`boot@${t}`);
      timeline.at(t + 5, () => seen.push(`return@${timeline.sync()}`));
    });
    timeline.at(12, (t) => seen.push(`other@${t}`));
    now = 100;
    timeline.sync();
    expect(seen).toEqual(['boot@10', 'other@12', 'return@15']);
  });
});
