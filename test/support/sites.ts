import { parseSiteDefinition, type SiteDefinition, type SiteDefinitionInput } from '../../simulator';

type SiteNodeInput = SiteDefinitionInput['nodes'][number];

/** Node names n000, n001, ... in plan order. */
export const nodeName = (i: number) => `n${String(i).padStart(3, '0')}`;

/**
 * A small simulated site: `count` compute nodes in the group `compute` (plan order), empty
 * `upgrading` and `failed` groups, template `img-2`, short simulated timings.
 */
export function buildSite(
  count: number,
  options: {
    node?: (i: number) => Partial<SiteNodeInput>;
    groups?: Record<string, string[]>;
    timing?: SiteDefinitionInput['timing'];
    apiFaults?: SiteDefinitionInput['apiFaults'];
    /** The simulated Slurm release and accounting (default: the simulator's). */
    slurm?: SiteDefinitionInput['slurm'];
  } = {},
): SiteDefinition {
  const nodes = Array.from({ length: count }, (_, i) => ({ name: nodeName(i), nid: i + 1, rack: `r${Math.floor(i / 16)}`, ...options.node?.(i) }));
  return parseSiteDefinition({
    nodes,
    groups: options.groups ?? { compute: nodes.map((n) => n.name), upgrading: [], failed: [] },
    bootTemplates: ['img-1', 'img-2'],
    timing: options.timing ?? { bootSeconds: 60, returnSeconds: 10 },
    ...(options.apiFaults ? { apiFaults: options.apiFaults } : {}),
    ...(options.slurm ? { slurm: options.slurm } : {}),
  });
}

/** The request of the tests, with a short poll interval (10 simulated seconds). */
export function upgradeRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    startingLabel: 'compute',
    upgradingLabel: 'upgrading',
    failedLabel: 'failed',
    upgradeStepSize: 2,
    upgradeTemplateId: 'img-2',
    workloadManagerType: 'slurm',
    pollIntervalSeconds: 10,
    ...overrides,
  };
}
