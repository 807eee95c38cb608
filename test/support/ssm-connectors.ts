import { createSiteFromProfile, type SiteClients } from '../../adapters/site';
import { parseSiteProfile } from '../../core/site/site-profile';
import type { ConnectorState } from '../../ports/connector-state';
import { siteProfileFor, type RunningSiteSimulator } from '../../simulator';

type Connect = (simulator: RunningSiteSimulator, deps: { connectorState: ConnectorState }) => Promise<SiteClients>;

/**
 * For EmbeddedRuntime's `connectors`: the site a `rollout simulate --transport ssm --profile-out`
 * profile describes (scontrol + slurm-reboot (`wwctl node set --image`) + slurm inventory + command
 * provisioner, all over the simulator's SSM endpoint), built by createSiteFromProfile as the CLI and
 * the Lambdas build it, on the simulator's clock, with the runtime's table as connector state.
 */
export const ssmConnectors: Connect = async (simulator, { connectorState }) => {
  const profile = parseSiteProfile(siteProfileFor(simulator.urls, 'ssm', 1));
  const { site, provisioner } = await createSiteFromProfile(profile, { connectorState, clock: { now: () => simulator.simulator.clock.now() } });
  return { ...site, ...(provisioner ? { provisioner } : {}) };
};

/**
 * As ssmConnectors, but every call goes to connectors built afresh (a new SSM client, new
 * slurm-reboot and provisioner instances), as each activity of the deployed stack runs in its own
 * Lambda invocation: nothing is shared between calls but the table.
 */
export const freshSsmConnectorsPerCall: Connect = async (simulator, deps) => {
  const build = () => ssmConnectors(simulator, deps);
  const fresh = <S extends keyof typeof PORT_METHODS>(service: S) =>
    Object.fromEntries(
      PORT_METHODS[service].map((method) => [method, async (...args: unknown[]) => ((await build())[service] as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!(...args)]),
    ) as unknown as NonNullable<SiteClients[S]>;
  return { workloadManager: fresh('workloadManager'), bootService: fresh('bootService'), inventory: fresh('inventory'), provisioner: fresh('provisioner'), commands: fresh('commands') };
};

/** Every method of each port (ports/site.ts, ports/provisioner.ts). */
const PORT_METHODS = {
  workloadManager: ['getNodes', 'drain', 'resume', 'fail', 'drainNodes', 'resumeNodes', 'failNodes'],
  bootService: ['templateExists', 'createSession', 'getSession'],
  inventory: ['getGroupMembers', 'addGroupMembers', 'removeGroupMembers', 'listNodes'],
  provisioner: ['startAction', 'getAction'],
  commands: ['run', 'start', 'poll'],
} as const satisfies { [S in keyof Required<SiteClients>]: readonly (keyof NonNullable<SiteClients[S]>)[] };
