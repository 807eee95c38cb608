/**
 * What a site looked like and what was done to it, as the simulated site reports it (its control
 * route, `rollout simulate`'s state file, the embedded runtime's siteState()): what a judge of a
 * run reads. The simulator produces it; the clients only read it.
 */

/** How a run ended for one node task, as the site reported it. */
export type TaskResult = 'ok' | 'failed' | 'timeout';

/** One task run on one node, in simulated seconds from the simulator's start; `end` and `result` are absent while it runs. */
export interface TaskLogEntry {
  node: string;
  task: string;
  start: number;
  end?: number;
  result?: TaskResult;
}

/** `reason`: the reason set alone (`scontrol update Reason=...`, no state), e.g. a run blanking its own claim. */
export type NodeChangeKind = 'drain' | 'resume' | 'fail' | 'reason' | 'boot' | 'prepare' | 'deploy';

/** One change of a node at the site, and the run the site says made it (by its Slurm reason, boot session or action name). */
export interface NodeChange {
  /** Simulated epoch ms. */
  at: number;
  node: string;
  change: NodeChangeKind;
  /** The run's id (or the first 8 hex of it, from a task run's reboot session); undefined when the site cannot tell. */
  by?: string;
}

export interface SiteNodeState {
  /** sinfo-style: IDLE, DRAINING, DRAINED, DOWN*, FAILING, ... */
  wlmState: string;
  wlmReason?: string;
  bootCount: number;
  drainCount: number;
  resumeCount: number;
  failCount: number;
  killedJobs: number;
  prepareCount: number;
  deployCount: number;
  /** Health checks (`ssh <node> nhc`) the head node ran on it. */
  healthCheckCount: number;
  /** What the node's first job had left at the start: the lower bound's release time (null: a job that never ends). */
  initialBusySeconds: number | null;
  /**
   * [start, end] in simulated seconds from the simulator's start (the session's start on the embedded
   * default): from the moment the node is drained and runs no job (the drain of an idle node, the end
   * or the kill of the job of a drained one) until it is back in service (resumed, responding, up)
   * or failed. end is null while it lasts.
   */
  outOfService: [number, number | null][];
}

/** Everything a test needs to judge what a workflow did to the site. */
export interface SiteState {
  now: number;
  groups: Record<string, string[]>;
  nodes: Record<string, SiteNodeState>;
  /** Safety breaches seen, e.g. a node rebooted by two boot sessions at once. */
  violations: string[];
  /** Every task-graph task run, in start order. */
  taskLog: TaskLogEntry[];
  /** Every drain, resume, fail, boot, prepare and deploy, in order, with the run the site says made it. */
  changes: NodeChange[];
  /** Every firing of a Slurm trigger (`strigger`) on the site, in order; absent when none fired. */
  triggerFirings?: TriggerFiring[];
}

/** One run of a Slurm trigger's program (src/slurmctld/trigger_mgr.c _trigger_run_program), or its loss. */
export interface TriggerFiring {
  triggerId: number;
  event: 'up' | 'down' | 'drained';
  /** The program's last argument: the nodes of the event, as one hostlist. */
  hostlist: string;
  /** The program with its own arguments, as given to `strigger --program=`. */
  program: string;
  /** Epoch ms of the trigger pass that ran it. */
  at: number;
  /** ran: the program ran and succeeded; failed: it ran and failed (never retried); lost: it never ran (a fault). */
  outcome: 'ran' | 'failed' | 'lost';
}
