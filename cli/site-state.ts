import { writeFile } from 'node:fs/promises';
import type { SiteState } from '../simulator';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';

/** The site state file `--site-state-out` writes: a documented contract, so only its documented keys. */
export interface SiteStateFile {
  groups: Record<string, string[]>;
  nodes: Record<
    string,
    { wlmState: string; wlmReason?: string; bootCount: number; initialBusySeconds: number | null; outOfService: [number, number | null][] }
  >;
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
  return { groups: state.groups, nodes };
}

/** Writes `--site-state-out`; a real site has no simulated state to write. */
export async function writeSiteState(file: string, state: SiteState | undefined): Promise<void> {
  if (!state) throw new CliError('--site-state-out needs a simulated site (--site): a real site has no simulated state to write', ExitCode.invalidInput);
  await writeFile(file, `${JSON.stringify(siteStateContract(state), null, 2)}\n`);
}
