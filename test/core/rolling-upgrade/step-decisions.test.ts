import { EmptyBootSessionError, SiteServiceError, UnknownNodesError } from '../../../core/errors';
import type { BootSessionStatus } from '../../../core/site/site-nodes';
import {
  bootSessionName,
  decideBootStep,
  decideCheckBoot,
  decideEvaluateBoot,
  decideQuiesce,
  decideReturnToService,
  decideStartStep,
} from '../../../core/rolling-upgrade/step-decisions';
import { NOW, node, OUR_DRAIN, progress, RUN_ID, session, wlmMap, wlmNode } from '../../support/upgrade-sessions';

const STEP = [node('n0', 0, 'NOT_STARTED'), node('n1', 1, 'NOT_STARTED')];

describe('STARTING', () => {
  const observed = (wlm = wlmMap(wlmNode('n0', 'IDLE'), wlmNode('n1', 'ALLOCATED'))) => ({
    failedMembers: [] as string[],
    heldByOthers: new Map<string, string>(),
    wlm,
  });

  it('drains the locked step and records it DRAINING', () => {
    const d = decideStartStep({ session: session(), progress: progress(), nodes: STEP, observed: observed(), now: NOW });
    expect(d.progress).toEqual({ step: 0, stage: 'QUIESCING', stageStartedAt: NOW, errorCount: 0 });
    expect(d.actions).toEqual([
      { type: 'drain', nodes: ['n0', 'n1'], reason: `rolling-upgrade ${RUN_ID}` },
      { type: 'recordNodes', records: STEP.map((n) => ({ name: n.name, index: n.index, status: 'IN_PROGRESS', phase: 'DRAINING' })) },
    ]);
    expect(d.message).toBe('Step 1 of 2: draining 2 node(s): n0, n1');
  });

  it("keeps an admin's drain and its reason: a drained node is drained already", () => {
    const wlm = wlmMap(wlmNode('n0', 'IDLE', ['DRAIN'], { reason: 'bad dimm' }), wlmNode('n1', 'IDLE', ['DRAIN'], { reason: OUR_DRAIN }));
    const d = decideStartStep({ session: session(), progress: progress(), nodes: STEP, observed: observed(wlm), now: NOW });
    expect(d.actions.filter((a) => a.type === 'drain')).toEqual([]);
    expect(d.progress.stage).toBe('QUIESCING');
  });

  it('empties the failed group at step 0 only', () => {
    const at = (step: number) =>
      decideStartStep({
        session: session(),
        progress: progress({ step }),
        nodes: STEP,
        observed: { ...observed(), failedMembers: ['x9'] },
        now: NOW,
      }).actions.filter((a) => a.type === 'removeFromGroup');
    expect(at(0)).toEqual([{ type: 'removeFromGroup', label: 'failed', nodes: ['x9'] }]);
    expect(at(1)).toEqual([]);
  });

  it('waits for nodes locked by another session and says so at each poll', () => {
    const held = { ...observed(), heldByOthers: new Map([['n1', 'other']]) };
    const first = decideStartStep({ session: session(), progress: progress(), nodes: STEP, observed: held, now: NOW });
    expect(first).toMatchObject({ waitSeconds: 30, actions: [], message: 'Step 1 of 2 waits for nodes locked by session other: n1' });
    expect(first.progress.lockWaitSince).toBe(NOW);
    const again = decideStartStep({ session: session(), progress: first.progress, nodes: STEP, observed: held, now: NOW + 30_000 });
    expect(again).toEqual({ progress: first.progress, waitSeconds: 30, actions: [], message: 'Step 1 of 2 waits for nodes locked by session other: n1' });
  });

  it('refuses nodes the workload manager does not know, touching none', () => {
    const d = decideStartStep({ session: session(), progress: progress(), nodes: STEP, observed: observed(wlmMap(wlmNode('n0', 'IDLE'))), now: NOW });
    expect(d.error).toBeInstanceOf(UnknownNodesError);
    expect(d.error).toMatchObject({ name: 'UnknownNodesError', nodes: ['n1'] });
    expect(d.actions).toEqual([]);
  });

  it('goes to CLEANUP past the last step, and on at once from an empty step', () => {
    const past = decideStartStep({ session: session(), progress: progress({ step: 2 }), nodes: [], observed: observed(), now: NOW });
    expect(past).toMatchObject({ progress: { stage: 'CLEANUP', step: 2 }, message: 'No nodes left to upgrade' });
    const empty = decideStartStep({ session: session(), progress: progress({ step: 1 }), nodes: [], observed: observed(), now: NOW });
    expect(empty).toMatchObject({ progress: { stage: 'STARTING', step: 2 }, waitSeconds: 0, actions: [] });
  });
});

