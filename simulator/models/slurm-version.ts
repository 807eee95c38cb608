/**
 * What the simulated Slurm does differently by release: the site file's `slurm.version` (e.g.
 * `22.05.8`, `24.11.5`). Each rule names the SchedMD/slurm file it follows.
 */

/** The releases the simulator knows, oldest first: MAJOR.MINOR. */
export const SLURM_RELEASES = ['22.05', '23.02', '23.11', '24.05', '24.11', '25.05', '25.11', '26.05'] as const;
export type SlurmRelease = (typeof SLURM_RELEASES)[number];

/**
 * The openapi versions slurmrestd serves for slurmctld, per release: up to 23.02 one
 * `src/plugins/openapi/v0.0.3x` plugin each (22.05: v0.0.36-38; 23.02: v0.0.37-39); from 23.11
 * `openapi/slurmctld` with `src/plugins/data_parser/v0.0.4x` (23.11 keeps the v0.0.38 and v0.0.39
 * plugins beside data_parser v0.0.40; 24.05 the v0.0.39 plugin beside v0.0.40-41). Read from the
 * tags' trees (slurm-22-05-8-1 ... slurm-26-05-1-1).
 */
const RESTD_VERSIONS: Record<SlurmRelease, readonly string[]> = {
  '22.05': ['v0.0.36', 'v0.0.37', 'v0.0.38'],
  '23.02': ['v0.0.37', 'v0.0.38', 'v0.0.39'],
  '23.11': ['v0.0.38', 'v0.0.39', 'v0.0.40'],
  '24.05': ['v0.0.39', 'v0.0.40', 'v0.0.41'],
  '24.11': ['v0.0.40', 'v0.0.41', 'v0.0.42'],
  '25.05': ['v0.0.40', 'v0.0.41', 'v0.0.42', 'v0.0.43'],
  '25.11': ['v0.0.41', 'v0.0.42', 'v0.0.43', 'v0.0.44'],
  '26.05': ['v0.0.42', 'v0.0.43', 'v0.0.44', 'v0.0.45'],
};

/** The data_parser `scontrol --json` prints with (the release's newest). */
const CLI_DATA_PARSER: Record<SlurmRelease, string | undefined> = {
  '22.05': undefined,
  '23.02': 'v0.0.39',
  '23.11': 'v0.0.40',
  '24.05': 'v0.0.41',
  '24.11': 'v0.0.42',
  '25.05': 'v0.0.43',
  '25.11': 'v0.0.44',
  '26.05': 'v0.0.45',
};

export class SlurmVersion {
  readonly release: SlurmRelease;
  /** MAJOR.MINOR.MICRO, as `scontrol --version` prints it. */
  readonly full: string;
  readonly major: number;
  readonly minor: number;
  readonly micro: number;

  constructor(version: string) {
    const match = /^(\d{2})\.(\d{2})(?:\.(\d+))?$/.exec(version);
    const release = match ? (`${match[1]}.${match[2]}` as SlurmRelease) : undefined;
    if (!match || !release || !SLURM_RELEASES.includes(release))
      throw new Error(`unknown Slurm version '${version}': one of ${SLURM_RELEASES.join(', ')} (MAJOR.MINOR[.MICRO])`);
    this.release = release;
    this.major = Number(match[1]);
    this.minor = Number(match[2]);
    this.micro = Number(match[3] ?? 0);
    this.full = `${match[1]}.${match[2]}.${this.micro}`;
  }

  private atLeast(release: SlurmRelease): boolean {
    return SLURM_RELEASES.indexOf(this.release) >= SLURM_RELEASES.indexOf(release);
  }

  /** `scontrol --json` exists from 23.02 (src/scontrol/scontrol.c gained the DATA_PARSER options then). */
  get scontrolJson(): boolean {
    return this.atLeast('23.02');
  }

  /** The data_parser of `scontrol --json` (undefined: no --json). */
  get cliDataParser(): string | undefined {
    return CLI_DATA_PARSER[this.release];
  }

  /** `sinfo --json` prints openapi v0.0.38's shape up to 22.05 (src/sinfo/sinfo.c dumped through the v0.0.38 plugin). */
  get sinfoJsonIsV38(): boolean {
    return !this.atLeast('23.02');
  }

