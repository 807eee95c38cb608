import { formatDuration, formatOffset, formatRunInstant, formatShownInstant, formatWallInstant, isSimulatedInstant, showInstant } from '../../core/time-format';

describe('time-format', () => {
  describe('formatDuration', () => {
    it('words hours and minutes, minutes and seconds, or seconds', () => {
      expect(formatDuration(5760)).toBe('1h 36m');
      expect(formatDuration(360)).toBe('6m 0s');
      expect(formatDuration(45)).toBe('45s');
      expect(formatDuration(0)).toBe('0s');
      expect(formatDuration(26 * 3600 + 5 * 60)).toBe('26h 5m');
    });

    it('rounds once, to the whole second', () => {
      expect(formatDuration(1799.9)).toBe('30m 0s');
      expect(formatDuration(59.6)).toBe('1m 0s');
      expect(formatDuration(-0.2)).toBe('0s');
      expect(formatDuration(-90)).toBe('-1m 30s');
    });
  });

  it('formatOffset signs an offset from the start', () => {
    expect(formatOffset(5760)).toBe('+1h 36m');
    expect(formatOffset(0)).toBe('+0s');
    expect(formatOffset(-7)).toBe('-7s');
  });

  it('formatWallInstant gives the date to the second', () => {
    expect(formatWallInstant('2026-03-04T09:30:00.123Z')).toBe('2026-03-04 09:30:00Z');
    expect(formatWallInstant(Date.UTC(2026, 0, 1))).toBe('2026-01-01 00:00:00Z');
  });

  describe('showInstant', () => {
    const startedAt = '2026-01-01T00:00:00.000Z';
    it('keeps a wall-clock instant an ISO date', () => {
      expect(showInstant('2026-01-01T01:36:00.000Z', { timeBase: 'wall-clock', startedAt })).toBe('2026-01-01T01:36:00.000Z');
    });

    it('gives a simulated instant as seconds from the start, never a date', () => {
      const shown = showInstant('2026-01-01T01:36:00.250Z', { timeBase: 'simulated', startedAt });
      expect(shown).toEqual({ secondsFromStart: 5760.25, timeBase: 'simulated' });
      expect(isSimulatedInstant(shown)).toBe(true);
      expect(isSimulatedInstant('2026-01-01T01:36:00.000Z')).toBe(false);
      expect(formatShownInstant(shown)).toBe('+1h 36m (simulated)');
      expect(formatRunInstant('2026-01-01T00:06:00.000Z', { timeBase: 'simulated', startedAt })).toBe('+6m 0s (simulated)');
      expect(formatRunInstant('2026-01-01T00:06:00.000Z', { timeBase: 'wall-clock', startedAt })).toBe('2026-01-01 00:06:00Z');
    });
  });
});
