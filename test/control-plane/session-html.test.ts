import { instantLabel, rackOf, rackSummaries, reportMarkers } from '../../control-plane/reports/session-html';
import type { NodeReport } from '../../control-plane/reports/session-report';

const start = '2026-01-01T00:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(start) + seconds * 1000).toISOString();

describe('the HTML report of a session (control-plane/reports/session-html.ts)', () => {
  describe('reportMarkers', () => {
    it('marks each step, failure, stop, resume and approval at its instant, in time order, in the messages own words', () => {
      const messageLog = [
        { at: at(0), text: 'Upgrade session created: compute in steps of 2' },
        { at: at(0), text: 'Step 1 of 3: draining 2 node(s): n0, n1' },
        { at: at(600), text: 'Step 1: 2 node(s) quiesced' },
        { at: at(900), text: 'Step 2 of 3: draining 2 node(s): n2, n3' },
        { at: at(1000), text: 'Stopping at step 2 in stage QUIESCING: its nodes are put back as they were (not rebooted yet)' },
        { at: at(1060), text: 'Upgrade Session Stopped: nodes in flight finished, untouched nodes left as they were' },
        { at: at(5000), text: 'Resumed at step 2 after a stop' },
        { at: at(5100), text: 'batch 2 waits for its approval: rollout session approve u1' },
      ];
      const nodes: Record<string, NodeReport> = {
        n0: { status: 'UPGRADED', phase: 'back', since: at(800), outOfService: { from: at(0), to: at(800) } },
        n1: { status: 'FAILED', phase: 'failed', since: at(700), reason: 'upgrading-boot-session-failed', outOfService: { from: at(0), to: at(700) } },
      };
      expect(reportMarkers({ createdAt: start, messageLog, nodes })).toEqual([
        { kind: 'step', at: 0, label: 'Step 1 of 3' },
        { kind: 'failure', at: 700, label: 'n1 failed' },
        { kind: 'step', at: 900, label: 'Step 2 of 3' },
        { kind: 'stop', at: 1000, label: messageLog[4]!.text },
        { kind: 'stop', at: 1060, label: messageLog[5]!.text },
        { kind: 'resume', at: 5000, label: 'Resumed at step 2 after a stop' },
        { kind: 'approval', at: 5100, label: messageLog[7]!.text },
      ]);
    });

    it('marks each wave of a window when its first node went out of service', () => {
      const nodes: Record<string, NodeReport> = {
        a: { status: 'UPGRADED', phase: 'back', wave: 1, outOfService: { from: at(30), to: at(300) } },
        b: { status: 'UPGRADED', phase: 'back', wave: 1, outOfService: { from: at(10), to: at(300) } },
        c: { status: 'IN_PROGRESS', phase: 'booting', wave: 2, outOfService: { from: at(400) } },
        d: { status: 'NOT_STARTED', phase: 'waiting' },
      };
      expect(reportMarkers({ createdAt: start, messageLog: [], nodes })).toEqual([
        { kind: 'wave', at: 10, label: 'wave 1' },
        { kind: 'wave', at: 400, label: 'wave 2' },
      ]);
    });
  });

  describe('instantLabel', () => {
    it('shows a simulated instant as +h:mm from the start, never a date', () => {
      expect(instantLabel(at(5788), { createdAt: start, timeBase: 'simulated' })).toBe('+1:36');
      expect(instantLabel(at(21182.484), { createdAt: start, timeBase: 'simulated' })).toBe('+5:53');
      expect(instantLabel(at(0), { createdAt: start, timeBase: 'simulated' })).toBe('+0:00');
    });

    it('shows a wall-clock instant as its UTC clock time, with the date on another day than the start', () => {
      const report = { createdAt: '2026-03-02T22:10:05.000Z', timeBase: 'wall-clock' as const };
      expect(instantLabel('2026-03-02T23:59:40.000Z', report)).toBe('23:59');
      expect(instantLabel('2026-03-03T01:02:00.000Z', report)).toBe('2026-03-03 01:02');
    });
  });

  describe('racks', () => {
    it("takes a node's rack from the inventory, else its xname's cabinet", () => {
      expect(rackOf('x3001c0s5b0n1')).toBe('x3001');
      expect(rackOf('nid000001')).toBeUndefined();
      expect(rackOf('nid000001', { nid000001: 'r7' })).toBe('r7');
    });

    it('sums each rack: its nodes by outcome and its longest time out of service', () => {
      const nodes: Record<string, NodeReport> = {
        x3000c0s1b0n0: { status: 'UPGRADED', phase: 'back', outOfService: { from: at(0), to: at(5760) } },
        x3000c0s1b0n1: { status: 'FAILED', phase: 'failed', outOfService: { from: at(0), to: at(300) } },
        x3001c0s1b0n0: { status: 'IN_PROGRESS', phase: 'booting', outOfService: { from: at(100) } },
        nid9: { status: 'NOT_STARTED', phase: 'waiting' },
      };
      expect(rackSummaries(nodes)).toEqual([
        { rack: '-', nodes: 1, upgraded: 0, failed: 0, pending: 1, longestOutSeconds: 0 },
        { rack: 'x3000', nodes: 2, upgraded: 1, failed: 1, pending: 0, longestOutSeconds: 5760 },
        { rack: 'x3001', nodes: 1, upgraded: 0, failed: 0, pending: 1, longestOutSeconds: 0 },
      ]);
    });
  });
});
