import { writeFile } from 'node:fs/promises';
import { loadSiteProfileFile } from '../adapters/site';
import { describeError } from '../core/errors';
import type { SiteSource } from '../local/open-runtime';
import type { ControlPlane } from '../control-plane/control-plane';
import { loadSiteFile, siteStateContract, type SiteStateFile } from '../simulator';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';

export interface SiteSourceOptions {
  site?: string;
  siteConfig?: string;
}

/** Reads `--site` (a simulated site) or `--site-config` (a site connection profile): exactly one of them. */
export async function loadSiteSource(options: SiteSourceOptions): Promise<SiteSource> {
  if ((options.site === undefined) === (options.siteConfig === undefined)) {
    throw new CliError('give exactly one of --site FILE (a simulated site) and --site-config FILE (a site connection profile)', ExitCode.invalidInput);
  }
  if (options.site !== undefined) return { kind: 'simulated', definition: await loadSiteFile(options.site) };
  const { profile, baseDir } = await loadSiteProfileFile(options.siteConfig!);
  return { kind: 'profile', profile, baseDir };
}

/**
 * Writes `--site-state-out`: the in-process simulator's state, or a `rollout simulate` site's
 * `/sim/state` (the same document). A real site has no simulated state to write.
 */
export async function writeSiteState(file: string, source: SiteSource, runtime: ControlPlane): Promise<void> {
  await writeFile(file, `${JSON.stringify(await siteStateOf(source, runtime), null, 2)}\n`);
}

async function siteStateOf(source: SiteSource, runtime: ControlPlane): Promise<SiteStateFile> {
  const state = runtime.siteState();
  if (state) return siteStateContract(state);
  const controlUrl = source.kind === 'profile' ? source.profile.simulatedTime?.controlUrl : undefined;
  if (!controlUrl) {
    throw new CliError(
      '--site-state-out needs a simulated site (--site, or a profile written by rollout simulate): a real site has no simulated state to write',
      ExitCode.invalidInput,
    );
  }
  const url = `${controlUrl}/sim/state`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`answered ${response.status}`);
    return (await response.json()) as SiteStateFile;
  } catch (err) {
    throw new CliError(`the simulated site at ${url} cannot be reached: ${describeError(err)}`, ExitCode.notCompleted);
  }
}
