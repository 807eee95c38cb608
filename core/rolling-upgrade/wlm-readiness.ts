import type { WlmNode } from '../site/site-nodes';
import { isUpgradeDrainReason } from '../site/node-claims';

const BUSY_STATES = new Set(['ALLOCATED', 'MIXED', 'COMPLETING']);
/** Flags under which a node is not (yet) serving, whatever its base state. */
const NOT_SERVING = ['NOT_RESPONDING', 'FAIL', 'REBOOT_REQUESTED', 'REBOOT_ISSUED', 'POWERING_UP', 'POWERED_DOWN', 'POWERING_DOWN', 'POWER_DOWN'];

/** No job on the node, finishing ones included: COMPLETING is a flag in Slurm (IDLE+COMPLETING is an epilog still running). */
export function hasNoJob(node: WlmNode): boolean {
  return !BUSY_STATES.has(node.base) && !node.flags.includes('COMPLETING');
}

/** Quiet, as CRUS defines it: drained and no job left (DRAIN with IDLE or DOWN, not COMPLETING: Slurm's DRAINING). */
export function isQuiet(node: WlmNode): boolean {
  return node.flags.includes('DRAIN') && (node.base === 'IDLE' || node.base === 'DOWN') && hasNoJob(node);
}

/**
 * Back in service, stricter than CRUS (which counted any IDLE+DRAIN node, rebooted or not): slurmd
 * registered after the boot we asked for and answers, and the node serves: idle, or already running
 * a job it took after it came back (someone or something lifted the drain first). A node Slurm kept
 * DOWN after that registration (a reboot longer than SlurmdTimeout under ReturnToService 0 or 1)
 * counts too when it was drained or carries our reason: the run resumes ours, an admin's stays out.
 */
export function isBackAfterBoot(node: WlmNode, bootRequestedAt: number): boolean {
  if (node.bootTime === undefined || node.bootTime < bootRequestedAt) return false;
  if (node.flags.some((f) => NOT_SERVING.includes(f))) return false;
  if (node.base === 'IDLE' || node.base === 'ALLOCATED' || node.base === 'MIXED') return true;
  return node.base === 'DOWN' && (isUpgradeDrainReason(node.reason) || node.flags.includes('DRAIN'));
}
