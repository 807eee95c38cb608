import { ExclusiveGroupConflictError, InvalidInputError, UnknownNodesError } from '../../../core/errors';
import { nodesOutsideBootSets } from '../../../core/rolling-upgrade/boot-sets';
import { nidName, nidOfName, parseNidNamePattern, type NidNamePattern } from '../../../core/site/node-names';
import { parseSiteProfile, workloadManagerNames } from '../../../core/site/site-profile';
import type { HsmInventory } from '../../../adapters/site/hsm-inventory';
import { NameMappedWorkloadManager } from '../../../adapters/site/node-name-map';
import { SlurmRestWorkloadManager } from '../../../adapters/site/slurm-rest-workload-manager';
import { parseSiteDefinition, type SiteDefinitionInput } from '../../../simulator';
import { startTestSite, type TestSite } from '../../support/simulator';

const xname = (i: number) => `x3000c0s${19 + Math.floor(i / 2)}b1n${i % 2}`;

/** A CSM-style site: xnames in HSM and BOS, `nid{nid:06}` in Slurm; template cos has boot sets. */
function csmSite(extra: { disabled?: number; application?: number } = {}): SiteDefinitionInput {
  const nodes = Array.from({ length: 6 }, (_, i) => ({
    name: xname(i),
    nid: 6 + i,
    ...(i === extra.application ? { role: 'Application', labels: { subrole: 'UAN' } } : {}),
    ...(i === extra.disabled ? { available: false } : {}),
  }));
  return {
    csm: {},
    nodes,
    groups: { compute: nodes.map((n) => n.name), upgrading: [], failed: [], 'uan-nodes': [], 'spare-pool': [] },
    exclusiveGroups: { kind: ['compute', 'uan-nodes'] },
    bootTemplates: [
      { name: 'cos', bootSets: { compute: { node_roles_groups: ['Compute'] } } },
      { name: 'uan', bootSets: { uan: { node_groups: ['uan-nodes'] } } },
    ],
    timing: { bootSeconds: 60, returnSeconds: 10 },
  };
}

describe('node names: one node, two names', () => {
  const csm = parseNidNamePattern('nid{nid:06}') as NidNamePattern;

  it('makes and reads CSM nid names, and refuses what is off the pattern', () => {
    expect(nidName(csm, 6)).toBe('nid000006');
    expect(nidOfName(csm, 'nid000006')).toBe(6);
    expect(nidOfName(csm, 'nid0006')).toBeUndefined();
    expect(nidOfName(csm, 'x3000c0s19b1n0')).toBeUndefined();
    expect(parseNidNamePattern('nid')).toMatch(/\{nid\}/);
    expect(parseNidNamePattern('{nid}{nid}')).toMatch(/exactly once/);
  });

  it('defaults to nid{nid:06} with an hsm inventory, the same names elsewhere, and names the field of a bad pattern', () => {
    const base = { workloadManager: { type: 'slurmrestd', url: 'https://s' }, bootService: { type: 'bos', url: 'https://b' } };
    expect(workloadManagerNames(parseSiteProfile({ ...base, inventory: { type: 'hsm', url: 'https://h' } }))).toBe('nid{nid:06}');
    expect(workloadManagerNames(parseSiteProfile({ ...base, inventory: { type: 'file', path: 'x.yaml' } }))).toBe('same');
    expect(workloadManagerNames(parseSiteProfile({ ...base, inventory: { type: 'hsm', url: 'https://h' }, nodeNames: { workloadManager: 'same' } }))).toBe(
      'same',
    );
    expect(() => parseSiteProfile({ ...base, inventory: { type: 'hsm', url: 'https://h' }, nodeNames: { workloadManager: 'node{id}' } })).toThrow(
      /nodeNames\.workloadManager/,
    );
  });
});

