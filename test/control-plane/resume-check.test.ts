import { SessionStillRunningError } from '../../core/errors';
import { refuseResumeWhileRunning } from '../../control-plane/resume-check';
import type { SessionKind, SessionStatus } from '../../control-plane/runtime';

/** The one check every client's resume asks before starting an execution (control-plane/resume-check.ts, asked by ControlPlane.resume). */
describe('refuseResumeWhileRunning', () => {
  /** The check, as a promise (the tests read its refusal). */
  const check = (running: boolean, status: SessionStatus | undefined, kind: SessionKind, id: string) =>
    Promise.resolve().then(() => refuseResumeWhileRunning(kind, id, running, status));

  it('refuses a run an execution still runs, naming its state: a running one says how to stop it, a stopping one to resume once STOPPED', async () => {
    const running = check(true, { kind: 'upgrade', state: 'UPDATING', ended: false }, 'upgrade', 'u1');
    await expect(running).rejects.toBeInstanceOf(SessionStillRunningError);
    await expect(running).rejects.toThrow(
      "upgrade 'u1' is still running (UPDATING): an execution works on it, and a resume would start a second one; nothing was resumed. To stop it: rollout session stop 'u1', then resume it once it is STOPPED",
    );
    await expect(check(true, { kind: 'deployment', state: 'STOPPING', ended: false }, 'deployment', 'd1')).rejects.toThrow(
      "deployment 'd1' is still running (STOPPING): its execution is finishing the stop; nothing was resumed. Resume it once it is STOPPED (rollout session watch 'd1' follows it)",
    );
    await expect(check(true, { kind: 'tasks', state: 'RUNNING', ended: false }, 'tasks', 't1')).rejects.toMatchObject({
      name: 'SessionStillRunningError',
      kind: 'tasks',
      id: 't1',
      state: 'RUNNING',
    });
  });

  it('lets the resume go ahead when nothing runs the run, or its execution is ending (its end state stored: STOPPED)', async () => {
    await expect(check(false, { kind: 'upgrade', state: 'STOPPING', ended: false }, 'upgrade', 'u1')).resolves.toBeUndefined();
    await expect(check(true, { kind: 'tasks', state: 'STOPPED', ended: true }, 'tasks', 't1')).resolves.toBeUndefined();
  });
});
