import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidInputError } from '../../core/errors';
import { loadSiteFile, parseSiteDefinition, type SiteDefinitionInput } from '../../simulator/site-file';

/** Extra keys allowed: some cases add unknown ones. */
type Site = Omit<SiteDefinitionInput, 'groups'> & { groups: Record<string, string[]>; [key: string]: unknown };

const validSite = (): Site => ({
  nodes: [
    { name: 'x3000c0s1b0n0', nid: 1, rack: 'x3000', tags: ['compute'], labels: { compute: 'true' } },
    { name: 'x3000c0s2b0n0', nid: 2, wlm: { state: 'ALLOCATED', busySeconds: 30 }, faults: { boot: 'fail' } },
  ],
  groups: { 'slurm-nodes': ['x3000c0s2b0n0', 'x3000c0s1b0n0'], 'failed-nodes': [] },
  bootTemplates: ['cos-2.4'],
});

function problemsOf(input: unknown): { field: string; message: string }[] {
  try {
    parseSiteDefinition(input, 'site file test.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    return (err as InvalidInputError).problems;
  }
  throw new Error('expected the site to be rejected');
}

/** A fresh valid site with `edit` applied. */
function withEdit(edit: (site: Site) => unknown): unknown {
  const site: Site = validSite();
  edit(site);
  return site;
}

describe('parseSiteDefinition', () => {
  it('applies the documented defaults and keeps group order', () => {
    const site = parseSiteDefinition(validSite());
    expect(site.nodes[0]).toMatchObject({ role: 'Compute', wlm: { state: 'IDLE', busySeconds: 0, responding: true }, faults: { tasks: {} } });
    expect(site.nodes[1]!.tags).toEqual([]);
    expect(site.nodes[1]!.labels).toEqual({});
    expect(site.nodes[1]!.roles).toEqual([]);
    expect(site.timing).toEqual({
      bootSeconds: 300,
      returnSeconds: 60,
      prepareSeconds: 120,
      deploySeconds: 600,
      taskSeconds: 30,
      epilogSeconds: 0,
      healthCheckSeconds: 0,
    });
    expect(site.slurm).toEqual({ version: '24.11.5', returnToService: 2, slurmdTimeoutSeconds: 600, resumeTimeoutSeconds: 600, accountingStorage: 'slurmdbd' });
    expect(site.apiFaults).toEqual([]);
    expect(site.groups['slurm-nodes']).toEqual(validSite().groups['slurm-nodes']);
  });

  it('fills the defaults of a partly given timing and apiFault', () => {
    const site = parseSiteDefinition({ ...validSite(), timing: { bootSeconds: 5 }, apiFaults: [{ service: 'inventory', status: 503 }] });
    expect(site.timing).toEqual({
      bootSeconds: 5,
      returnSeconds: 60,
      prepareSeconds: 120,
      deploySeconds: 600,
      taskSeconds: 30,
      epilogSeconds: 0,
      healthCheckSeconds: 0,
    });
    expect(site.apiFaults[0]).toEqual({ service: 'inventory', status: 503, count: 1, afterCalls: 0 });
  });

  it('takes an apiFault that hangs instead of answering', () => {
    const site = parseSiteDefinition({ ...validSite(), apiFaults: [{ service: 'boot-service', method: 'POST', hang: true, count: 2 }] });
    expect(site.apiFaults[0]).toEqual({ service: 'boot-service', method: 'POST', hang: true, count: 2, afterCalls: 0 });
  });

  it.each([
    ['a bad WLM state', (s: Site) => Object.assign(s.nodes[1]!, { wlm: { state: 'SLEEPING' } }), 'nodes[1].wlm.state'],
    ['a negative nid', (s: Site) => Object.assign(s.nodes[0]!, { nid: -1 }), 'nodes[0].nid'],
    ['a fractional nid', (s: Site) => Object.assign(s.nodes[0]!, { nid: 1.5 }), 'nodes[0].nid'],
    ['a blank name', (s: Site) => Object.assign(s.nodes[0]!, { name: '  ' }), 'nodes[0].name'],
    ['a bad boot fault', (s: Site) => Object.assign(s.nodes[0]!, { faults: { boot: 'explode' } }), 'nodes[0].faults.boot'],
    ['a bad returnToService fault', (s: Site) => Object.assign(s.nodes[0]!, { faults: { returnToService: 'later' } }), 'nodes[0].faults.returnToService'],
    ['a bad task fault', (s: Site) => Object.assign(s.nodes[0]!, { faults: { tasks: { setup_network: 'explode' } } }), 'nodes[0].faults.tasks.setup_network'],
    ['roles that are not a list', (s: Site) => Object.assign(s.nodes[0]!, { roles: 'controller' }), 'nodes[0].roles'],
    ['an empty role', (s: Site) => Object.assign(s.nodes[0]!, { roles: ['controller', ''] }), 'nodes[0].roles[1]'],
    ['a non-string label value', (s: Site) => Object.assign(s.nodes[0]!, { labels: { rack: 3 } }), 'nodes[0].labels.rack'],
    ['a negative timing', (s: Site) => Object.assign(s, { timing: { bootSeconds: -1 } }), 'timing.bootSeconds'],
    ['a Slurm version the simulator does not know', (s: Site) => Object.assign(s, { slurm: { version: '21.08' } }), 'slurm.version'],
    ['a ReturnToService outside 0-2', (s: Site) => Object.assign(s, { slurm: { returnToService: 3 } }), 'slurm.returnToService'],
    ['a zero SlurmdTimeout', (s: Site) => Object.assign(s, { slurm: { slurmdTimeoutSeconds: 0 } }), 'slurm.slurmdTimeoutSeconds'],
    ['an unknown accounting storage', (s: Site) => Object.assign(s, { slurm: { accountingStorage: 'mysql' } }), 'slurm.accountingStorage'],
    ['a bad apiFault service', (s: Site) => Object.assign(s, { apiFaults: [{ service: 'dns', status: 503 }] }), 'apiFaults[0].service'],
    ['an apiFault status that is not an error', (s: Site) => Object.assign(s, { apiFaults: [{ service: 'inventory', status: 200 }] }), 'apiFaults[0].status'],
    [
      'an apiFault with both a status and a hang',
      (s: Site) => Object.assign(s, { apiFaults: [{ service: 'inventory', status: 503, hang: true }] }),
      'apiFaults[0].status',
    ],
    ['an apiFault with neither a status nor a hang', (s: Site) => Object.assign(s, { apiFaults: [{ service: 'inventory' }] }), 'apiFaults[0].status'],
    ['an apiFault hang that is not true', (s: Site) => Object.assign(s, { apiFaults: [{ service: 'inventory', hang: 'yes' }] }), 'apiFaults[0].hang'],
    ['a job on a DRAINED node', (s: Site) => Object.assign(s.nodes[0]!, { wlm: { state: 'DRAINED', busySeconds: 10 } }), 'nodes[0].wlm.busySeconds'],
    ['a group member that is not a node', (s: Site) => s.groups['slurm-nodes']!.push('x9999c0s1b0n0'), 'groups.slurm-nodes[2]'],
    ['a member listed twice', (s: Site) => s.groups['slurm-nodes']!.push('x3000c0s2b0n0'), 'groups.slurm-nodes[2]'],
    ['a duplicate node name', (s: Site) => s.nodes.push({ name: 'x3000c0s1b0n0', nid: 7 }), 'nodes[2].name'],
    ['a duplicate nid', (s: Site) => s.nodes.push({ name: 'x3000c0s9b0n0', nid: 2 }), 'nodes[2].nid'],
    ['no nodes', (s: Site) => Object.assign(s, { nodes: [] }), 'nodes'],
    ['missing nodes', (s: Site) => Object.assign(s, { nodes: undefined }), 'nodes'],
  ])('rejects %s, naming the path', (_case, edit, field) => {
    const problems = problemsOf(withEdit(edit as (s: Site) => void));
    expect(problems.map((p) => p.field)).toContain(field);
  });

  it('names unknown keys wherever they are', () => {
    const problems = problemsOf(
      withEdit((s) => {
        s.colour = 'blue';
        Object.assign(s.nodes[1]!, { wlm: { state: 'IDLE', load: 3 } });
      }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        { field: 'colour', message: 'unknown key' },
        { field: 'nodes[1].wlm.load', message: 'unknown key' },
      ]),
    );
  });

  it('reports every problem at once, under the given subject', () => {
    const input = withEdit((s) => {
      Object.assign(s.nodes[0]!, { nid: -1 });
      s.groups['failed-nodes']!.push('nobody');
    });
    expect(() => parseSiteDefinition(input, 'site file lab.yaml')).toThrow(/^Invalid site file lab\.yaml: .*nodes\[0\]\.nid.*groups\.failed-nodes\[0\]/);
  });

  it('rejects a document that is not a mapping', () => {
    expect(problemsOf(['nodes'])).toHaveLength(1);
    expect(problemsOf(null)).toHaveLength(1);
  });
});

