import { compressHostlist } from '../../core/site/hostlist';
import type { TriggerFiring } from '../../core/site/site-state';
import type { Timeline } from '../timeline';

export type { TriggerFiring };

/**
 * Slurm's event triggers (`strigger`) as slurmctld holds them, for the node events a rollout waits on:
 * up, down, drained. Follows SchedMD/slurm's src/slurmctld/trigger_mgr.c (trigger_set, trigger_get,
 * trigger_clear, trigger_node_up/down/drained, trigger_process, _trigger_node_event, _trigger_clone,
 * _trigger_run_program, _duplicate_trigger), src/slurmctld/controller.c (_slurmctld_background: the pass)
 * and src/slurmctld/slurmctld.h (TRIGGER_INTERVAL), at the newest tag (the same from 22.05 to 26.05).
 * The node events are reported by the workload manager where node_mgr.c calls trigger_node_*.
 */

/** The node events a trigger fires on (strigger --up, --down, --drained). */
export type TriggerEvent = TriggerFiring['event'];

/** slurmctld.h TRIGGER_INTERVAL: seconds between trigger passes. */
export const TRIGGER_INTERVAL_SECONDS = 15;
/**
 * controller.c runs a pass when `difftime(now, last_trigger) > TRIGGER_INTERVAL`, its background loop
 * waking once a second on whole seconds: a pass every 16 s.
 */
export const TRIGGER_PASS_MS = (TRIGGER_INTERVAL_SECONDS + 1) * 1000;

export interface SlurmTrigger {
  id: number;
  event: TriggerEvent;
  /** The hostlist given to `--node=` as typed; `*` for every node (`--node` alone). */
  resId: string;
  /** The nodes of `resId`; undefined for every node. */
  nodes?: ReadonlySet<string>;
  /** The program with its own arguments, as given to `--program=`. */
  program: string;
  perm: boolean;
  user: string;
}

export type TriggerSetError = 'duplicate' | 'invalid-node';

/** Faults a scenario turns on: firings lost (the program never ran) and a program that fails. */
export interface TriggerFaults {
  /** How many of the next firings are lost. */
  loseFirings: number;
  /** Every program run fails (exits non-zero); slurmctld only logs it. */
  failProgram: boolean;
}

interface TriggerRecord extends SlurmTrigger {
  /** The pending trigger fired in this pass (trig_mgr_info_t.state 2): out of `--get`, gone. */
  fired?: boolean;
}

export class TriggerManagerModel {
  /** slurmctld's trigger_list, in its order (a permanent trigger's copy is prepended when it fires). */
  private triggers: TriggerRecord[] = [];
  private nextId = 1;
  /** Events since the last pass: the nodes that went up, down, drained (trigger_*_nodes_bitmap). */
  private readonly events = new Map<TriggerEvent, Map<string, number>>();
  private passScheduledAt: number | undefined;
  private readonly listeners = new Set<(firing: TriggerFiring) => void>();
  private readonly passListeners = new Set<(at: number) => void>();
  readonly firings: TriggerFiring[] = [];
  readonly faults: TriggerFaults = { loseFirings: 0, failProgram: false };

  constructor(
    private readonly timeline: Timeline,
    /** The node names in slurm.conf order (bitmap2node_name prints them so); a name not listed is invalid. */
    private readonly nodeNames: () => readonly string[],
    /** When slurmctld started: the passes are taken every TRIGGER_PASS_MS from then. */
    private readonly startedAt: number,
  ) {}

