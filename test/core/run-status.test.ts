import { ENDED_RUN_STATUSES, RUN_CANCEL, RUN_RESUME, RUN_STOP, type RunStatus } from '../../core/run-status';
import { RESUME_CARRIES_ON } from '../../core/session-control';

const ALL_STATUSES: readonly RunStatus[] = ['RUNNING', 'CANCELLING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPING', 'STOPPED'];

describe('run statuses of a deployment and a task run (the rules their stores apply)', () => {
  it('a run has ended in SUCCEEDED, FAILED or CANCELLED: only those a removal takes', () => {
    expect(ENDED_RUN_STATUSES).toEqual(['SUCCEEDED', 'FAILED', 'CANCELLED']);
  });

  it('a cancel is taken in every status but an end (a stopped run too: its resume winds it down), and turns it CANCELLING', () => {
    expect(ALL_STATUSES.filter((status) => (RUN_CANCEL.from as readonly RunStatus[]).includes(status))).toEqual([
      'RUNNING',
      'CANCELLING',
      'STOPPING',
      'STOPPED',
    ]);
    expect(RUN_CANCEL.to).toBe('CANCELLING');
    // Cancellable and ended together are every status: a refused cancel always names an end.
    expect([...RUN_CANCEL.from, ...ENDED_RUN_STATUSES].sort()).toEqual([...ALL_STATUSES].sort());
  });

  it('a stop is taken while the run runs (again while stopping) and turns it STOPPING', () => {
    expect(RUN_STOP.from).toEqual(['RUNNING', 'STOPPING']);
    expect(RUN_STOP.to).toBe('STOPPING');
  });

  it("a person's resume carries on a stopping or stopped run: RUNNING again", () => {
    expect(RUN_RESUME.from).toEqual(RESUME_CARRIES_ON);
    expect(RUN_RESUME.to).toBe('RUNNING');
  });
});
