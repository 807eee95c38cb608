import { createSiteClients, type SiteClients } from '../../adapters/site';
import { startSiteSimulator, type RunningSiteSimulator } from '../../simulator/http-server';
import { SimClock } from '../../time/sim-clock';
import type { SiteState } from '../../simulator/site-simulator';
import { parseSiteDefinition, type SiteDefinitionInput } from '../../simulator/site-file';

export interface TestSite {
  site: RunningSiteSimulator;
  clients: SiteClients & { provisioner: NonNullable<SiteClients['provisioner']> };
  /** Moves simulated time on by `seconds`: the clock is stepped by hand, so tests never sleep. */
  advance(seconds: number): void;
  state(): SiteState;
  close(): Promise<void>;
}

/** A simulator on a hand-stepped clock, with the real HTTP connectors pointed at it. */
export async function startTestSite(input: SiteDefinitionInput): Promise<TestSite> {
  let realMs = 0;
  const clock = new SimClock({ timeScale: 1, realNow: () => realMs });
  const definition = parseSiteDefinition(input);
  const site = await startSiteSimulator({ site: definition, clock });
  const clients = createSiteClients({
    workloadManagerUrl: site.urls.slurmrestd,
    bootServiceUrl: site.urls.bos,
    inventoryUrl: site.urls.hsm,
    provisionerUrl: site.urls.provisioner,
    // As the embedded default builds them: a CSM-style site's names are mapped and its HSM ids are xnames.
    nodeNames: definition.csm?.slurmNodeNames ?? 'same',
    xnames: definition.csm !== undefined,
  });
  const { provisioner } = clients;
  if (!provisioner) throw new Error('createSiteClients gave no provisioner for a provisionerUrl');
  return {
    site,
    clients: { ...clients, provisioner },
    advance: (seconds) => {
      realMs += seconds * 1000;
    },
    state: () => site.state(),
    close: () => site.close(),
  };
}

/** `count` node names like x3000c0s1b0n0, in order. */
export function nodeNames(count: number, rack = 'x3000'): string[] {
  return Array.from({ length: count }, (_, i) => `${rack}c0s${i + 1}b0n0`);
}

export function nodesOf(names: readonly string[], extra: (name: string, i: number) => object = () => ({})): SiteDefinitionInput['nodes'] {
  return names.map((name, i) => ({ name, nid: i + 1, ...extra(name, i) }));
}

/** Polls `check` until it returns a value other than undefined, at most `timeoutMs` of real time. */
export async function pollUntil<T>(check: () => Promise<T | undefined>, timeoutMs = 5000, intervalMs = 10): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
