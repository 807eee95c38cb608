import { rename, writeFile } from 'node:fs/promises';
import { parseDocument, type Document } from 'yaml';
import { parseDocumentText } from '../../core/document-text';
import { GroupNotFoundError, InvalidInputError } from '../../core/errors';
import { documentFormat, readDocumentFile } from '../document-file';
import { validLabel, validNodeNames } from '../../core/site/names';
import type { Inventory, InventoryNode } from '../../ports/site';
import { parseSiteInventory, type SiteInventory } from '../../core/site-file/site-definition';

export interface FileInventoryOptions {
  /** A site file (YAML or JSON): `nodes` (name, nid, rack, role, roles, tags, labels) and `groups` (label → ordered members). */
  path: string;
  /** Write membership edits back to the file (default true); false keeps them in this process's memory only. */
  writeBack?: boolean;
}

interface Loaded {
  document: Document;
  site: SiteInventory;
  groups: Map<string, string[]>;
}

/**
 * An inventory kept in a file: a site file's inventory part (core/site-file/site-definition.ts; the simulation keys
 * such as `wlm`, `faults` and `slurm` are passed over unread). Read once; group edits (the upgrading and failed
 * groups) change the groups in memory and are written back atomically (a temporary file renamed
 * over the original), editing only `groups` so the operator's comments and layout survive in YAML.
 * One writer at a time: two processes editing the same file would lose each other's edits.
 */
export class FileInventory implements Inventory {
  private loaded?: Promise<Loaded>;
  /** Edits are applied one after another, each written before the next starts. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: FileInventoryOptions) {}

  async getGroupMembers(label: string): Promise<string[]> {
    const { groups } = await this.load();
    const members = groups.get(label);
    if (!members) throw new GroupNotFoundError(label);
    return [...members];
  }

  async listGroupLabels(): Promise<string[]> {
    return [...(await this.load()).groups.keys()];
  }

  addGroupMembers(label: string, names: readonly string[]): Promise<void> {
    return this.edit(label, names, (members, wanted) => [...members, ...wanted.filter((n) => !members.includes(n))]);
  }

  removeGroupMembers(label: string, names: readonly string[]): Promise<void> {
    return this.edit(label, names, (members, wanted) => members.filter((n) => !wanted.includes(n)));
  }

  async listNodes(): Promise<InventoryNode[]> {
    const { site } = await this.load();
    return site.nodes.map(toInventoryNode);
  }

  /** The file's nodes of these names (read once, as listNodes). */
  async getNodes(names: readonly string[]): Promise<Map<string, InventoryNode>> {
    const wanted = new Set(names);
    const { site } = await this.load();
    return new Map(site.nodes.filter((n) => wanted.has(n.name)).map((n) => [n.name, toInventoryNode(n)]));
  }

  private edit(label: string, names: readonly string[], change: (members: string[], wanted: string[]) => string[]): Promise<void> {
    const run = this.queue.then(async () => {
      validLabel(label);
      const wanted = validNodeNames([...new Set(names)]);
      const loaded = await this.load();
      const members = loaded.groups.get(label);
      if (!members) throw new GroupNotFoundError(label);
      const known = new Set(loaded.site.nodes.map((n) => n.name));
      const unknown = wanted.filter((n) => !known.has(n));
      if (unknown.length > 0)
        throw new InvalidInputError('inventory', [
          { field: `groups.${label}`, message: `not nodes of ${this.options.path}: ${unknown.slice(0, 5).join(', ')}` },
        ]);
      const next = change(members, wanted);
      if (next.length === members.length && next.every((n, i) => n === members[i])) return;
      loaded.groups.set(label, next);
      if (this.options.writeBack !== false) await this.write(loaded, label, next);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async write({ document }: Loaded, label: string, members: string[]): Promise<void> {
    document.setIn(['groups', label], document.createNode(members, { flow: true }));
    const text = this.options.path.endsWith('.json') ? `${JSON.stringify(document.toJS(), null, 2)}\n` : document.toString();
    const temporary = `${this.options.path}.${process.pid}.tmp`;
    await writeFile(temporary, text, 'utf8');
    await rename(temporary, this.options.path);
  }

  private load(): Promise<Loaded> {
    this.loaded ??= (async () => {
      const subject = `inventory file ${this.options.path}`;
      const text = await readDocumentFile(this.options.path, subject);
      // Read strictly once; the YAML document is kept only to write edits back with the operator's layout.
      const strict = parseDocumentText(text, documentFormat(this.options.path));
      if ('problems' in strict) throw new InvalidInputError(subject, strict.problems);
      const site = parseSiteInventory(strict.value, subject);
      const document = parseDocument(text);
      return { document, site, groups: new Map(Object.entries(site.groups).map(([label, members]) => [label, [...members]])) };
    })().catch((err: unknown) => {
      // A file fixed later is read again.
      this.loaded = undefined;
      throw err;
    });
    return this.loaded;
  }
}

function toInventoryNode({ name, nid, rack, role, roles, tags, labels }: SiteInventory['nodes'][number]): InventoryNode {
  return { name, nid, ...(rack !== undefined ? { rack } : {}), role, roles, tags, labels };
}