  /**
   * set_node_down_ptr() appends ` : <why>` to a reason from 23.02 (set_node_reason in
   * src/slurmctld/node_mgr.c); 22.05 kept the reason a node had (and set_node_reboot_reason replaced
   * one that already held the message).
   */
  get reasonsAppend(): boolean {
    return this.atLeast('23.02');
  }

  /**
   * 22.05.8 cleared the reason of a busy drained node on RESUME too (seen on a real 22.05.8; 24.11.5 keeps it,
   * node_mgr.c update_node), and so does 26.05 (seen on a real 26.05.5: the node-up path of
   * src/interfaces/accounting_storage.c clears the reason before its no-accounting return from slurm-26-05-0-1).
   */
  get resumeClearsBusyReason(): boolean {
    return !this.atLeast('23.02') || this.atLeast('26.05');
  }

  /** At ResumeTimeout up to 23.02 check_reboot_nodes() also cleared DRAIN; from 23.11 it keeps a drain set by `scontrol update` (src/slurmctld/node_mgr.c). */
  get rebootTimeoutClearsDrain(): boolean {
    return !this.atLeast('23.11');
  }

  /**
   * From 26.05 a reboot asked of an idle node is issued by the power-save thread at its next pass
   * (src/slurmctld/power_save.c `_do_power_action_reboot`, `power_save_interval = 10`), not by the next
   * background pass of controller.c (`_queue_reboot_msg`, up to 25.11): a real 26.05.5 held an idle node in
   * REBOOT_REQUESTED up to about 10 s.
   */
  get rebootsOnPowerSavePass(): boolean {
    return this.atLeast('26.05');
  }

  get restdVersions(): readonly string[] {
    return RESTD_VERSIONS[this.release];
  }

  /**
   * A node coming up (RESUME of a drained/failed idle node, a DOWN node back in service) clears its
   * reason through clusteracct_storage_g_node_up(); from 23.11 that returns before clearing it when
   * no accounting storage is configured (src/interfaces/accounting_storage.c: `if (plugin_inited ==
   * PLUGIN_NOOP) return SLURM_SUCCESS;`), so the reason stays (seen on a real 24.11.5: REFERENCE.md).
   * 26.05 clears it before that return again (the same function at slurm-26-05-0-1: `xfree(node_ptr->reason)`
   * comes first; seen on a real 26.05.5).
   */
  clearsReasonWhenUp(accounting: 'slurmdbd' | 'none'): boolean {
    return accounting === 'slurmdbd' || !this.atLeast('23.11') || this.atLeast('26.05');
  }

  /**
   * `scontrol reboot ASAP` with no nextstate: 22.05 sets next_state=RESUME, so the drain goes at
   * registration even when it was there before; from 23.02 only a drain the reboot itself set is lifted
   * (NODE_STATE_UNDRAIN) and an earlier one stays (src/slurmctld/proc_req.c, _slurm_rpc_reboot_nodes).
   */
  get asapDefaultsToResume(): boolean {
    return !this.atLeast('23.02');
  }

  /**
   * An unknown node on slurmrestd: up to v0.0.39 the plugin returns the error code, so 500 with
   * `errors[]` (v0.0.38: and `nodes: []`, seen on 22.05.8); from v0.0.40 op_handler_node returns
   * SLURM_SUCCESS after resp_error(), so 200 with `errors[]` and no `nodes`
   * (src/slurmrestd/plugins/openapi/slurmctld/nodes.c).
   */
  static unknownNodeStatus(apiVersion: string): 200 | 500 {
    return apiVersionNumber(apiVersion) >= 40 ? 200 : 500;
  }

  /** v0.0.38 and older: GET only for nodes (src/plugins/openapi/v0.0.38/nodes.c registers no POST). */
  static canUpdateNodes(apiVersion: string): boolean {
    return apiVersionNumber(apiVersion) >= 39;
  }
}

/** 38 for `v0.0.38`. */
export function apiVersionNumber(apiVersion: string): number {
  const match = /^v0\.0\.(\d+)$/.exec(apiVersion);
  if (!match) throw new Error(`not an openapi version: ${apiVersion}`);
  return Number(match[1]);
}
