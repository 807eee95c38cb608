import { createInterface } from 'node:readline';
import type { ControlPlaneEndpoints } from '../../control-plane/endpoints';
import { startCli, type CliResult } from './cli';

export interface RunningServe {
  endpoints: ControlPlaneEndpoints;
  /** SIGTERM, then the process's result. */
  stop(): Promise<CliResult>;
}

/** Starts `rollout serve ARGS` as its own process and reads its first line: the endpoints. */
export async function startServe(args: string[]): Promise<RunningServe> {
  const { child, done } = startCli(['serve', ...args]);
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    void done.then((result) => reject(new Error(`rollout serve ended before its first line (${result.code}): ${result.stderr}`)));
  });
  lines.close();
  return {
    endpoints: JSON.parse(first) as ControlPlaneEndpoints,
    async stop() {
      child.kill('SIGTERM');
      return done;
    },
  };
}
