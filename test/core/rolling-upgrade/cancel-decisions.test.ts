import { cancelChunk, cancelSwitchesAt, decideCancel, decideCancelRequested, decideCleanUp } from '../../../core/rolling-upgrade/cancel-decisions';
import { NOW, node, OUR_DRAIN, progress, RUN_ID, session, wlmMap, wlmNode } from '../../support/upgrade-sessions';

describe('a cancel seen by a stage', () => {
  it('switches to the delete sequence by CRUS rules, keeping the boot session name', () => {
    const early = decideCancelRequested({ stepCount: 3 }, 'QUIESCING', progress({ stage: 'QUIESCING' }), NOW);
    expect(early.progress).toEqual({ step: 0, stage: 'CANCELLING', stageStartedAt: NOW, errorCount: 0, cancelMode: 'resume-step' });
    expect(early.message).toBe('Session deleted at step 1 of 3 in stage QUIESCING');
    const booting = decideCancelRequested({ stepCount: 3 }, 'BOOTING', progress({ stage: 'BOOTING', step: 1, bootSessionName: 'b-1' }), NOW);
    expect(booting.progress).toMatchObject({ stage: 'CANCELLING', cancelMode: 'fail-remaining', bootSessionName: 'b-1' });
    expect(booting.message).toBe('Session deleted at step 2 of 3 in stage BOOTING');
  });

  it('only while the session is DELETING and not yet in the delete sequence', () => {
    expect(cancelSwitchesAt(session({ state: 'DELETING' }), 'BOOTED')).toBe(true);
    expect(cancelSwitchesAt(session({ state: 'DELETING' }), 'CANCELLING')).toBe(false);
    expect(cancelSwitchesAt(session({ state: 'DELETING' }), 'CLEANUP')).toBe(false);
    expect(cancelSwitchesAt(session({ state: 'UPDATING' }), 'BOOTED')).toBe(false);
  });
});

describe('CANCELLING', () => {
  const step = [node('n0', 0), node('n1', 1)];

  it("before booting step 0 lifts only our drain: an admin's drain stays, with its reason", () => {
    const wlm = wlmMap(wlmNode('n0', 'IDLE', ['DRAIN'], { reason: OUR_DRAIN }), wlmNode('n1', 'IDLE', ['DRAIN'], { reason: 'bad dimm' }));
    const d = decideCancel({
      session: session({ state: 'DELETING' }),
      progress: progress({ stage: 'CANCELLING', cancelMode: 'resume-step' }),
      nodes: step,
      observed: { wlm, chunk: { from: 0, to: 2 } },
      now: NOW,
    });
    expect(d.actions).toEqual([
      { type: 'resume', nodes: ['n0'] },
      { type: 'recordNodes', records: step.map((n) => ({ name: n.name, index: n.index, status: 'NOT_STARTED' })) },
      { type: 'releaseLocks', nodes: ['n0', 'n1'] },
    ]);
    expect(d).toMatchObject({ progress: { stage: 'CLEANUP' }, message: 'Cancelled before booting step 1 of 2: 2 node(s) resumed, none failed' });
  });

  it('otherwise fails the remaining nodes a chunk at a time, then cleans up', () => {
    const s = session({ state: 'DELETING', nodeCount: 4 });
    const cancelling = progress({ stage: 'CANCELLING', cancelMode: 'fail-remaining', step: 0 });
    expect(cancelChunk(s, cancelling, 3)).toEqual({ from: 0, to: 3 });
    const first = decideCancel({
      session: s,
      progress: cancelling,
      nodes: [node('n0', 0), node('n1', 1), node('n2', 2)],
      observed: { wlm: wlmMap(wlmNode('n0', 'IDLE')), chunk: { from: 0, to: 3 } },
      now: NOW,
    });
    expect(first.progress).toEqual({ ...cancelling, cancelCursor: 3 });
    expect(first.message).toBe('Cancelled: 3 node(s) at plan positions 0-2 failed');
    expect(first.actions[0]).toEqual({
      type: 'fail',
      nodes: ['n0'],
      reason: 'upgrade-session-deleted-before-completion',
      siteReason: `upgrade-session-deleted-before-completion ${RUN_ID}`,
    });

    expect(cancelChunk(s, first.progress, 3)).toEqual({ from: 3, to: 4 });
    const last = decideCancel({ session: s, progress: first.progress, nodes: [], observed: { wlm: wlmMap(), chunk: { from: 3, to: 4 } }, now: NOW });
    expect(last).toEqual({ progress: { step: 0, stage: 'CLEANUP', stageStartedAt: NOW, errorCount: 0 }, waitSeconds: 0, actions: [] });
  });
});

describe('CLEANUP', () => {
  it('empties the upgrading group, releases the step locks and closes the session READY', () => {
    const d = decideCleanUp({
      session: session(),
      progress: progress({ stage: 'CLEANUP', counts: { upgraded: 3, failed: 1 } }),
      nodes: [node('n0', 0)],
      observed: { upgradingMembers: ['n0'] },
      now: NOW,
    });
    expect(d.actions).toEqual([
      { type: 'removeFromGroup', label: 'upgrading', nodes: ['n0'] },
      { type: 'releaseLocks', nodes: ['n0'] },
      { type: 'closeSession', state: 'READY', completed: true },
    ]);
    expect(d).toMatchObject({ progress: { stage: 'COMPLETE' }, message: 'Upgrade Session Completed' });
  });

  it('closes a session that upgraded and failed nothing (every node left alone) not completed, saying why', () => {
    const d = decideCleanUp({
      session: session(),
      progress: progress({ stage: 'CLEANUP', counts: { upgraded: 0, failed: 0 } }),
      nodes: [],
      observed: { upgradingMembers: [] },
      now: NOW,
    });
    expect(d.actions).toEqual([{ type: 'closeSession', state: 'READY', completed: false }]);
    expect(d.message).toBe(
      "Upgrade Session Not Completed: none of its 4 node(s) was upgraded or failed: every node was left alone (each node's reason says why)",
    );
    // One node failed is a run that did something: completed, as CRUS counts failed nodes.
    const one = decideCleanUp({
      session: session(),
      progress: progress({ stage: 'CLEANUP', counts: { upgraded: 0, failed: 1 } }),
      nodes: [],
      observed: { upgradingMembers: [] },
      now: NOW,
    });
    expect(one.actions).toEqual([{ type: 'closeSession', state: 'READY', completed: true }]);
  });

  it('closes a cancelled session DELETED, not completed', () => {
    const d = decideCleanUp({
      session: session({ state: 'DELETING' }),
      progress: progress({ stage: 'CLEANUP' }),
      nodes: [],
      observed: { upgradingMembers: [] },
      now: NOW,
    });
    expect(d.actions).toEqual([{ type: 'closeSession', state: 'DELETED', completed: false }]);
    expect(d.message).toBe('Upgrade Session Deleted');
  });
});
