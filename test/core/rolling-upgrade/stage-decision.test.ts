import { SiteServiceError } from '../../../core/errors';
import {
  activeNodes,
  claimsLeftInService,
  decideFailedAttempt,
  failNodes,
  isDrained,
  isOurDrain,
  returnToService,
  unrestoredReasons,
} from '../../../core/rolling-upgrade/stage-decision';
import { isUpgradeDrainReason } from '../../../core/site/node-claims';
import { reasonAsSet } from '../../../core/rolling-upgrade/session';
import { isBackAfterBoot, isQuiet } from '../../../core/rolling-upgrade/wlm-readiness';
import { node, OUR_DRAIN, progress, session, wlmMap, wlmNode } from '../../support/upgrade-sessions';

describe('a failed attempt', () => {
  it('counts the error, backs off and tells the operator', () => {
    const d = decideFailedAttempt(
      session(),
      'BOOTING',
      progress({ stage: 'BOOTING', step: 1, errorCount: 2 }),
      new SiteServiceError('boot-service', 'HTTP 503'),
    );
    expect(d).toEqual({
      progress: progress({ stage: 'BOOTING', step: 1, errorCount: 3 }),
      waitSeconds: 120,
      message: 'Processing step 2 in stage BOOTING failed - boot-service: HTTP 503',
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
    const ours = wlmNode('b', 'IDLE', ['DRAIN'], { reason: OUR_DRAIN });
    expect([isDrained(admin), isOurDrain(admin)]).toEqual([true, false]);
    expect([isDrained(ours), isOurDrain(ours)]).toEqual([true, true]);
    expect([isDrained(undefined), isOurDrain(wlmNode('c', 'IDLE'))]).toEqual([false, false]);
  });

  it('recognises our drain by its prefix and a run id that parses, whatever Slurm or the session appended, and only while drained or DOWN', () => {
    const reasons = [
      OUR_DRAIN,
      `${OUR_DRAIN} : reboot issued`,
      `${OUR_DRAIN} : Not responding`,
      'rolling-upgrade 0f8fad5b-d9cb-469f-a165-70867728950e : Not responding',
    ];
    for (const reason of reasons) {
      expect(isUpgradeDrainReason(reason)).toBe(true);
      expect(isOurDrain(wlmNode('a', 'IDLE', ['DRAIN'], { reason }))).toBe(true);
      // ReturnToService 0/1 kept it DOWN after SlurmdTimeout: still ours to resume.
      expect(isOurDrain(wlmNode('a', 'DOWN', ['NOT_RESPONDING'], { reason }))).toBe(true);
    }
    for (const reason of ['rolling-upgrades', 'rolling-upgrade-x', 'bad dimm rolling-upgrade', 'Reboot ASAP', '', undefined])
      expect(isUpgradeDrainReason(reason)).toBe(false);
    // Issue 26, item 4: the word alone, or followed by no run id that parses, is an admin's (or CRUS's bare) drain, kept.
    for (const reason of [
      'rolling-upgrade',
      'rolling-upgrade maintenance',
      'rolling-upgrade : reboot issued',
      'rolling-upgrade session=u1',
      'rolling-upgrade 0f8fad5b-d9cb-469f-a165 : Not responding',
    ]) {
      expect([reason, isUpgradeDrainReason(reason)]).toEqual([reason, false]);
      expect([reason, isOurDrain(wlmNode('a', 'IDLE', ['DRAIN'], { reason }))]).toEqual([reason, false]);
    }
    // Fix 7: RESUME leaves the reason on a node in service; a reason is not a drain.
    expect(isOurDrain(wlmNode('a', 'IDLE', [], { reason: `${OUR_DRAIN} : reboot issued` }))).toBe(false);
    expect(isDrained(wlmNode('a', 'IDLE', [], { reason: OUR_DRAIN }))).toBe(false);
  });

  it("gives an admin's reason back as the admin set it", () => {
    expect(reasonAsSet('bad dimm : reboot issued')).toBe('bad dimm');
    expect(reasonAsSet('bad dimm : reboot issued : Not responding')).toBe('bad dimm');
    expect(reasonAsSet('bad dimm')).toBe('bad dimm');
  });

  it("returns nodes to service: our drain lifted (also from DOWN), an admin's kept with its reason as set", () => {
    const wlm = wlmMap(
      wlmNode('a', 'IDLE', ['DRAIN'], { reason: `${OUR_DRAIN} : reboot issued` }),
      wlmNode('b', 'DOWN', ['DRAIN'], { reason: `${OUR_DRAIN} : Not responding` }),
      wlmNode('c', 'IDLE', ['DRAIN'], { reason: 'bad dimm : reboot issued' }),
      wlmNode('d', 'IDLE', ['DRAIN'], { reason: 'bad dimm' }),
      wlmNode('e', 'ALLOCATED', [], { reason: OUR_DRAIN }),
      wlmNode('f', 'IDLE', ['DRAIN'], { reason: 'ticket #42 : reboot issued' }),
      // An admin's reason that begins with our word but names no run: kept, with its reason as set.
      wlmNode('g', 'IDLE', ['DRAIN'], { reason: 'rolling-upgrade maintenance : reboot issued' }),
    );
    expect(returnToService(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'unknown'], wlm)).toEqual([
      { type: 'resume', nodes: ['a', 'b'] },
      { type: 'drain', nodes: ['c'], reason: 'bad dimm' },
      { type: 'drain', nodes: ['f'], reason: 'ticket #42' },
      { type: 'drain', nodes: ['g'], reason: 'rolling-upgrade maintenance' },
    ]);
    expect(unrestoredReasons(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'unknown'], wlm)).toBeUndefined();
  });

  it("gives back an admin's reason with quotes, `$()`, backticks, `#`, `;` and non-ASCII whole, and says which reason cannot be", () => {
    const hostile = 'ticket #4521 "disk" é; $(id) `id` \'x\'';
    const wlm = wlmMap(
      wlmNode('a', 'IDLE', ['DRAIN'], { reason: `${hostile} : reboot issued` }),
      wlmNode('b', 'IDLE', ['DRAIN'], { reason: '"quoted" : reboot issued' }),
      wlmNode('c', 'IDLE', ['DRAIN'], { reason: 'tab\there : reboot issued' }),
      wlmNode('d', 'IDLE', ['DRAIN'], { reason: `${'x'.repeat(1100)} : reboot issued` }),
    );
    expect(returnToService(['a', 'b', 'c', 'd'], wlm)).toEqual([
      { type: 'drain', nodes: ['a'], reason: hostile },
      { type: 'drain', nodes: ['b'], reason: '"quoted"' },
    ]);
    expect(unrestoredReasons(['a', 'b', 'c', 'd'], wlm)).toBe(
      '2 admin drain reason(s) left as Slurm shows them, with its suffix, as they cannot be sent back whole: ' +
        'c (its reason holds a control character or a newline), d (its reason is longer than 1024 characters)',
    );
  });

  it("finds this run's claim left on nodes it returned to service (Slurm 24.11 keeps it), and nothing else", () => {
    const other = 'rolling-upgrade 0f8fad5b-d9cb-469f-a165-70867728950e : reboot issued';
    const wlm = wlmMap(
      wlmNode('a', 'IDLE', [], { reason: `${OUR_DRAIN} : reboot issued` }),
      wlmNode('b', 'IDLE', ['NOT_RESPONDING'], { reason: OUR_DRAIN }),
      wlmNode('c', 'IDLE', [], { reason: 'bad dimm' }),
      wlmNode('d', 'IDLE', [], { reason: other }),
      wlmNode('e', 'IDLE', ['DRAIN'], { reason: OUR_DRAIN }),
      wlmNode('f', 'DOWN', [], { reason: OUR_DRAIN }),
      wlmNode('g', 'IDLE', ['FAIL'], { reason: OUR_DRAIN }),
      wlmNode('h', 'IDLE', [], { reason: `upgrading-boot-session-failed ${OUR_DRAIN.split(' ')[1]}` }),
      wlmNode('i', 'IDLE', []),
      wlmNode('j', 'ALLOCATED', [], { reason: OUR_DRAIN }),
    );
    expect(claimsLeftInService(session().upgradeId, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'unknown'], wlm)).toEqual(['a', 'b', 'j']);
  });

  it('counts a node quiet only drained with no job, finishing ones included (DRAIN+COMPLETING is draining)', () => {
    expect(isQuiet(wlmNode('a', 'IDLE', ['DRAIN']))).toBe(true);
    expect(isQuiet(wlmNode('a', 'DOWN', ['DRAIN', 'NOT_RESPONDING']))).toBe(true);
    expect(isQuiet(wlmNode('a', 'IDLE', ['DRAIN', 'COMPLETING']))).toBe(false);
    expect(isQuiet(wlmNode('a', 'IDLE', ['COMPLETING', 'DRAIN']))).toBe(false);
    expect(isQuiet(wlmNode('a', 'COMPLETING', ['DRAIN']))).toBe(false);
    expect(isQuiet(wlmNode('a', 'MIXED', ['DRAIN']))).toBe(false);
    expect(isQuiet(wlmNode('a', 'IDLE', []))).toBe(false);
  });

  it('counts a node back once slurmd registered after the boot and answers: idle, busy again, or kept DOWN when drained', () => {
    const at = 5_000;
    const booted = { bootTime: at };
    expect(isBackAfterBoot(wlmNode('a', 'IDLE', ['DRAIN'], booted), at)).toBe(true);
    // It took a job after it came back (something lifted the drain): back, not a timeout.
    expect(isBackAfterBoot(wlmNode('a', 'ALLOCATED', [], booted), at)).toBe(true);
    expect(isBackAfterBoot(wlmNode('a', 'MIXED', [], booted), at)).toBe(true);
    // Kept DOWN after registering (ReturnToService 0/1 after SlurmdTimeout): back when ours or drained, not when an admin set it DOWN.
    expect(isBackAfterBoot(wlmNode('a', 'DOWN', ['DRAIN'], { ...booted, reason: `${OUR_DRAIN} : Not responding` }), at)).toBe(true);
    expect(isBackAfterBoot(wlmNode('a', 'DOWN', [], { ...booted, reason: `${OUR_DRAIN} : Not responding` }), at)).toBe(true);
    expect(isBackAfterBoot(wlmNode('a', 'DOWN', [], { ...booted, reason: 'cable cut' }), at)).toBe(false);
    // Not answering, failed, or its reboot still pending; or booted before the request.
    expect(isBackAfterBoot(wlmNode('a', 'DOWN', ['DRAIN', 'NOT_RESPONDING'], { ...booted, reason: OUR_DRAIN }), at)).toBe(false);
    expect(isBackAfterBoot(wlmNode('a', 'IDLE', ['NOT_RESPONDING'], booted), at)).toBe(false);
    expect(isBackAfterBoot(wlmNode('a', 'IDLE', ['FAIL'], booted), at)).toBe(false);
    expect(isBackAfterBoot(wlmNode('a', 'IDLE', ['DRAIN', 'REBOOT_REQUESTED'], booted), at)).toBe(false);
    expect(isBackAfterBoot(wlmNode('a', 'IDLE', [], { bootTime: at - 1 }), at)).toBe(false);
    expect(isBackAfterBoot(wlmNode('a', 'IDLE', []), at)).toBe(false);
  });

  it('fails nothing for no nodes', () => {
    expect(failNodes(session(), [], 'upgrading-time-out-booting', wlmMap())).toEqual([]);
  });
});
