/**
 * One node, two names, in what the session says: messages name nodes by the inventory's names (the
 * session's identity of a node) and add Slurm's as one hostlist where they differ, so an operator can
 * paste it into scontrol (`x3000c0s19b1n0, x3000c0s19b1n1 (Slurm: nid00000[6-7])`). CRUS's messages
 * keep their words; the Slurm names follow them.
 */
import { compressHostlist } from '../../../core/site/hostlist';
import type { SessionStore } from '../../../ports/session-store';
import type { NodeNameMap } from '../../../ports/site';

/** Words of a message that may be node names. */
const WORD = /[A-Za-z0-9][A-Za-z0-9._-]*/g;
/** At most this long a Slurm hostlist is added; a longer one is cut (the session's report has every name). */
const MAX_HOSTLIST = 160;

/** The message with the Slurm names of the nodes it names added, or as it is when it names none (or they agree). */
export async function withSlurmNames(message: string, names: NodeNameMap): Promise<string> {
  const words = [...new Set(message.match(WORD) ?? [])];
  if (words.length === 0) return message;
  const map = await names.toWorkloadManager(words);
  const slurm = words.flatMap((w) => (map.has(w) && map.get(w) !== w ? [map.get(w)!] : []));
  if (slurm.length === 0) return message;
  const hostlist = compressHostlist(slurm);
  const shown = hostlist.length > MAX_HOSTLIST ? `${hostlist.slice(0, MAX_HOSTLIST)}...` : hostlist;
  return `${message} (Slurm: ${shown}${/ and \d+ more/.test(message) ? ', ...' : ''})`;
}

/** The store, with every message it is given naming Slurm's names too. */
export function storeNamingSlurmNodes(store: SessionStore, names: NodeNameMap): SessionStore {
  const messages = overriding(store.messages, 'append', async (upgradeId: string, message: string) =>
    store.messages.append(upgradeId, await withSlurmNames(message, names)),
  );
  return overriding(store, 'messages', messages);
}

/** `target` with one member replaced: every other member is the target's own (its methods bound to it). */
function overriding<T extends object, K extends keyof T>(target: T, member: K, value: T[K]): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      if (property === member) return value;
      const found: unknown = Reflect.get(object, property, receiver);
      return typeof found === 'function' ? (found as (...args: unknown[]) => unknown).bind(object) : found;
    },
  });
}