describe('QUIESCING', () => {
  const quiet = (name: string) => wlmNode(name, 'IDLE', ['DRAIN'], { reason: OUR_DRAIN });

  it('moves on once every node is drained of jobs', () => {
    const d = decideQuiesce({
      session: session(),
      progress: progress({ stage: 'QUIESCING' }),
      nodes: STEP,
      observed: { wlm: wlmMap(quiet('n0'), quiet('n1')) },
      now: NOW,
    });
    // The live view: each node is recorded quiet (the time is stamped when the record is written).
    expect(d).toMatchObject({ progress: { stage: 'QUIESCED' }, message: 'Step 1 of 2: 2 node(s) quiesced' });
    expect(d.actions).toEqual([
      { type: 'recordNodes', records: STEP.map((n) => ({ name: n.name, index: n.index, status: 'IN_PROGRESS', phase: 'QUIESCED' })) },
    ]);
  });

  it('polls while a job runs (a wait for the site, never past the quiesce timeout), and fails the busy node past the timeout', () => {
    const wlm = wlmMap(quiet('n0'), wlmNode('n1', 'ALLOCATED', ['DRAIN'], { reason: OUR_DRAIN }));
    const start = progress({ stage: 'QUIESCING', stageStartedAt: NOW });
    // While n1 runs its job, n0 is recorded quiet (once: a record already QUIESCED is not written again).
    const quietN0 = { type: 'recordNodes', records: [{ name: 'n0', index: 0, status: 'IN_PROGRESS', phase: 'QUIESCED' }] };
    expect(decideQuiesce({ session: session(), progress: start, nodes: STEP, observed: { wlm }, now: NOW + 99_000 })).toEqual({
      progress: start,
      waitSeconds: 30,
      actions: [quietN0],
      // Resumed by a `drained` firing when the site's triggers are armed; the quiesce timeout (100 s) runs out in 1 s.
      siteWait: { recheckSeconds: 1, quiesce: true },
    });
    expect(decideQuiesce({ session: session(), progress: start, nodes: STEP, observed: { wlm }, now: NOW + 40_000 }).siteWait).toEqual({
      recheckSeconds: 60,
      quiesce: true,
    });
    const recorded = STEP.map((n) => (n.name === 'n0' ? { ...n, status: 'IN_PROGRESS' as const, phase: 'QUIESCED' as const } : n));
    expect(decideQuiesce({ session: session(), progress: start, nodes: recorded, observed: { wlm }, now: NOW + 99_000 }).actions).toEqual([]);
    const late = decideQuiesce({ session: session(), progress: start, nodes: STEP, observed: { wlm }, now: NOW + 100_000 });
    expect(late.progress.stage).toBe('QUIESCED');
    expect(late.message).toBe('Step 1 of 2: 1 node(s) still busy after 100 s failed: n1');
    expect(late.actions).toEqual([
      quietN0,
      { type: 'fail', nodes: ['n1'], reason: 'upgrading-time-out-quiescing', siteReason: `upgrading-time-out-quiescing ${RUN_ID}` },
      { type: 'addToGroup', label: 'failed', nodes: ['n1'] },
      { type: 'recordNodes', records: [{ name: 'n1', index: 1, status: 'FAILED', phase: 'DONE', reason: 'upgrading-time-out-quiescing' }] },
      { type: 'releaseLocks', nodes: ['n1'] },
    ]);
  });

  it('does not fail again a node already failed with that reason, and goes to the next step when all failed', () => {
    const failedAlready = wlmNode('n0', 'MIXED', ['DRAIN', 'FAIL'], { reason: 'upgrading-time-out-quiescing' });
    const d = decideQuiesce({
      session: session(),
      progress: progress({ stage: 'QUIESCING', stageStartedAt: 0 }),
      nodes: [STEP[0]!],
      observed: { wlm: wlmMap(failedAlready) },
      now: NOW,
    });
    expect(d.actions.some((a) => a.type === 'fail')).toBe(false);
    expect(d.progress).toMatchObject({ stage: 'STARTING', step: 1 });
  });
});

