import path from 'node:path';
import type { SiteState } from '../../simulator';
import { startCli, type CliResult } from './cli';

export interface SimulateProcess {
  urls: Record<'control' | 'slurmrestd' | 'bos' | 'hsm' | 'provisioner' | 'ssm', string>;
  /** The profile it wrote (`--profile-out`). */
  profile: string;
  /** `GET /sim/full-state`: the site's state with its change log and safety violations. */
  fullState(): Promise<SiteState>;
  stop(): Promise<CliResult>;
}

/** `rollout simulate --site FILE --profile-out DIR/...` as its own process: resolves once its first line (the URLs) is out. */
export async function startSimulate(siteFile: string, dir: string, extra: string[] = []): Promise<SimulateProcess> {
  const profile = path.join(dir, `profile-${path.basename(siteFile)}`);
  const { child, done } = startCli(['simulate', '--site', siteFile, '--profile-out', profile, ...extra]);
  const firstLine = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const end = out.indexOf('\n');
      if (end >= 0) resolve(out.slice(0, end));
    });
    void done.then((r) => reject(new Error(`rollout simulate ended (${r.code}) before printing its URLs: ${r.stderr}`)));
  });
  const urls = JSON.parse(firstLine) as SimulateProcess['urls'];
  return {
    urls,
    profile,
    fullState: async () => (await (await fetch(`${urls.control}/sim/full-state`)).json()) as SiteState,
    stop: () => {
      child.kill('SIGTERM');
      return done;
    },
  };
}
