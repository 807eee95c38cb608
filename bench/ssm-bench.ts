import { performance } from 'node:perf_hooks';
import { createCommandSite, SsmTransport } from '../adapters/site/commands';
import { EmbeddedRuntime } from '../local/embedded-runtime';
import { HEAD_NODE_INSTANCE_ID } from '../simulator/models/head-node';
import { fleet, fleetUpgradeRequest, type RollingUpgradeScenario } from './rolling-upgrade-bench';

/**
 * A rolling upgrade driven through scontrol over SSM, slurm-reboot and the slurm inventory (the real
 * @aws-sdk/client-ssm against the simulator's SSM endpoint): what it costs in SSM calls and
 * command-output bytes, per node.
 */
export async function benchSsmRollingUpgrade(s: RollingUpgradeScenario): Promise<string> {
  let transport: SsmTransport | undefined;
  const runtime = await EmbeddedRuntime.start({
    site: fleet(s),
    connectors: (simulator, { connectorState }) => {
      transport = new SsmTransport({
        instanceIds: [HEAD_NODE_INSTANCE_ID],
        region: 'us-east-1',
        endpoint: simulator.url,
        credentials: { accessKeyId: 'sim', secretAccessKey: 'sim' },
        pollIntervalMs: 2,
        maxPollIntervalMs: 10,
      });
      return createCommandSite({ transport, templates: ['cos-2.4'], clock: { now: () => simulator.simulator.clock.now() }, connectorState });
    },
  });
  try {
    const started = performance.now();
    const run = await runtime.run('rollingUpgrade', fleetUpgradeRequest(s));
    const outcome = await run.outcome;
    const wallSeconds = (performance.now() - started) / 1000;
    const nodes = await runtime.store.listNodes(run.id);
    const { sendCommand, getCommandInvocation, outputBytes } = transport!.stats;
    const perNode = (n: number) => (n / s.nodes).toFixed(2);
    const byCommand = new Map<string, number>();
    for (const line of runtime.simulator.simulator.headNode.commandLog) {
      const words = line.split(' ').map((w) => w.replace(/^'|'$/g, ''));
      const kind = words.slice(0, words[1] === '--json' ? 4 : words[0] === 'scontrol' ? 2 : 1).join(' ');
      byCommand.set(kind, (byCommand.get(kind) ?? 0) + 1);
    }
    return [
      `== ${s.name} over SSM (scontrol + slurm-reboot + slurm inventory)`,
      `outcome: ${outcome.status}, ${nodes.filter((n) => n.status === 'UPGRADED').length} upgraded / ${nodes.filter((n) => n.status === 'FAILED').length} failed; wall ${wallSeconds.toFixed(1)} s`,
      `SSM SendCommand: ${sendCommand} (${perNode(sendCommand)} per node)`,
      `SSM GetCommandInvocation: ${getCommandInvocation} (${perNode(getCommandInvocation)} per node; the simulator answers InProgress at least once per command)`,
      `command output: ${outputBytes} bytes (${perNode(outputBytes)} per node)`,
      `commands sent: ${[...byCommand]
        .sort((a, b) => b[1] - a[1])
        .map(([kind, count]) => `${kind} ${count}`)
        .join(', ')}`,
    ].join('\n');
  } finally {
    await runtime.close();
  }
}