describe('QUIESCED', () => {
  it('saves the boot time before booting, replaces strangers in the upgrading group and boots the step', () => {
    const d = decideBootStep({
      session: session(),
      progress: progress({ stage: 'QUIESCED' }),
      nodes: STEP,
      observed: { upgradingMembers: ['x9', 'n0'] },
      now: NOW,
    });
    const name = bootSessionName(RUN_ID, 0);
    expect(d.actions.map((a) => a.type)).toEqual(['saveProgress', 'removeFromGroup', 'addToGroup', 'startBoot', 'recordNodes']);
    expect(d.actions[0]).toMatchObject({ progress: { stage: 'QUIESCED', bootRequestedAt: NOW, bootSessionName: name } });
    expect(d.actions[1]).toEqual({ type: 'removeFromGroup', label: 'upgrading', nodes: ['x9'] });
    expect(d.actions[3]).toEqual({ type: 'startBoot', name, template: 'image-2', limit: { label: 'upgrading' } });
    expect(d.progress).toMatchObject({ stage: 'BOOTING', bootRequestedAt: NOW, bootSessionName: name });
    expect(d.message).toBe(`Step 1 of 2: boot session ${name} started for 2 node(s) with template image-2`);
  });

  it('after a crash reuses the saved boot time and name (the same boot session is found again)', () => {
    const saved = progress({ stage: 'QUIESCED', bootRequestedAt: NOW - 5, bootSessionName: 'b-0' });
    const d = decideBootStep({ session: session(), progress: saved, nodes: STEP, observed: { upgradingMembers: ['n0', 'n1'] }, now: NOW });
    expect(d.actions.map((a) => a.type)).toEqual(['addToGroup', 'startBoot', 'recordNodes']);
    expect(d.progress).toMatchObject({ bootRequestedAt: NOW - 5, bootSessionName: 'b-0' });
  });
});

