/* global process, fetch, setTimeout */
/**
 * A stand-in for `scontrol`, `sinfo` or `wwctl` on an admin host, for LocalTransport tests against the
 * simulator: `node sim-head-node.mjs PROGRAM ARGS...` runs that one command line on the simulated head
 * node (through the simulator's SSM endpoint, $SIM_SSM_URL) and answers with its stdout, stderr and
 * exit code, so the simulated Slurm sees exactly the argv the local shell delivered. SSM keeps the first
 * 24,000 characters of output: for small simulated sites only.
 */
const endpoint = process.env.SIM_SSM_URL;
if (!endpoint) {
  process.stderr.write('sim-head-node: SIM_SSM_URL is not set\n');
  process.exit(2);
}
const INSTANCE = 'i-00000000000000001';
const quote = (word) => `'${word.replaceAll("'", `'\\''`)}'`;
const line = process.argv.slice(2).map(quote).join(' ');

async function call(operation, body) {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': `AmazonSSM.${operation}` },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${operation}: ${answer.__type}: ${answer.message}`);
  return answer;
}

try {
  const { Command } = await call('SendCommand', { DocumentName: 'AWS-RunShellScript', InstanceIds: [INSTANCE], Parameters: { commands: [line] } });
  for (let polls = 0; ; polls++) {
    const invocation = await call('GetCommandInvocation', { CommandId: Command.CommandId, InstanceId: INSTANCE });
    if (invocation.Status !== 'InProgress') {
      process.stdout.write(invocation.StandardOutputContent);
      process.stderr.write(invocation.StandardErrorContent);
      process.exitCode = invocation.Status === 'Success' ? 0 : Math.max(1, invocation.ResponseCode);
      break;
    }
    if (polls > 1000) throw new Error(`${line}: still running after ${polls} polls`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
} catch (err) {
  process.stderr.write(`sim-head-node: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
