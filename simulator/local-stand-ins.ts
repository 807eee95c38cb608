import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The programs the command connectors and a simulated profile's templates run on a head node. */
export const HEAD_NODE_PROGRAMS = ['scontrol', 'sinfo', 'squeue', 'strigger', 'sbatch', 'scancel', 'wwctl', 'nodeset', 'provision'] as const;
export type HeadNodeProgram = (typeof HEAD_NODE_PROGRAMS)[number];

/**
 * Writes a stand-in for each head-node program into `dir`: a POSIX sh script that passes its argv,
 * untouched, to the simulated head node at `execUrl` (`{control}/sim/exec`) with curl and answers
 * with the command's stdout, stderr and exit code. With them a `transport: {type: local}` profile
 * drives a `rollout simulate` site as it would a real admin host. Returns each program's path.
 */
export async function writeHeadNodeStandIns(dir: string, execUrl: string): Promise<Record<HeadNodeProgram, string>> {
  await mkdir(dir, { recursive: true });
  const paths = {} as Record<HeadNodeProgram, string>;
  for (const program of HEAD_NODE_PROGRAMS) {
    const file = path.join(path.resolve(dir), program);
    await writeFile(file, standIn(program, execUrl), 'utf8');
    await chmod(file, 0o755);
    paths[program] = file;
  }
  return paths;
}

function standIn(program: string, execUrl: string): string {
  return `#!/bin/sh
# ${program} on the simulated head node of a \`rollout simulate\` site: argv goes as is (NUL-separated).
url='${execUrl}'
out=$(mktemp) || exit 70
trap 'rm -f "$out"' EXIT
# SLURM_TIME_FORMAT (e.g. %s for epoch times) changes what Slurm prints: it goes along.
if [ -n "\${SLURM_TIME_FORMAT:-}" ]; then set -- env "SLURM_TIME_FORMAT=$SLURM_TIME_FORMAT" '${program}' "$@"; else set -- '${program}' "$@"; fi
printf '%s\\0' "$@" | curl -sS --fail --data-binary @- -o "$out" "$url" || exit 70
while read -r state code id < "$out" && [ "$state" = running ]; do
  curl -sS --fail -o "$out" "$url/$id" || exit 70
done
[ "$state" = done ] || { echo "${program}: unexpected answer from $url" >&2; exit 70; }
tail -n +2 "$out"
[ "$code" = 0 ] || curl -sS "$url/$id/stderr" >&2
exit "$code"
`;
}
