import type { NodeRecord } from './session';

/**
 * A node's phase as an operator reads it: where it is in its upgrade, from its record (the live view
 * of `rollout session get`, `--json`, the REST API and the HTML report).
 */
export const LIVE_PHASES = [
  'waiting',
  'draining',
  'draining ahead',
  'quiet',
  'booting',
  'returning',
  'checking',
  'back',
  'failed',
  'not started',
  'left alone',
  'lock lost',
] as const;
export type LivePhase = (typeof LIVE_PHASES)[number];

/** `ended`: the session is over (a node still waiting then was never started). */
export function livePhase(record: Pick<NodeRecord, 'status' | 'phase' | 'reason' | 'op'> | undefined, ended: boolean): LivePhase {
  if (!record || record.status === 'NOT_STARTED') {
    if (record?.reason?.startsWith('left alone')) return 'left alone';
    return ended ? 'not started' : 'waiting';
  }
  if (record.status === 'UPGRADED') return 'back';
  if (record.status === 'FAILED') return 'failed';
  switch (record.phase) {
    case 'LOCK_LOST':
      return 'lock lost';
    case 'QUIESCED':
      return 'quiet';
    case 'BOOTING':
      return 'booting';
    case 'BOOTED':
      return 'returning';
    case 'CHECKING':
      return 'checking';
    default:
      return record.op?.holdsSlot === false ? 'draining ahead' : 'draining';
  }
}

/** When the node entered the phase it is in (epoch ms), where its record tells. */
export function livePhaseSince(record: Pick<NodeRecord, 'status' | 'phase' | 'phaseTimes'> | undefined): number | undefined {
  if (!record?.phaseTimes) return undefined;
  if (record.status === 'UPGRADED' || record.status === 'FAILED') return record.phaseTimes.DONE ?? (record.phase ? record.phaseTimes[record.phase] : undefined);
  return record.phase ? record.phaseTimes[record.phase] : undefined;
}

/**
 * When the node was out of service, from its phase times: from the moment it was quiet (drained, no
 * job) or its reboot was asked for, until it was back or failed (absent: still out, or never was).
 */
export function outOfService(record: Pick<NodeRecord, 'phaseTimes'>): { from: number; to?: number } | undefined {
  const times = record.phaseTimes;
  const from = times?.QUIESCED ?? times?.BOOTING;
  if (from === undefined) return undefined;
  return times?.DONE !== undefined ? { from, to: times.DONE } : { from };
}
