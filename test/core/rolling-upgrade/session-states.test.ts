import { isSessionCancellable, isSessionEnded, isSessionSettled, SESSION_CANCEL, SESSION_STOP, type SessionState } from '../../../core/rolling-upgrade/session';

const ALL_STATES: readonly SessionState[] = ['UPDATING', 'READY', 'DELETING', 'DELETED', 'HALTED', 'STOPPING', 'STOPPED'];
const where = (test: (state: SessionState) => boolean) => ALL_STATES.filter(test);

describe('session states (the rules the store, the API and the reads apply)', () => {
  it('a session has ended in READY, DELETED or HALTED: only those a DELETE removes', () => {
    expect(where(isSessionEnded)).toEqual(['READY', 'DELETED', 'HALTED']);
  });

  it('a STOPPED session is settled (no execution works on it) but has not ended (a resume carries it on)', () => {
    expect(where(isSessionSettled)).toEqual(['READY', 'DELETED', 'HALTED', 'STOPPED']);
    expect(isSessionEnded('STOPPED')).toBe(false);
  });

  it('a cancel is taken while the session runs, stops or is stopped, and turns it DELETING', () => {
    expect(where(isSessionCancellable)).toEqual(['UPDATING', 'STOPPING', 'STOPPED']);
    expect(SESSION_CANCEL.to).toBe('DELETING');
    expect(ALL_STATES.filter(isSessionEnded).some(isSessionCancellable)).toBe(false);
  });

  it('a stop is taken while the session runs (again while stopping) and turns it STOPPING', () => {
    expect(SESSION_STOP.from).toEqual(['UPDATING', 'STOPPING']);
    expect(SESSION_STOP.to).toBe('STOPPING');
  });
});
