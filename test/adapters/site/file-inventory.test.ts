import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FileInventory } from '../../../adapters/site/file-inventory';
import { GroupNotFoundError, InvalidInputError } from '../../../core/errors';

const SITE = `# the operator's comment stays
nodes:
  - {name: n1, nid: 1, rack: x3000, role: compute, roles: [controller, cinder], tags: [gpu]}
  - {name: n2, nid: 2}
  - {name: n3, nid: 3, labels: {zone: a}}
groups:
  compute: [n1, n2, n3]
  upgrading: []
`;

function siteFile(text = SITE, name = 'site.yaml'): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'file-inventory-')), name);
  writeFileSync(file, text);
  return file;
}

describe('file inventory', () => {
  it('lists nodes and groups in the file order', async () => {
    const inventory = new FileInventory({ path: siteFile() });
    expect(await inventory.getGroupMembers('compute')).toEqual(['n1', 'n2', 'n3']);
    const nodes = await inventory.listNodes();
    expect(nodes[0]).toEqual({ name: 'n1', nid: 1, rack: 'x3000', role: 'compute', roles: ['controller', 'cinder'], tags: ['gpu'], labels: {} });
    expect(nodes[2]).toMatchObject({ name: 'n3', labels: { zone: 'a' } });
    await expect(inventory.getGroupMembers('failed')).rejects.toBeInstanceOf(GroupNotFoundError);
    expect(await inventory.listGroupLabels()).toEqual(['compute', 'upgrading']);
  });

  it('reads named nodes alone (getNodes): as listed, an unknown name absent', async () => {
    const inventory = new FileInventory({ path: siteFile() });
    const listed = await inventory.listNodes();
    const read = await inventory.getNodes(['n3', 'n1', 'ghost']);
    expect(read).toEqual(
      new Map([
        ['n1', listed[0]],
        ['n3', listed[2]],
      ]),
    );
  });

  it('writes membership edits back, keeping comments, idempotently', async () => {
    const file = siteFile();
    const inventory = new FileInventory({ path: file });
    await inventory.addGroupMembers('upgrading', ['n2', 'n1']);
    await inventory.addGroupMembers('upgrading', ['n1']);
    await inventory.removeGroupMembers('upgrading', ['n2', 'n3']);
    expect(await inventory.getGroupMembers('upgrading')).toEqual(['n1']);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain("# the operator's comment stays");
    expect(await new FileInventory({ path: file }).getGroupMembers('upgrading')).toEqual(['n1']);
    await expect(inventory.addGroupMembers('upgrading', ['ghost'])).rejects.toBeInstanceOf(InvalidInputError);
    await expect(inventory.addGroupMembers('failed', ['n1'])).rejects.toBeInstanceOf(GroupNotFoundError);
  });

  it('keeps edits in memory only when asked, and writes JSON back as JSON', async () => {
    const yamlFile = siteFile();
    const memoryOnly = new FileInventory({ path: yamlFile, writeBack: false });
    await memoryOnly.addGroupMembers('upgrading', ['n3']);
    expect(await memoryOnly.getGroupMembers('upgrading')).toEqual(['n3']);
    expect(readFileSync(yamlFile, 'utf8')).toBe(SITE);

    const jsonFile = siteFile(JSON.stringify({ nodes: [{ name: 'n1', nid: 1 }], groups: { upgrading: [] } }), 'site.json');
    await new FileInventory({ path: jsonFile }).addGroupMembers('upgrading', ['n1']);
    expect(JSON.parse(readFileSync(jsonFile, 'utf8')).groups.upgrading).toEqual(['n1']);
  });
});