  /** Calls `listener` for every firing (ran, failed or lost); returns the unsubscribe. */
  onFiring(listener: (firing: TriggerFiring) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Calls `listener` with the time of each trigger pass as it is scheduled; returns the unsubscribe. The simulator
   * runs its events only as it is read (Timeline): a runtime that must see firings at their time while nothing reads
   * the site (a workflow parked for them) wakes it then.
   */
  onPassScheduled(listener: (at: number) => void): () => void {
    this.passListeners.add(listener);
    if (this.passScheduledAt !== undefined) listener(this.passScheduledAt);
    return () => this.passListeners.delete(listener);
  }

  /** Runs what fell due (a pass among them): for a runtime woken at a pass's time. */
  catchUp(): void {
    this.timeline.sync();
  }

  /**
   * trigger_set: a new trigger with the next id, appended; refused when one with the same event, nodes,
   * program, user and flags exists (`_duplicate_trigger`) or a node is unknown (node_name2bitmap).
   */
  set(trigger: Omit<SlurmTrigger, 'id' | 'nodes'>, nodes: readonly string[] | undefined): SlurmTrigger | TriggerSetError {
    this.timeline.sync();
    const known = new Set(this.nodeNames());
    if (nodes && nodes.some((name) => !known.has(name))) return 'invalid-node';
    const dup = this.triggers.some(
      (t) => t.event === trigger.event && t.resId === trigger.resId && t.program === trigger.program && t.user === trigger.user && t.perm === trigger.perm,
    );
    if (dup) return 'duplicate';
    const record: TriggerRecord = { ...trigger, id: this.nextId++, ...(nodes ? { nodes: new Set(nodes) } : {}) };
    this.triggers.push(record);
    this.schedulePass();
    return record;
  }

  /** trigger_get: the pending triggers, in slurmctld's list order (fired ones are left out). */
  list(): SlurmTrigger[] {
    this.timeline.sync();
    return this.triggers.filter((t) => !t.fired).map(({ fired: _fired, ...t }) => t);
  }

  /** trigger_clear: by id, or every trigger of a user; returns how many went. */
  clear(by: { id?: number; user?: string }): number {
    this.timeline.sync();
    const before = this.triggers.length;
    this.triggers = this.triggers.filter((t) => t.fired || !((by.id === undefined || t.id === by.id) && (by.user === undefined || t.user === by.user)));
    return before - this.triggers.length;
  }

  /** node_mgr.c calls trigger_node_up/down/drained where a node changes: remembered until the next pass. */
  nodeEvent(event: TriggerEvent, name: string): void {
    const now = this.timeline.sync();
    let nodes = this.events.get(event);
    if (!nodes) this.events.set(event, (nodes = new Map()));
    nodes.set(name, now);
  }

  /**
   * Passes run only while a trigger is pending (one with none changes nothing but the cleared events),
   * at slurmctld's own times: every TRIGGER_PASS_MS from its start.
   */
  private schedulePass(): void {
    if (this.passScheduledAt !== undefined) return;
    const now = this.timeline.sync();
    const pass = this.startedAt + (Math.floor((now - this.startedAt) / TRIGGER_PASS_MS) + 1) * TRIGGER_PASS_MS;
    this.passScheduledAt = pass;
    for (const listener of this.passListeners) listener(pass);
    this.timeline.at(pass, (at) => {
      this.passScheduledAt = undefined;
      this.pass(at);
      if (this.triggers.some((t) => !t.fired)) this.schedulePass();
    });
  }

  /**
   * trigger_process: each pending node trigger whose event has nodes since the last pass fires, with the
   * nodes it watches that changed as one hostlist (every changed node for `*`); a permanent one is cloned
   * first (prepended, state 0, its original nodes), the fired one leaves `--get`. The events are cleared
   * after the pass. The program runs once (_trigger_run_program: fork and exec, its exit only logged).
   */
  private pass(at: number): void {
    // Passes are not taken while no trigger is pending: events from before the previous pass's time are gone.
    const since = at - TRIGGER_PASS_MS;
    const changed = new Map<TriggerEvent, string[]>();
    for (const [event, nodes] of this.events)
      changed.set(
        event,
        [...nodes].filter(([, when]) => when >= since).map(([name]) => name),
      );
    this.events.clear();
    const clones: TriggerRecord[] = [];
    const fired: TriggerFiring[] = [];
    for (const trigger of this.triggers) {
      if (trigger.fired) continue;
      const names = (changed.get(trigger.event) ?? []).filter((name) => !trigger.nodes || trigger.nodes.has(name));
      if (names.length === 0) continue;
      if (trigger.perm) clones.unshift({ ...trigger });
      trigger.fired = true;
      fired.push({ triggerId: trigger.id, event: trigger.event, hostlist: this.hostlist(names), program: trigger.program, at, outcome: this.outcome() });
    }
    // A fired trigger is purged once its program ended (MAX_PROG_TIME at most): out of --get at once either way.
    this.triggers = [...clones, ...this.triggers.filter((t) => !t.fired)];
    for (const firing of fired) {
      this.firings.push(firing);
      for (const listener of this.listeners) listener(firing);
    }
  }

  private outcome(): TriggerFiring['outcome'] {
    if (this.faults.loseFirings > 0) {
      this.faults.loseFirings--;
      return 'lost';
    }
    return this.faults.failProgram ? 'failed' : 'ran';
  }

  /** bitmap2node_name: the nodes in slurm.conf order, as one hostlist. */
  private hostlist(names: readonly string[]): string {
    const chosen = new Set(names);
    return compressHostlist(this.nodeNames().filter((name) => chosen.has(name)));
  }
}
