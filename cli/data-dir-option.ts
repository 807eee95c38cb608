import { stat } from 'node:fs/promises';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';

/**
 * A `--data-dir` that is read (`rollout session`, `events`) must exist: a mistyped one would otherwise
 * show an empty store as if nothing had ever run. Exit 2 naming it.
 */
export async function existingDataDir(dataDir: string): Promise<string> {
  const found = await stat(dataDir).catch(() => undefined);
  if (!found)
    throw new CliError(
      `--data-dir '${dataDir}' does not exist: give the directory a run kept its sessions in (\`rollout upgrade\`, \`deploy\` or \`serve\` with --data-dir create it)`,
      ExitCode.invalidInput,
    );
  if (!found.isDirectory()) throw new CliError(`--data-dir '${dataDir}' is not a directory`, ExitCode.invalidInput);
  return dataDir;
}

/** A `--data-dir` a run keeps its sessions in: created when missing, which is said once, on stderr (a typo shows at once). */
export async function dataDirForRun(dataDir: string): Promise<string> {
  const found = await stat(dataDir).catch(() => undefined);
  if (!found) process.stderr.write(`creating the data directory ${dataDir}\n`);
  else if (!found.isDirectory()) throw new CliError(`--data-dir '${dataDir}' is not a directory`, ExitCode.invalidInput);
  return dataDir;
}
