import { countPerRack, nodeCouldStart, type Decision, type SchedulingPolicy } from '../scheduling';
import type { InventoryNode, WlmNode } from '../site/site-nodes';
import { todoPositions } from './plan-marks';
import type { NodeRecord, UpgradeSession, WindowProgress } from './session';
import { upgradeOpNode, upgradePolicy } from './upgrade-policy';
import { windowNodeGates } from './window-decisions';

/** TODO nodes looked at in one go while scanning the plan for candidates (plan order). */
export const SCAN_BATCH = 32;

/** What the scan has read of the site when it takes a batch: the workload manager's view of the nodes looked at, and the inventory. */
export interface ScannedSite {
  wlm: ReadonlyMap<string, WlmNode>;
  /** Read only when the scan asks for it (readsInventory). */
  inventory: ReadonlyMap<string, InventoryNode>;
}

/**
 * Which TODO nodes a window increment looks at: its candidates, those the scheduler may start now.
 * Idle-first ranks every TODO node by its running job, so it looks at all of them (one workload
 * manager listing). Plan order looks at the next TODO nodes in plan order until it has enough that
 * could start now (alive, available, a rack with room: the scheduler's own start gate and rack cap,
 * nodeCouldStart) to fill every free slot and the drain-ahead room, passing over the others, so an
 * increment looks at O(slots) nodes plus those it has to pass over. A run being deleted looks at none
 * (the delete sequence starts none); a stopping one looks at none either, but counts what is left to
 * start (so it stops rather than finishes).
 *
 * The activity reads, the scan decides: `next()` hands out the plan positions to look at, `add()`
 * takes the records of those nodes once the site was read for them, until `next()` hands out none.
 */
export class WindowCandidateScan {
  /** TODO plan positions not in flight, in plan order (none when the run is being deleted). */
  readonly todo: readonly number[];
  /** The candidates looked at so far, in plan order. */
  readonly candidates: NodeRecord[] = [];
  /** Plan order: the scan stops once this many candidates could start now. */
  private readonly enough: number | undefined;
  private readonly looks: 'every' | 'enough' | 'none';
  private readonly policy: SchedulingPolicy;
  /** Positions of `todo` handed out so far (a prefix), and how many of the candidates could start now. */
  private handedOut = 0;
  private startable = 0;
  /** The nodes in flight per rack (read from the inventory on the first batch). */
  private perRack: ReadonlyMap<string, number> | undefined;

  constructor(
    session: UpgradeSession,
    window: WindowProgress,
    private readonly inFlight: readonly NodeRecord[],
  ) {
    this.policy = upgradePolicy(session, session.nodeCount);
    this.todo = session.state === 'DELETING' ? [] : todoPositions(window.marks!, session.nodeCount, new Set(window.inFlight ?? []));
    this.looks = session.state === 'DELETING' || session.state === 'STOPPING' ? 'none' : this.policy.order === 'idle-first' ? 'every' : 'enough';
    // Plan order: enough that could start now to fill every free slot and the drain-ahead room.
    this.enough = this.looks === 'enough' ? Math.max(1, this.policy.maxInTransition + this.policy.drainAhead - inFlight.length) : undefined;
  }

  /** Plan order tells the candidates that could start now by the inventory (alive, available, rack): the activity reads it before the first batch. */
  get readsInventory(): boolean {
    return this.looks === 'enough';
  }

  /** The plan positions to look at next (handed out: each once); none when the scan is done. */
  next(): readonly number[] {
    if (this.looks === 'none' || this.handedOut >= this.todo.length) return [];
    if (this.looks === 'enough' && this.startable >= this.enough!) return [];
    const size = this.looks === 'every' ? this.todo.length : Math.max(SCAN_BATCH, this.enough!);
    const batch = this.todo.slice(this.handedOut, this.handedOut + size);
    this.handedOut += batch.length;
    return batch;
  }

  /** The records of the nodes `next()` handed out, with the site as read for them. */
  add(records: readonly NodeRecord[], site: ScannedSite): void {
    this.candidates.push(...records);
    if (this.looks !== 'enough') return;
    this.perRack ??= countPerRack(
      this.inFlight.map((r) => r.name),
      (name) => site.inventory.get(name)?.rack,
    );
    for (const record of records) if (nodeCouldStart(this.policy, windowNodeGates(record.name, site), this.perRack)) this.startable++;
  }

  /** TODO positions not looked at (the view counts them; a run finishing halted records them left alone). */
  notLookedAt(): number[] {
    const looked = new Set(this.candidates.map((r) => r.index));
    return this.todo.filter((p) => !looked.has(p));
  }
}

/** The candidates the scheduler's decision starts, in its order: their locks are taken before anything is done to them. */
export function candidatesStarting(candidates: readonly NodeRecord[], decision: Pick<Decision, 'start'>): NodeRecord[] {
  const byName = new Map(candidates.map((r) => [r.name, r]));
  return decision.start.map((s) => byName.get(upgradeOpNode(s.op))!);
}

/** Finishing halted: the TODO positions outside the view, each recorded left alone (once); none otherwise. */
export function outsideTodoToRecord(scan: Pick<WindowCandidateScan, 'notLookedAt'>, decision: Pick<Decision, 'finished' | 'leftAloneOutside'>): number[] {
  return decision.finished && decision.leftAloneOutside !== undefined ? scan.notLookedAt() : [];
}
