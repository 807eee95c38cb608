/* global process */
/**
 * A stand-in for pdsh on a head node, for LocalTransport tests: `fake-pdsh.mjs [-S] -w HOSTLIST COMMAND`
 * runs COMMAND with /bin/sh on this host once per node of the hostlist (simple `a[1-3,5]` forms),
 * each with ROLLOUT_NODE set to the node, and prefixes each output line with `node: ` as pdsh does.
 * `-S` exits with the largest exit status. Nodes named in $FAKE_PDSH_UNREACHABLE fail to connect.
 */
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
let largest = false;
let hostlist;
let i = 0;
for (; i < args.length && args[i].startsWith('-'); i++) {
  if (args[i] === '-S') largest = true;
  else if (args[i] === '-w') hostlist = args[++i];
}
const command = args.slice(i).join(' ');
const expand = (list) =>
  list.split(/,(?![^[]*\])/).flatMap((item) => {
    const match = /^(.*)\[([^\]]+)\](.*)$/.exec(item);
    if (!match) return [item];
    return match[2].split(',').flatMap((range) => {
      const [lo, hi = lo] = range.split('-');
      return Array.from({ length: Number(hi) - Number(lo) + 1 }, (_, k) => `${match[1]}${String(Number(lo) + k).padStart(lo.length, '0')}${match[3]}`);
    });
  });
const unreachable = new Set((process.env.FAKE_PDSH_UNREACHABLE ?? '').split(',').filter(Boolean));
let status = 0;
for (const node of expand(hostlist)) {
  if (unreachable.has(node)) {
    process.stderr.write(`pdsh@head: ${node}: ssh exited with exit code 255\n`);
    status = Math.max(status, 255);
    continue;
  }
  const run = spawnSync('/bin/sh', ['-c', command], { env: { ...process.env, ROLLOUT_NODE: node }, encoding: 'utf8' });
  for (const line of run.stdout.split('\n').filter(Boolean)) process.stdout.write(`${node}: ${line}\n`);
  for (const line of run.stderr.split('\n').filter(Boolean)) process.stderr.write(`${node}: ${line}\n`);
  status = Math.max(status, run.status ?? 255);
}
process.exitCode = largest ? status : 0;
