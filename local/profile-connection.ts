import { createSiteFromProfile, type SiteFromProfile } from '../adapters/site';
import { describeError } from '../core/errors';
import type { SiteProfile } from '../core/site/site-profile';
import type { ConnectorRecords, ConnectorState, ConnectorStateKind } from '../ports/connector-state';
import { SimClock } from '../simulator';

/** A site profile as a process reads it: the profile, and where its relative paths (token files, a file inventory) are read from. */
export interface ProfileSource {
  profile: SiteProfile;
  baseDir: string;
}

/** A profile's site, connected: its services, its clock, and the table its record-keeping connectors use once a runtime has one. */
export interface ProfileConnection {
  site: SiteFromProfile;
  /** A `rollout simulate` site's scaled simulated clock; undefined: the wall clock. */
  clock: SimClock | undefined;
  /** The runtime's ConnectorState, once it has opened its table: slurm-reboot, the command provisioner and the slurm inventory keep their records there. */
  bindConnectorState(state: ConnectorState): void;
}

const connections = new WeakMap<SiteProfile, Promise<ProfileConnection>>();

/**
 * The profile's site, connected once per process (secrets resolved once, one client per service): the
 * CLI's checks before a run (its groups, its inventory) and the embedded runtime that runs it share it.
 */
export function connectProfile(source: ProfileSource): Promise<ProfileConnection> {
  let connection = connections.get(source.profile);
  if (!connection) {
    connection = openConnection(source);
    connections.set(source.profile, connection);
  }
  return connection;
}

async function openConnection({ profile, baseDir }: ProfileSource): Promise<ProfileConnection> {
  const clock = profile.simulatedTime ? await simulatedSiteClock(profile.simulatedTime) : undefined;
  const connectorState = new LateConnectorState();
  const site = await createSiteFromProfile(profile, { baseDir, connectorState, ...(clock ? { clock } : {}) });
  return { site, clock, bindConnectorState: (state) => connectorState.bind(state) };
}

/**
 * The runtime's ConnectorState, known once it has opened its table. Before that nothing is recorded:
 * a read (the CLI's group check before a run) finds no record, as Slurm alone answers; a write refuses.
 */
class LateConnectorState implements ConnectorState {
  private bound: ConnectorState | undefined;

  bind(state: ConnectorState): void {
    this.bound = state;
  }

  records<T extends { name: string }>(kind: ConnectorStateKind): ConnectorRecords<T> {
    const bound = () => {
      if (!this.bound) throw new Error(`the ${kind} connector keeps its records in the rollout table, and no runtime has opened one yet`);
      return this.bound.records<T>(kind);
    };
    return {
      get: async (name) => (this.bound ? this.bound.records<T>(kind).get(name) : undefined),
      create: (record) => bound().create(record),
      update: (record) => bound().update(record),
    };
  }
}

/**
 * A `rollout simulate` site keeps its own scaled simulated time; the workflow's clock must read the
 * same time (a node counts as rebooted only if slurmd registered after the boot request). Virtual
 * time cannot span two processes, so this is that simulator's scaled clock, read from its control URL.
 */
async function simulatedSiteClock({ timeScale, controlUrl }: { timeScale: number; controlUrl: string }): Promise<SimClock> {
  const url = `${controlUrl}/sim/time`;
  const before = performance.now();
  let now: number;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`answered ${response.status}`);
    ({ now } = (await response.json()) as { now: number });
  } catch (err) {
    throw new Error(`the simulated site at ${url} cannot be reached: ${describeError(err)}`, { cause: err });
  }
  const halfTrip = (performance.now() - before) / 2;
  return new SimClock({ timeScale, startAt: now + Math.floor(halfTrip * timeScale) });
}
