import type { Command } from 'commander';
import type { Environment, EnvironmentNode } from '../../core/environments';
import { callApi, resolveApiBase, type ApiTargetOptions } from '../api-client';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';

interface EnvOptions extends ApiTargetOptions {
  json?: boolean;
}

function withTarget(command: Command): Command {
  return command
    .option('--endpoint <url>', 'a `rollout serve` (its first line names it); the REST API it serves is used')
    .option('--api <url>', 'the REST API itself')
    .option('--json', 'print JSON');
}

/** A whole positive number for an id option or argument, else exit 2 naming it. */
function wholeId(value: string, name: string): number {
  if (!/^[1-9][0-9]*$/.test(value)) throw new CliError(`${name} must be a positive whole number, got '${value}'`, ExitCode.invalidInput);
  return Number(value);
}

const environmentLine = (env: Environment) =>
  `${env.id}\t${env.name}\trelease ${env.release_id}\t${env.status}\t${env.nodes.length} node(s)${env.original_cluster_id === undefined ? '' : `\tseed of ${env.original_cluster_id}`}`;

function print(options: EnvOptions, value: unknown, text: string): void {
  process.stdout.write(options.json ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);
}

/** `rollout env`: Fuel's environments and their upgrade seeds, as a client of the REST API. */
export function registerEnvCommands(program: Command): void {
  const env = program.command('env').description("Environments and Fuel's upgrade seeds (clone, assign), through the REST API of a `rollout serve` (--endpoint) or given (--api)");

  withTarget(env.command('list'))
    .description('List environments (generated attributes masked)')
    .action(async (options: EnvOptions) => {
      const environments = await callApi<Environment[]>(await resolveApiBase(options), 'GET', '/environments');
      print(options, environments, environments.length === 0 ? 'no environments' : environments.map(environmentLine).join('\n'));
    });

  withTarget(env.command('get'))
    .description('Show one environment: attributes (generated ones masked) and nodes')
    .argument('<id>', 'environment id')
    .action(async (id: string, options: EnvOptions) => {
      const environment = await callApi<Environment>(await resolveApiBase(options), 'GET', `/environments/${wholeId(id, 'the environment id')}`);
      const nodes = environment.nodes.map((n) => `  node ${n.id}\t${n.name}\t${n.roles.join(',')}\t${n.ip}\t${n.mac}`);
      print(options, environment, [environmentLine(environment), ...nodes].join('\n'));
    });

  withTarget(env.command('clone'))
    .description("Create the environment's upgrade seed on a newer release (attributes copied and upgraded)")
    .argument('<id>', 'the original environment id')
    .requiredOption('--name <name>', 'name of the seed')
    .requiredOption('--release <id>', 'the release to upgrade to')
    .action(async (id: string, options: EnvOptions & { name: string; release: string }) => {
      const body = { name: options.name, release_id: wholeId(options.release, '--release') };
      const seed = await callApi<Environment>(await resolveApiBase(options), 'POST', `/environments/${wholeId(id, 'the environment id')}/upgrade/clone`, body);
      print(options, seed, `created upgrade seed ${seed.id} '${seed.name}' (release ${seed.release_id}) of environment ${seed.original_cluster_id}`);
    });

  withTarget(env.command('assign'))
    .description("Move a node of the seed's original environment into the seed, with its id, roles and addresses")
    .argument('<seed-id>', 'the upgrade seed id')
    .requiredOption('--node <id>', 'the node id')
    .action(async (seedId: string, options: EnvOptions & { node: string }) => {
      const body = { node_id: wholeId(options.node, '--node') };
      const node = await callApi<EnvironmentNode & { cluster_id: number }>(await resolveApiBase(options), 'POST', `/environments/${wholeId(seedId, 'the seed id')}/upgrade/assign`, body);
      print(options, node, `assigned node ${node.id} (${node.name}, ${node.roles.join(',')}, ${node.ip}) to environment ${node.cluster_id}`);
    });
}