describe('BOOTING and BOOTED', () => {
  const booting = progress({ stage: 'BOOTING', stageStartedAt: NOW, bootRequestedAt: NOW, bootSessionName: 'b-0' });
  const boot = (status: BootSessionStatus['status'], nodes: BootSessionStatus['nodes'], error?: string): BootSessionStatus => ({
    name: 'b-0',
    status,
    nodes,
    ...(error ? { error } : {}),
  });

  it('polls a running boot, and moves on when complete or past the boot timeout', () => {
    const running = boot('running', { n0: 'booting' });
    expect(decideCheckBoot({ session: session(), progress: booting, nodes: [], observed: { boot: running }, now: NOW + 1000 }).waitSeconds).toBe(30);
    const late = decideCheckBoot({ session: session(), progress: booting, nodes: [], observed: { boot: running }, now: NOW + 200_000 });
    expect(late).toMatchObject({
      progress: { stage: 'BOOTED', bootFinishedAt: NOW + 200_000 },
      message: 'Step 1 of 2: boot session b-0 did not finish within 200 s',
    });
    const done = decideCheckBoot({ session: session(), progress: booting, nodes: [], observed: { boot: boot('complete', {}) }, now: NOW });
    expect(done.message).toBe('Step 1 of 2: boot session b-0 complete');
  });

  it('reports an unknown boot session as a retryable site error', () => {
    const d = decideCheckBoot({ session: session(), progress: booting, nodes: [], observed: { boot: undefined }, now: NOW });
    expect(d.error).toBeInstanceOf(SiteServiceError);
    expect(d.error!.message).toBe('boot-service: boot session b-0 is not known to the boot service');
  });

  it('judges each node by its own boot outcome', () => {
    const nodes = [node('n0', 0), node('n1', 1), node('n2', 2)];
    const wlm = wlmMap(wlmNode('n0', 'IDLE'), wlmNode('n1', 'DOWN'), wlmNode('n2', 'DOWN'));
    const d = decideEvaluateBoot({
      session: session({ upgradeStepSize: 3 }),
      progress: { ...booting, stage: 'BOOTED', bootFinishedAt: NOW },
      nodes,
      observed: { boot: boot('complete', { n0: 'succeeded', n1: 'failed', n2: 'booting' }), wlm },
      now: NOW,
    });
    expect(d.progress).toMatchObject({ stage: 'WLM_WAITING', bootFinishedAt: NOW });
    expect(d.message).toBe('Step 1 of 2: 1 node(s) booted, 2 failed to boot: n1, n2');
    expect(d.actions.filter((a) => a.type === 'fail')).toEqual([
      { type: 'fail', nodes: ['n1'], reason: 'upgrading-boot-session-failed', siteReason: `upgrading-boot-session-failed ${RUN_ID}` },
      { type: 'fail', nodes: ['n2'], reason: 'upgrading-time-out-booting', siteReason: `upgrading-time-out-booting ${RUN_ID}` },
    ]);
    expect(d.actions.at(-1)).toEqual({ type: 'recordNodes', records: [{ name: 'n0', index: 0, status: 'IN_PROGRESS', phase: 'BOOTED' }] });
  });

  it('fails every node of a boot session that failed as a whole and goes to the next step', () => {
    const d = decideEvaluateBoot({
      session: session(),
      progress: { ...booting, stage: 'BOOTED' },
      nodes: STEP,
      observed: { boot: boot('complete', { n0: 'succeeded', n1: 'succeeded' }, 'template vanished'), wlm: wlmMap() },
      now: NOW,
    });
    expect(d.progress).toMatchObject({ stage: 'STARTING', step: 1 });
    expect(d.message).toBe('Step 1 of 2: 0 node(s) booted, 2 failed to boot: n0, n1 (boot session error: template vanished)');
    // Nodes the workload manager does not know are recorded failed, not failed in it.
    expect(d.actions.some((a) => a.type === 'fail')).toBe(false);
  });

  it('makes a boot session that acted upon no node an error of the run, failing none of the step', () => {
    const d = decideEvaluateBoot({
      session: session(),
      progress: { ...booting, stage: 'BOOTED' },
      nodes: STEP,
      observed: { boot: boot('complete', {}, 'No nodes were found to act upon.'), wlm: wlmMap() },
      now: NOW,
    });
    expect(d.actions).toEqual([]);
    expect(d.progress).toMatchObject({ stage: 'BOOTED', step: 0 });
    expect(d.error).toBeInstanceOf(EmptyBootSessionError);
    expect(d.error!.message).toMatch(/boot session b-0 would reboot no node: the boot service says: No nodes were found to act upon/);
  });
});