describe('a CSM-style simulated site through the connectors', () => {
  let t: TestSite | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("serves nid names in Slurm and xnames in HSM; the session's workload manager takes xnames and answers by them", async () => {
    t = await startTestSite(csmSite());
    const slurm = (await (await fetch(`${t.site.urls.slurmrestd}/slurm/v0.0.41/nodes`)).json()) as { nodes: { name: string }[] };
    expect(slurm.nodes.map((n) => n.name)).toEqual(['nid000006', 'nid000007', 'nid000008', 'nid000009', 'nid000010', 'nid000011']);
    const wlm = t.clients.workloadManager;
    expect(wlm).toBeInstanceOf(NameMappedWorkloadManager);
    const nodes = await wlm.getNodes([xname(0), xname(1), 'x9999c0s1b0n0']);
    expect([...nodes.keys()]).toEqual([xname(0), xname(1)]);
    expect(nodes.get(xname(0))!.name).toBe(xname(0));
    await wlm.drainNodes([xname(0), xname(1)], 'rolling-upgrade');
    // Slurm itself shows the drain on the nid names.
    const raw = new SlurmRestWorkloadManager({ baseUrl: t.site.urls.slurmrestd });
    expect((await raw.getNodes(['nid000006'])).get('nid000006')!.flags).toContain('DRAIN');
    expect(t.state().nodes[xname(0)]!.wlmState).toMatch(/DRAIN/);
    await expect(wlm.drainNodes(['x9999c0s1b0n0'], 'rolling-upgrade')).rejects.toBeInstanceOf(UnknownNodesError);
    await expect(t.clients.nodeNames!.toInventory(['nid000007', 'nid999999', 'n1'])).resolves.toEqual(new Map([['nid000007', xname(1)]]));
  });

  it('reads named nodes by xname (getNodes): a name that is no xname is never sent (SMD would answer 400) and is absent', async () => {
    t = await startTestSite(csmSite({ disabled: 2 }));
    const inventory = t.clients.inventory as HsmInventory;
    const read = await inventory.getNodes([xname(2), xname(0), 'nid000006', 'x9999c0s1b0n0']);
    expect([...read.keys()].sort()).toEqual([xname(0), xname(2)]);
    expect(read.get(xname(2))).toMatchObject({ nid: 8, available: false, alive: true });
    // SMD's own answer to an id that is not an xname, as the simulator gives it.
    const bad = await fetch(`${t.site.urls.hsm}/hsm/v2/State/Components?type=Node&id=nid000006`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/bad query param: Argument was not a valid xname ID/);
  });

  it("checks labels by HSM's rule, member ids as xnames, and names the other group of an exclusive-group 409", async () => {
    t = await startTestSite(csmSite());
    const hsm = t.clients.inventory as HsmInventory;
    expect(hsm.labelProblem('rack=x3000')).toMatch(/rack:x3000/);
    expect(hsm.labelProblem('Compute-Nodes')).toBeUndefined();
    // HSM lowercases labels: the same group.
    await expect(hsm.getGroupMembers('COMPUTE')).resolves.toHaveLength(6);
    await expect(hsm.getGroupMembers('rack=x3000')).rejects.toBeInstanceOf(InvalidInputError);
    const badId = await hsm.addGroupMembers('upgrading', ['nid000006']).catch((e: unknown) => e);
    expect(badId).toBeInstanceOf(InvalidInputError);
    expect((badId as InvalidInputError).problems[0]).toMatchObject({ field: 'nodes[0]' });
    // The simulated HSM answers the same refusal when the check is skipped.
    const direct = await fetch(`${t.site.urls.hsm}/hsm/v2/groups/upgrading/members`, {
      method: 'POST',
      body: JSON.stringify({ id: 'nid000006' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(direct.status).toBe(400);
    // HSM's answer to a member POST: [{"URI": ...}].
    const added = await fetch(`${t.site.urls.hsm}/hsm/v2/groups/upgrading/members`, {
      method: 'POST',
      body: JSON.stringify({ id: xname(0) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(added.status).toBe(201);
    expect(await added.json()).toEqual([{ URI: `/hsm/v2/groups/upgrading/members/${xname(0)}` }]);
    // Already a member: done. In another group of the exclusive group: refused, naming that group.
    await expect(hsm.addGroupMembers('upgrading', [xname(0)])).resolves.toBeUndefined();
    const conflict = await hsm.addGroupMembers('uan-nodes', [xname(2)]).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ExclusiveGroupConflictError);
    expect((conflict as Error).message).toMatch(/member of group 'compute' of the exclusive group 'kind'/);
  });

  it("answers a template's boot sets, and a reboot acts upon the limit's nodes inside them and enabled in HSM only", async () => {
    t = await startTestSite(csmSite({ application: 1, disabled: 2 }));
    const boot = t.clients.bootService;
    const sets = await boot.templateBootSets!('cos');
    expect(sets).toEqual([{ name: 'compute', nodeRolesGroups: ['Compute'] }]);
    const inventory = await t.clients.inventory.listNodes();
    const outside = nodesOutsideBootSets(
      inventory.map((n) => n.name),
      sets!,
      {
        groupMembers: new Map(),
        nodes: new Map(inventory.map((n) => [n.name, { role: n.role, enabled: n.available !== false }])),
      },
    );
    expect([...outside.keys()]).toEqual([xname(1), xname(2)]);
    await boot.createSession({ name: 'rollout-test-1', operation: 'reboot', templateName: 'cos', limit: { nodes: [0, 1, 2, 3].map(xname) } });
    t.advance(5);
    const session = await boot.getSession('rollout-test-1');
    expect(Object.keys(session!.nodes).sort()).toEqual([xname(0), xname(3)]);
    // A limit that leaves nothing: BOS's session setup fails the session.
    await boot.createSession({ name: 'rollout-test-2', operation: 'reboot', templateName: 'cos', limit: { nodes: [xname(1)] } });
    t.advance(5);
    expect(await boot.getSession('rollout-test-2')).toMatchObject({ status: 'complete', error: 'No nodes were found to act upon.' });
  });

  it('refuses a CSM site whose nodes are not xnames or whose labels HSM would refuse', () => {
    expect(() => parseSiteDefinition({ csm: {}, nodes: [{ name: 'n1', nid: 1 }], groups: { Compute: ['n1'] } })).toThrow(
      /nodes\[0\]\.name: 'n1' is not a node xname[\s\S]*groups\.Compute/,
    );
  });
});
