/**
 * The site's node shapes as the core reasons about them, whatever service reports them
 * (slurmrestd or scontrol for the workload manager; HSM, Slurm or a file for the inventory).
 */

/** Slurm base states (slurmrestd's first state word). */
export type WlmBaseState = 'IDLE' | 'ALLOCATED' | 'MIXED' | 'COMPLETING' | 'DOWN' | 'FUTURE' | 'UNKNOWN';

/** A workload-manager node as Slurm reports it. */
export interface WlmNode {
  name: string;
  base: WlmBaseState;
  /** Slurm state flags: DRAIN, FAIL, NOT_RESPONDING, REBOOT_REQUESTED, ... */
  flags: string[];
  reason?: string;
  /** When slurmd last registered after a boot, epoch ms; undefined if never. */
  bootTime?: number;
}

export type BootNodeOutcome = 'pending' | 'booting' | 'succeeded' | 'failed';

/**
 * What a boot session is limited to, by its type: exactly these nodes (a window's newly quiet
 * nodes, a task's node), or the members of an inventory group (CRUS's upgrading label). Never told
 * apart by the text (one node name has no comma, yet is no group label).
 */
export type BootLimit = { readonly nodes: readonly string[] } | { readonly label: string };

/** A boot session as the boot service reports it (BOS, or a Slurm reboot). */
export interface BootSessionStatus {
  name: string;
  status: 'running' | 'complete';
  /** Set when the session as a whole failed (e.g. the template vanished). */
  error?: string;
  /**
   * Set while the request that starts it failed (or died) and may be made again: the boot service's
   * words. Its nodes are not booting yet; createSession of the same name resumes it, running only
   * what failed (slurm-reboot). Never set on a complete session.
   */
  startError?: string;
  /** Per-node outcome of every node the session covers. */
  nodes: Record<string, BootNodeOutcome>;
}

/** A node as the inventory lists it: what deployment selectors match. */
export interface InventoryNode {
  name: string;
  nid: number;
  rack?: string;
  role: string;
  tags: string[];
  labels: Record<string, string>;
  /** Deployment roles (Fuel's: controller, compute, ...): which task-graph groups and tasks the node takes part in. Absent: none. */
  roles?: string[];
  /**
   * OpenCrowbar's gates: a scheduler operates on a node only while it is alive (manageable) and
   * available (the administrators let it be managed). Absent means true.
   */
  alive?: boolean;
  available?: boolean;
}

/** A boot set of a session template (BOS V2BootSet): the nodes it boots, by list, HSM group and HSM role. */
export interface BootSetSpec {
  name: string;
  nodeList?: string[];
  nodeGroups?: string[];
  /** HSM roles (`Compute`) or role_subroles (`Application_UAN`). */
  nodeRolesGroups?: string[];
}