describe('WLM_WAITING', () => {
  it('lifts only our drain: a node an admin drained is upgraded and stays drained', () => {
    const admin = wlmNode('n1', 'IDLE', ['DRAIN'], { bootTime: NOW, reason: 'bad dimm' });
    const d = decideReturnToService({ session: session(), progress: waiting, nodes: STEP, observed: { wlm: wlmMap(back('n0', ['DRAIN']), admin) }, now: NOW });
    expect(d.actions.filter((a) => a.type === 'resume')).toEqual([{ type: 'resume', nodes: ['n0'] }]);
    expect(d.progress).toMatchObject({ stage: 'STARTING', step: 1 });
  });

  const waiting = progress({ stage: 'WLM_WAITING', stageStartedAt: NOW, bootRequestedAt: NOW - 10, bootFinishedAt: NOW });
  // Back after the boot, still carrying our drain (or none).
  const back = (name: string, flags: string[] = []) =>
    wlmNode(name, 'IDLE', flags, { bootTime: NOW, ...(flags.includes('DRAIN') ? { reason: OUR_DRAIN } : {}) });

  it('resumes the drained nodes that really rebooted, counts them upgraded and waits for the rest', () => {
    const wlm = wlmMap(back('n0', ['DRAIN']), wlmNode('n1', 'IDLE', ['DRAIN'], { bootTime: NOW - 60_000 }));
    const d = decideReturnToService({ session: session(), progress: waiting, nodes: STEP, observed: { wlm }, now: NOW + 1000 });
    expect(d).toMatchObject({ progress: waiting, waitSeconds: 30, message: 'Step 1 of 2: 1 node(s) back in service: n0' });
    expect(d.actions).toEqual([
      { type: 'resume', nodes: ['n0'] },
      { type: 'recordNodes', records: [{ name: 'n0', index: 0, status: 'UPGRADED', phase: 'DONE' }] },
      { type: 'releaseLocks', nodes: ['n0'] },
    ]);
  });

  it('does not resume a node that came back undrained', () => {
    const d = decideReturnToService({ session: session(), progress: waiting, nodes: STEP, observed: { wlm: wlmMap(back('n0'), back('n1')) }, now: NOW });
    expect(d.actions.some((a) => a.type === 'resume')).toBe(false);
    expect(d.progress).toMatchObject({ stage: 'STARTING', step: 1 });
  });

  it("waits for a health check in flight as for a command's end (commandEnd), never past the check's own timeout nor the return's", () => {
    const checked = session({ healthCheck: { command: 'ssh {node} nhc', timeoutSeconds: 120 } });
    const checking = { ...node('n0', 0, 'IN_PROGRESS'), phase: 'CHECKING' as const, check: { id: 'c0', startedAt: NOW - 20_000 } };
    const notBack = wlmNode('n1', 'DOWN');
    const both = decideReturnToService({
      session: checked,
      progress: waiting,
      nodes: [checking, STEP[1]!],
      observed: { wlm: wlmMap(back('n0', ['DRAIN']), notBack), checks: new Map([['n0', { state: 'running' as const }]]) },
      now: NOW + 1000,
    });
    // The check gives up 100 s from now, the return 299 s: the first bounds the wait; n1 is waited for after its boot.
    expect(both.siteWait).toEqual({ recheckSeconds: 99, afterBoot: true, commandEnd: true });
    // A check started now (n0 back, none yet): its whole timeout; nothing waits for a node's boot any more.
    const starting = decideReturnToService({
      session: checked,
      progress: waiting,
      nodes: [node('n0', 0, 'IN_PROGRESS')],
      observed: { wlm: wlmMap(back('n0', ['DRAIN'])) },
      now: NOW + 1000,
    });
    expect(starting.actions.map((a) => a.type)).toEqual(['startHealthChecks']);
    expect(starting.siteWait).toEqual({ recheckSeconds: 120, commandEnd: true });
    // Past the return timeout, n1 failed: the step waits for the check alone.
    const late = decideReturnToService({
      session: checked,
      progress: waiting,
      nodes: [{ ...checking, check: { id: 'c0', startedAt: NOW + 250_000 } }, STEP[1]!],
      observed: { wlm: wlmMap(back('n0', ['DRAIN']), notBack), checks: new Map([['n0', { state: 'running' as const }]]) },
      now: NOW + 300_000,
    });
    expect(late.actions.some((a) => a.type === 'fail')).toBe(true);
    expect(late.siteWait).toEqual({ recheckSeconds: 70, commandEnd: true });
    // Without a check in flight, the wait is the nodes' alone, as before.
    const plain = decideReturnToService({
      session: session(),
      progress: waiting,
      nodes: STEP,
      observed: { wlm: wlmMap(back('n0'), notBack) },
      now: NOW + 1000,
    });
    expect(plain.siteWait).toEqual({ recheckSeconds: 299, afterBoot: true });
  });

  it('fails the nodes that did not return within the timeout', () => {
    const d = decideReturnToService({
      session: session(),
      progress: waiting,
      nodes: STEP,
      observed: { wlm: wlmMap(back('n0'), wlmNode('n1', 'DOWN')) },
      now: NOW + 300_000,
    });
    expect(d.message).toBe('Step 1 of 2: 1 node(s) back in service: n0; 1 node(s) did not return within 300 s: n1');
    expect(d.actions).toContainEqual({
      type: 'fail',
      nodes: ['n1'],
      reason: 'upgrading-time-out-wlm-waiting',
      siteReason: `upgrading-time-out-wlm-waiting ${RUN_ID}`,
    });
    expect(d.progress).toMatchObject({ stage: 'STARTING', step: 1 });
  });
});
