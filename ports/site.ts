/**
 * What the workflows need from a site, whatever serves it: Slurm's slurmrestd, a BOS-like boot
 * service and an HSM-like inventory in production; the site simulator on the embedded default.
 * Every method throws SiteServiceError when the service fails (retryable), and GroupNotFoundError
 * where a named group does not exist.
 */

import type { BootSessionStatus, InventoryNode, WlmNode } from '../core/site/site-nodes';
import type { CommandTransport } from './command-transport';
import type { MaintenanceReservations } from './reservations';

export type { BootNodeOutcome, BootSessionStatus, InventoryNode, WlmBaseState, WlmNode } from '../core/site/site-nodes';

export interface WorkloadManager {
  /** Nodes by name; a name the WLM does not know is absent from the map. */
  getNodes(names: readonly string[]): Promise<Map<string, WlmNode>>;
  /** `scontrol update NodeName=<n> State=DRAIN Reason=<reason>` */
  drain(name: string, reason: string): Promise<void>;
  /**
   * `scontrol update NodeName=<n> State=RESUME`; a reason (a task-graph resume task's `task=<id>`)
   * travels with the request for the record, though Slurm clears the node's reason on resume.
   */
  resume(name: string, reason?: string): Promise<void>;
  /** `scontrol update NodeName=<n> State=FAIL Reason=<reason>` */
  fail(name: string, reason: string): Promise<void>;
  /**
   * The list forms: one `scontrol update NodeName=<hostlist> ...` over a command transport (one SSM
   * command for a whole step instead of one per node), per-node requests with bounded concurrency
   * over slurmrestd v0.0.41, one batch `POST /nodes` from v0.0.42. No call for no names.
   */
  /**
   * When the running jobs of each named node end at the latest (epoch ms; Infinity: no time limit),
   * from the jobs' time limits: slurmrestd's `GET /jobs` end_time, or squeue's time left over a
   * command transport. A node running no job is absent. Optional: a workload manager that cannot
   * tell leaves idle-first with busy-or-idle only, and drain-ahead off.
   */
  getJobEnds?(names: readonly string[]): Promise<Map<string, number>>;
  drainNodes(names: readonly string[], reason: string): Promise<void>;
  resumeNodes(names: readonly string[]): Promise<void>;
  failNodes(names: readonly string[], reason: string): Promise<void>;
}

export interface BootSessionRequest {
  /** Unique, chosen by the caller: creating the same name again returns the existing session (idempotent). */
  name: string;
  operation: 'reboot';
  templateName: string;
  /** The group label (or comma-separated node names) the boot is limited to. */
  limit: string;
}

export interface BootService {
  templateExists(templateName: string): Promise<boolean>;
  /** Starts a boot session, or returns the existing one of the same name. */
  createSession(request: BootSessionRequest): Promise<BootSessionStatus>;
  /** Undefined when no session of that name exists. */
  getSession(name: string): Promise<BootSessionStatus | undefined>;
}

export interface Inventory {
  /** Members of the group, in the group's order. Throws GroupNotFoundError. */
  getGroupMembers(label: string): Promise<string[]>;
  /** Adds members (already present ones are left alone). Throws GroupNotFoundError. */
  addGroupMembers(label: string, names: readonly string[]): Promise<void>;
  /** Removes members (absent ones are left alone). Throws GroupNotFoundError. */
  removeGroupMembers(label: string, names: readonly string[]): Promise<void>;
  listNodes(): Promise<InventoryNode[]>;
  /** Every group label (HSM's `GET /groups`); optional: an inventory whose groups are not listed leaves it out. */
  listGroupLabels?(): Promise<string[]>;
}

export interface Site {
  workloadManager: WorkloadManager;
  bootService: BootService;
  inventory: Inventory;
  /**
   * The site's head node, reached by its command transport (a site profile's `transport`, the
   * simulator's SSM endpoint): where a rolling upgrade's health check command runs. Optional: a site
   * reached by HTTP alone has none, and a request with `healthCheck.command` is refused for it.
   */
  commands?: CommandTransport;
  /**
   * Slurm maintenance reservations (request `reserveSlots`): `scontrol` on the head node, so present
   * where `commands` is and the workload manager is Slurm. A request with reserveSlots is refused without.
   */
  reservations?: MaintenanceReservations;
}
