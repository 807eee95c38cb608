import { countPerRack, nodeCouldStart, nodeGate, rackHasRoom } from '../../../core/scheduling';

/** The scheduler's start gate and rack cap, as the window's candidate scan asks them of one node. */

describe('nodeGate', () => {
  it('lets a node alive and available start, absent fields taking the inventory defaults', () => {
    expect(nodeGate(undefined)).toBeUndefined();
    expect(nodeGate({})).toBeUndefined();
    expect(nodeGate({ alive: true, available: true, rack: 'r0' })).toBeUndefined();
  });

  it('names the first gate that holds, a lost lock before a claim, before not alive, before unavailable', () => {
    expect(nodeGate({ lockLost: true, claimedElsewhere: true, alive: false, available: false })).toBe('node-lock-lost');
    expect(nodeGate({ claimedElsewhere: true, alive: false })).toBe('held-by-another-control-plane');
    expect(nodeGate({ alive: false, available: false })).toBe('node-not-alive');
    expect(nodeGate({ available: false })).toBe('node-unavailable');
  });

  it('does not gate a node whose lock another run of this control plane holds (its op waits instead)', () => {
    expect(nodeGate({ heldBy: 'other-run' })).toBeUndefined();
  });
});

describe('countPerRack and rackHasRoom', () => {
  const racks: Record<string, string> = { a: 'r0', b: 'r0', c: 'r1' };

  it('counts nodes per rack, leaving out nodes of no known rack', () => {
    expect(countPerRack(['a', 'b', 'c', 'x'], (n) => racks[n])).toEqual(
      new Map([
        ['r0', 2],
        ['r1', 1],
      ]),
    );
  });

  it('has room below the cap, none at it; no cap, or no known rack, always has', () => {
    const perRack = countPerRack(['a', 'b', 'c'], (n) => racks[n]);
    expect(rackHasRoom({ maxPerRack: 2 }, perRack, 'r1')).toBe(true);
    expect(rackHasRoom({ maxPerRack: 2 }, perRack, 'r0')).toBe(false);
    expect(rackHasRoom({ maxPerRack: 2 }, perRack, 'r9')).toBe(true);
    expect(rackHasRoom({ maxPerRack: 0 }, perRack, undefined)).toBe(true);
    expect(rackHasRoom({}, perRack, 'r0')).toBe(true);
  });
});

describe('nodeCouldStart', () => {
  const perRack = new Map([['r0', 1]]);

  it('holds a node behind its gate or its full rack', () => {
    expect(nodeCouldStart({ maxPerRack: 1 }, { rack: 'r1' }, perRack)).toBe(true);
    expect(nodeCouldStart({ maxPerRack: 1 }, { rack: 'r0' }, perRack)).toBe(false);
    expect(nodeCouldStart({ maxPerRack: 1 }, { rack: 'r1', alive: false }, perRack)).toBe(false);
    expect(nodeCouldStart({}, { rack: 'r0' }, perRack)).toBe(true);
  });
});
