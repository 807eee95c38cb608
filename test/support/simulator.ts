import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { createSiteClients, type SiteClients } from '../../adapters/site';
import { siteProfileFor } from '../../simulator';
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

/**
 * A simulated site of `names` (all in compute, template cos-2.4, a boot of 60 s and 10 s back to service) on
 * real time scaled by `timeScale`, served over HTTP, and a profile of its APIs written into `dir` (for
 * `--site-config`): another process reaches it as it would a real site.
 */
export async function startProfiledSite(
  names: readonly string[],
  timeScale: number,
  dir: string,
): Promise<{ simulator: RunningSiteSimulator; profile: string }> {
  const simulator = await startSiteSimulator({
    site: parseSiteDefinition({
      nodes: names.map((name, i) => ({ name, nid: i + 1 })),
      groups: { compute: [...names], upgrading: [], failed: [] },
      bootTemplates: ['cos-2.4'],
      timing: { bootSeconds: 60, returnSeconds: 10 },
    }),
    clock: new SimClock({ timeScale }),
  });
  const profile = path.join(dir, 'profile.yaml');
  await writeFile(profile, stringify(siteProfileFor(simulator.urls, 'http', timeScale)));
  return { simulator, profile };
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
