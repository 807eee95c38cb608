import { SiteServiceError } from '../../../core/errors';
import { activeNodes, decideFailedAttempt, failNodes, isDrained, isOurDrain } from '../../../core/rolling-upgrade/stage-decision';
import { node, progress, session, wlmMap, wlmNode } from '../../support/upgrade-sessions';

describe('a failed attempt', () => {
  it('counts the error, backs off and tells the operator', () => {
    const d = decideFailedAttempt(session(), 'BOOTING', progress({ stage: 'BOOTING', step: 1, errorCount: 2 }), new SiteServiceError('boot-service', 'HTTP 503'));
    expect(d).toEqual({
      progress: progress({ stage: 'BOOTING', step: 1, errorCount: 3 }),
      waitSeconds: 120,
      message: 'Processing step 1 in stage BOOTING failed - boot-service: HTTP 503',
    });
  });
});

describe('the shared pieces of every decision', () => {
  it('works on nodes not yet upgraded or failed', () => {
    const records = [node('a', 0, 'NOT_STARTED'), node('b', 1, 'IN_PROGRESS'), node('c', 2, 'UPGRADED'), node('d', 3, 'FAILED')];
    expect(activeNodes(records).map((n) => n.name)).toEqual(['a', 'b']);
  });

  it("tells a drain of anyone's from our own", () => {
    const admin = wlmNode('a', 'IDLE', ['DRAIN'], { reason: 'bad dimm' });
    const ours = wlmNode('b', 'IDLE', ['DRAIN'], { reason: 'rolling-upgrade' });
    expect([isDrained(admin), isOurDrain(admin)]).toEqual([true, false]);
    expect([isDrained(ours), isOurDrain(ours)]).toEqual([true, true]);
    expect([isDrained(undefined), isOurDrain(wlmNode('c', 'IDLE'))]).toEqual([false, false]);
  });

  it('fails nothing for no nodes', () => {
    expect(failNodes(session(), [], 'upgrading-time-out-booting', wlmMap())).toEqual([]);
  });
});