describe('loadSiteFile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'site-file-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const write = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };

  it('reads YAML and JSON to the same definition', async () => {
    const yamlPath = await write(
      'site.yaml',
      [
        'nodes:',
        '  - name: x3000c0s1b0n0',
        '    nid: 1',
        '    rack: x3000',
        '    tags: [compute]',
        '    labels: {compute: "true"}',
        '  - name: x3000c0s2b0n0',
        '    nid: 2',
        '    wlm: {state: ALLOCATED, busySeconds: 30}',
        '    faults: {boot: fail}',
        'groups:',
        '  slurm-nodes: [x3000c0s2b0n0, x3000c0s1b0n0]',
        '  failed-nodes: []',
        'bootTemplates: [cos-2.4]',
      ].join('\n'),
    );
    const jsonPath = await write('site.json', JSON.stringify(validSite(), null, 2));
    const fromYaml = await loadSiteFile(yamlPath);
    expect(fromYaml).toEqual(await loadSiteFile(jsonPath));
    expect(fromYaml).toEqual(parseSiteDefinition(validSite()));
  });

  it('names the file and the path of a bad field', async () => {
    const path = await write('bad.yaml', 'nodes:\n  - name: a\n    nid: 1\n    wlm: {state: NAPPING}\n');
    const err = await loadSiteFile(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).subject).toBe(`site file ${path}`);
    expect((err as InvalidInputError).problems.map((p) => p.field)).toEqual(['nodes[0].wlm.state']);
  });

  it('gives the line of a YAML syntax error', async () => {
    const path = await write('broken.yaml', 'nodes:\n  - name: a\n   nid: 1\n');
    await expect(loadSiteFile(path)).rejects.toThrow(/invalid YAML: .*line 3/);
  });

  it('gives the line of a JSON syntax error', async () => {
    const path = await write('broken.json', '{\n  "nodes": [\n    {"name": "a", "nid": 1,}\n  ]\n}\n');
    await expect(loadSiteFile(path)).rejects.toThrow(/invalid JSON at line 3/);
  });

  it('rejects duplicate YAML keys', async () => {
    const path = await write('dup.yaml', 'nodes: []\nnodes: []\n');
    await expect(loadSiteFile(path)).rejects.toThrow(InvalidInputError);
  });

  it('reports a file it cannot read as invalid input naming it', async () => {
    const path = join(dir, 'missing.yaml');
    await expect(loadSiteFile(path)).rejects.toThrow(new RegExp(`site file ${path}: cannot read it`));
  });
});
