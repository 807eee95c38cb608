import type { AttributeChanges, Attributes } from './schemas';

type Tree = Record<string, unknown>;

const isTree = (value: unknown): value is Tree => value !== null && typeof value === 'object' && !Array.isArray(value);

function readPath(root: Tree, path: string): unknown {
  let at: unknown = root;
  for (const key of path.split('.')) {
    if (!isTree(at) || !Object.hasOwn(at, key)) return undefined;
    at = at[key];
  }
  return at;
}

function writePath(root: Tree, path: string, value: unknown): void {
  const keys = path.split('.');
  const last = keys.pop()!;
  let at = root;
  for (const key of keys) {
    if (!isTree(at[key])) at[key] = {};
    at = at[key] as Tree;
  }
  at[last] = value;
}

/** Deletes the leaf or subtree at `path`, and the parents it leaves empty. */
function deletePath(root: Tree, path: string): void {
  const keys = path.split('.');
  const parents: Tree[] = [root];
  for (const key of keys.slice(0, -1)) {
    const next = parents[parents.length - 1]![key];
    if (!isTree(next)) return;
    parents.push(next);
  }
  delete parents[parents.length - 1]![keys[keys.length - 1]!];
  for (let i = parents.length - 1; i > 0; i--) {
    if (Object.keys(parents[i]!).length > 0) break;
    delete parents[i - 1]![keys[i - 1]!];
  }
}

/**
 * The attributes upgraded to a release: renamed paths moved (value kept), then every removed path
 * that is still set collected as a problem (the caller refuses the upgrade naming them: Fuel's 409).
 * Paths are relative to the attributes (`editable.x.y`, `generated.x`).
 */
export function upgradeAttributes(
  attributes: Attributes,
  changes: AttributeChanges,
): { attributes: Attributes; removedButSet: string[]; renameConflicts: { path: string; message: string }[] } {
  const tree = structuredClone(attributes) as unknown as Tree;
  const moved = Object.entries(changes.renamed)
    .map(([from, to]) => ({ from, to, value: readPath(tree, from) }))
    .filter(({ value }) => value !== undefined);
  // Read every old path first, then move: renames that swap or chain read the original values.
  for (const { from } of moved) deletePath(tree, from);
  // A rename never overwrites: not a value the environment sets at the new path, nor a value on the way to it.
  const renameConflicts = moved.flatMap(({ from, to }) => {
    if (readPath(tree, to) !== undefined) return [{ path: to, message: `${from} is renamed to ${to}, which is set already` }];
    const keys = to.split('.');
    const blocking = keys
      .slice(1, -1)
      .map((_, i) => keys.slice(0, i + 2).join('.'))
      .find((parent) => {
        const v = readPath(tree, parent);
        return v !== undefined && !isTree(v);
      });
    return blocking ? [{ path: to, message: `${from} is renamed to ${to}, but ${blocking} is a value, not a group` }] : [];
  });
  if (renameConflicts.length === 0) for (const { to, value } of moved) writePath(tree, to, value);
  const removedButSet = changes.removed.filter((path) => readPath(tree, path) !== undefined);
  return { attributes: tree as unknown as Attributes, removedButSet, renameConflicts };
}

export const MASKED_VALUE = '********';

/**
 * Each leaf of `tree` replaced by MASKED_VALUE: the shape stays readable (a list stays a list of its
 * length, an unset null stays null: it holds no secret), the secrets do not.
 */
export function maskTree(tree: Tree): Tree {
  return Object.fromEntries(Object.entries(tree).map(([key, value]) => [key, maskValue(value)]));
}

function maskValue(value: unknown): unknown {
  if (value === null) return null;
  if (Array.isArray(value)) return value.map(maskValue);
  return isTree(value) ? maskTree(value) : MASKED_VALUE;
}
