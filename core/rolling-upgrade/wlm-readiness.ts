import type { WlmNode } from '../site/site-nodes';

const BUSY_STATES = new Set(['ALLOCATED', 'MIXED', 'COMPLETING']);

/** Quiet, as CRUS defines it: drained and no job left (DRAIN with IDLE or DOWN). */
export function isQuiet(node: WlmNode): boolean {
  return node.flags.includes('DRAIN') && (node.base === 'IDLE' || node.base === 'DOWN') && !BUSY_STATES.has(node.base);
}

/**
 * Back in service, stricter than CRUS (which counted any IDLE+DRAIN node, rebooted or not):
 * the node responds, is idle, and slurmd registered after the boot we asked for.
 */
export function isBackAfterBoot(node: WlmNode, bootRequestedAt: number): boolean {
  return (
    node.base === 'IDLE' &&
    !node.flags.includes('NOT_RESPONDING') &&
    !node.flags.includes('FAIL') &&
    node.bootTime !== undefined &&
    node.bootTime >= bootRequestedAt
  );
}
