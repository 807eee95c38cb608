import type { TaskLogEntry } from './models/task-runner';
import type { SiteState } from './site-simulator';

/** The site state file `--site-state-out` writes: a documented contract, so only its documented keys. */
export interface SiteStateFile {
  groups: Record<string, string[]>;
  nodes: Record<
    string,
    { wlmState: string; wlmReason?: string; bootCount: number; initialBusySeconds: number | null; outOfService: [number, number | null][] }
  >;
  /** Task-graph task runs: `{node, task, start, end, result}` in simulated seconds from the start; result `ok`, `failed` or `timeout`. */
  taskLog: TaskLogEntry[];
}

export function siteStateContract(state: SiteState): SiteStateFile {
  const nodes: SiteStateFile['nodes'] = {};
  for (const [name, node] of Object.entries(state.nodes)) {
    nodes[name] = {
      wlmState: node.wlmState,
      ...(node.wlmReason ? { wlmReason: node.wlmReason } : {}),
      bootCount: node.bootCount,
      initialBusySeconds: node.initialBusySeconds,
      outOfService: node.outOfService,
    };
  }
  return { groups: state.groups, nodes, taskLog: state.taskLog };
}
