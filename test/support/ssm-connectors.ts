import { SIMULATED_RELAY } from '../../local/simulated-trigger-relay';
import { createSiteFromProfile, type SiteClients } from '../../adapters/site';
import { parseSiteProfile, type SiteProfileInput } from '../../core/site/site-profile';
import type { ConnectorState } from '../../ports/connector-state';
import { siteProfileFor, type RunningSiteSimulator } from '../../simulator';

type Connect = (simulator: RunningSiteSimulator, deps: { connectorState: ConnectorState }) => Promise<SiteClients>;

/**
 * For EmbeddedRuntime's `connectors`: the site a `rollout simulate --transport ssm --profile-out`
 * profile describes (scontrol + slurm-reboot (`wwctl node set --image`) + slurm inventory + command
 * provisioner, all over the simulator's SSM endpoint), built by createSiteFromProfile as the CLI and
 * the Lambdas build it, on the simulator's clock, with the runtime's table as connector state.
 */
export const ssmConnectors: Connect = (simulator, deps) => profileConnectors((urls) => siteProfileFor(urls, 'ssm', 1))(simulator, deps);

/**
 * As ssmConnectors, with the site's events on (issue 29): the scontrol workload manager's siteEvents, so a
 * rolling upgrade sets its Slurm triggers by strigger on the head node and waits for their firings.
 */
export function siteEventConnectors(backstopSeconds?: number): Connect {
  return profileConnectors((urls) => ({
    ...siteProfileFor(urls, 'ssm', 1),
    workloadManager: { type: 'scontrol', siteEvents: { relay: SIMULATED_RELAY, ...(backstopSeconds !== undefined ? { backstopSeconds } : {}) } },
  }));
}

/**
 * For EmbeddedRuntime's `connectors`: the site the profile `profileOf(urls)` describes, built by
 * createSiteFromProfile (as the CLI and the Lambdas build it) on the simulator's clock; relative
 * paths (a file inventory) are read from `baseDir`.
 */
export function profileConnectors(profileOf: (urls: RunningSiteSimulator['urls']) => SiteProfileInput, baseDir?: string): Connect {
  return async (simulator, { connectorState }) => {
    const profile = parseSiteProfile(profileOf(simulator.urls));
    const { site, provisioner, taskCommands } = await createSiteFromProfile(profile, {
      connectorState,
      clock: { now: () => simulator.simulator.clock.now() },
      ...(baseDir ? { baseDir } : {}),
    });
    return { ...site, ...(provisioner ? { provisioner } : {}), ...(taskCommands ? { taskCommands } : {}) };
  };
}

/**
 * As ssmConnectors, but every call goes to connectors built afresh (a new SSM client, new
 * slurm-reboot and provisioner instances), as each activity of the deployed stack runs in its own
 * Lambda invocation: nothing is shared between calls but the table.
 */
export const freshSsmConnectorsPerCall: Connect = async (simulator, deps) => {
  const build = () => ssmConnectors(simulator, deps);
  const fresh = <S extends keyof typeof PORT_METHODS>(service: S) =>
    Object.fromEntries(
      PORT_METHODS[service].map((method) => [
        method,
        async (...args: unknown[]) => ((await build())[service] as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!(...args),
      ]),
    ) as unknown as NonNullable<SiteClients[S]>;
  const { nodeExec, fanout } = (await build()).taskCommands!;
  const transport = async () => (await build()).taskCommands!.transport;
  return {
    workloadManager: fresh('workloadManager'),
    bootService: fresh('bootService'),
    inventory: fresh('inventory'),
    provisioner: fresh('provisioner'),
    commands: fresh('commands'),
    reservations: fresh('reservations'),
    taskCommands: {
      nodeExec,
      fanout,
      transport: {
        run: async (script, options) => (await transport()).run(script, options),
        start: async (script, options) => (await transport()).start(script, options),
        poll: async (id) => (await transport()).poll(id),
        findStarted: async (tag, since) => (await transport()).findStarted(tag, since),
      },
    },
  };
};

/** Every method of each port (ports/site.ts, ports/provisioner.ts). */
const PORT_METHODS = {
  workloadManager: ['getNodes', 'getJobEnds', 'drain', 'resume', 'fail', 'drainNodes', 'resumeNodes', 'failNodes'],
  bootService: ['templateExists', 'createSession', 'getSession'],
  inventory: ['getGroupMembers', 'addGroupMembers', 'removeGroupMembers', 'listNodes'],
  provisioner: ['startAction', 'getAction'],
  commands: ['run', 'start', 'poll', 'findStarted'],
  reservations: ['list', 'apply'],
} as const satisfies { [S in Exclude<keyof Required<SiteClients>, 'taskCommands' | 'nodeNames'>]: readonly (keyof NonNullable<SiteClients[S]>)[] };
