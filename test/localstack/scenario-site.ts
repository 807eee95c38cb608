import { stringify } from 'yaml';

/**
 * One site for every scenario (a deployed stack has one site): `compute` to upgrade, one node of
 * which never returns to service; `held` whose second node runs a job long enough for a cancel to
 * land while its step drains; `deploy` nodes for a group deployment, one of which fails to deploy;
 * `scheduled` for the upgrade a schedule starts; `slow`, whose first node's prepare hangs (until
 * the phase timeout) for a deployment to be cancelled while it runs.
 */
export const SCENARIO_SITE = {
  compute: ['u0', 'u1', 'u2', 'u3'],
  neverReturns: 'u3',
  held: ['h0', 'h1', 'h2'],
  deploy: ['d0', 'd1', 'd2'],
  deployFails: 'd1',
  scheduled: ['s0', 's1'],
  slow: ['c0', 'c1'],
  hangs: 'c0',
} as const;

export function scenarioSiteYaml(): string {
  const { compute, neverReturns, held, deploy, deployFails, scheduled, slow, hangs } = SCENARIO_SITE;
  const nodes = [
    ...compute.map((name) => ({ name, ...(name === neverReturns ? { faults: { returnToService: 'never' } } : {}) })),
    // Ten million simulated seconds of job: the drain outlasts any cancel's delay.
    ...held.map((name, i) => ({ name, ...(i === 1 ? { wlm: { state: 'ALLOCATED', busySeconds: 10_000_000 } } : {}) })),
    ...deploy.map((name) => ({ name, ...(name === deployFails ? { faults: { deploy: 'fail' } } : {}) })),
    ...scheduled.map((name) => ({ name })),
    ...slow.map((name) => ({ name, ...(name === hangs ? { faults: { prepare: 'hang' } } : {}) })),
  ].map((node, i) => ({ nid: i + 1, ...node }));
  return stringify({
    nodes,
    groups: { compute: [...compute], held: [...held], scheduled: [...scheduled], upgrading: [], failed: [] },
    bootTemplates: ['img-2'],
    timing: { bootSeconds: 60, returnSeconds: 10, prepareSeconds: 30, deploySeconds: 60 },
  });
}
