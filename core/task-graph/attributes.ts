import type { Attributes } from './graph-document';

type Plain = Record<string, unknown>;

function isPlainObject(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Deep merge, later wins: objects merge key by key, anything else (lists included) is replaced.
 * Keys are defined, not assigned, so a `__proto__` key from a document stays a plain key.
 */
export function deepMerge(...layers: readonly (Plain | undefined)[]): Plain {
  const out: Plain = {};
  for (const layer of layers) {
    if (layer === undefined) continue;
    for (const [key, value] of Object.entries(layer)) {
      const before = Object.prototype.hasOwnProperty.call(out, key) ? out[key] : undefined;
      const merged = isPlainObject(value)
        ? deepMerge(isPlainObject(before) ? before : undefined, value)
        : Array.isArray(value)
          ? [...(value as unknown[])]
          : value;
      Object.defineProperty(out, key, { value: merged, enumerable: true, writable: true, configurable: true });
    }
  }
  return out;
}

/**
 * A task's parameters on one node: its own, then the release, environment, role (in the node's
 * role order) and node layers of the graph's attributes, each deep-merged over the one before.
 */
export function layeredParameters(task: { id: string; parameters: Plain }, node: { name: string; roles: readonly string[] }, attributes: Attributes): Plain {
  return deepMerge(
    task.parameters,
    own(attributes.release, task.id),
    own(attributes.environment, task.id),
    ...node.roles.map((role) => own(own(attributes.roles, role), task.id)),
    own(own(attributes.nodes, node.name), task.id),
  );
}

/** `record[key]` if the record itself has it (a role named `constructor` must not reach Object.prototype). */
function own<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
}
