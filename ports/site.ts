/**
 * What the workflows need from a site, whatever serves it: Slurm's slurmrestd, a BOS-like boot
 * service and an HSM-like inventory in production; the site simulator on the embedded default.
 * Every method throws SiteServiceError when the service fails (retryable), and GroupNotFoundError
 * where a named group does not exist.
 */

import type { BootLimit, BootSessionStatus, BootSetSpec, InventoryNode, WlmNode } from '../core/site/site-nodes';
import type { CommandTransport } from './command-transport';
import type { NodeEventKind } from '../core/site/site-event';
import type { MaintenanceReservations } from './reservations';

export type { BootLimit, BootNodeOutcome, BootSessionStatus, BootSetSpec, InventoryNode, WlmBaseState, WlmNode } from '../core/site/site-nodes';

export interface WlmReadOptions {
  /**
   * Nodes whose boot the caller judges now, each with the time (epoch ms) it must have booted
   * after: a connector that reads only what changed since its last poll reads such a node in full
   * while it looks up and the boot time it last read is older, since a reboot shorter than a poll
   * can leave every other field as it was.
   */
  bootedSince?: ReadonlyMap<string, number>;
}

/**
 * Slurm's event triggers set for one session (issue 29): permanent node triggers whose program is the site's
 * relay (relayProgram: `<relay> --event <kind> --session <id>`), so a firing resumes that session's wait.
 */
export interface SiteTriggers {
  /** The site's relay command (siteEvents.relay) and the backstop poll it was configured with. */
  readonly relay: string;
  readonly backstopSeconds?: number;
  /**
   * Sets one permanent trigger per kind on `nodes` (one hostlist each) for `session`: idempotent, a trigger
   * of this session and kind already set is kept (one of other nodes is replaced). Returns the ids set or kept.
   */
  arm(session: string, nodes: readonly string[], kinds: readonly NodeEventKind[]): Promise<number[]>;
  /** Clears every trigger of `session` (found by its program in `strigger --get`); how many went. Idempotent. */
  disarm(session: string): Promise<number>;
}

export interface WorkloadManager {
  /** Present where the site's triggers can resume the waits (a scontrol connector with siteEvents): absent, every wait is a poll. */
  triggers?: SiteTriggers;
  /**
   * Nodes by name; a name the WLM does not know is absent from the map. A WLM that cannot be read
   * (a failing command, an unknown option, an answer that cannot be parsed) throws
   * SiteServiceError naming the command and its error: it never reports nodes as unknown for it.
   */
  getNodes(names: readonly string[], options?: WlmReadOptions): Promise<Map<string, WlmNode>>;
  /** `scontrol update NodeName=<n> State=DRAIN Reason=<reason>` */
  drain(name: string, reason: string): Promise<void>;
  /**
   * `scontrol update NodeName=<n> State=RESUME`; a reason (a task-graph resume task's `task=<id>`)
   * travels with the request for the record (Slurm 22.05 and 26.05 clear the node's reason on resume; 24.11 without accounting keeps it).
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
  /**
   * Blanks the reason of nodes in service: `scontrol update NodeName=<hostlist> Reason=' '`, or
   * slurmrestd's update with the reason alone. For a run's own claim left on a node it returned:
   * Slurm 24.11 without accounting keeps the reason through RESUME and a reboot, and no release takes
   * an empty reason (node_mgr.c update_node sets it only when `reason[0]`), so one blank is the closest
   * to none (every reader trims it away). No call for no names.
   */
  clearReasons(names: readonly string[]): Promise<void>;
}

export interface BootSessionRequest {
  /** Unique, chosen by the caller: creating the same name again returns the existing session (idempotent). */
  name: string;
  operation: 'reboot';
  templateName: string;
  /** The nodes, or the group, the boot is limited to. */
  limit: BootLimit;
}

export interface BootService {
  /**
   * The boot's progress is read from the workload manager's nodes (`scontrol reboot`: a node is booted once it
   * registered after the request), so a Slurm trigger's `up` or `down` firing is when it changes: the boot wait can
   * be resumed by the site's events. Absent (BOS): the boot service's own status decides, and that wait stays a poll.
   */
  readonly progressFromNodes?: boolean;
  templateExists(templateName: string): Promise<boolean>;
  /** The templates there are, for an error that names the ones to choose from; optional (a service that takes any name has no list). */
  templateNames?(): Promise<string[]>;
  /**
   * The boot sets of a template, where the service decides by them which nodes a session acts upon
   * (BOS: a session's limit is intersected with them); undefined when it does not tell (no boot sets,
   * or a boot service that reboots whatever the limit names). Optional.
   */
  templateBootSets?(templateName: string): Promise<BootSetSpec[] | undefined>;
  /**
   * Starts a boot session, or returns the existing one of the same name. A limit that names no node
   * (an empty list, a group with no members) throws EmptyBootSessionError before anything is booted.
   */
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
  /**
   * The named nodes alone (absent: unknown to the inventory), in as few requests as the service
   * allows; optional: without it, a caller reads listNodes (lambdas/activities/inventory-nodes.ts).
   */
  getNodes?(names: readonly string[]): Promise<Map<string, InventoryNode>>;
  /** Every group label (HSM's `GET /groups`); optional: an inventory whose groups are not listed leaves it out. */
  listGroupLabels?(): Promise<string[]>;
  /** Why the inventory would refuse this group label (HSM's rule), or undefined; optional: no rule beyond the common one. */
  labelProblem?(label: string): string | undefined;
  /** Each node's nid, cheaper than listNodes where the service can (HSM's `nidonly` listing); optional. */
  listNids?(): Promise<Map<string, number>>;
}

/**
 * One node, two names: the inventory's (the session's identity of a node, what the boot service
 * boots) and the workload manager's (Slurm's, `nid000006` on CSM). Present on a site whose two
 * names differ; the workload manager of such a site already takes the inventory's names.
 */
export interface NodeNameMap {
  /** The workload manager's name of each inventory name given (absent: unknown). */
  toWorkloadManager(names: readonly string[]): Promise<Map<string, string>>;
  /** The inventory's name of each workload-manager name given (absent: unknown). */
  toInventory(wlmNames: readonly string[]): Promise<Map<string, string>>;
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
  /** Where the workload manager names nodes otherwise than the inventory (CSM: nids and xnames); absent: one name. */
  nodeNames?: NodeNameMap;
  /**
   * Slurm maintenance reservations (request `reserveSlots`): `scontrol` on the head node, so present
   * where `commands` is and the workload manager is Slurm. A request with reserveSlots is refused without.
   */
  reservations?: MaintenanceReservations;
}
