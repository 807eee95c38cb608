/**
 * The naming convention by which a site without an inventory of labels and tags (Slurm node
 * features, HSM/SMD group labels) describes what deployment selectors match: `rack:<rack>`,
 * `role:<role>`, `nid:<n>`, `<roleKey>:<role>` (a task-graph role; one word per role), any other
 * `<key>:<value>` a label, and every plain word a tag. HSM keeps its node role in SMD's Role field,
 * so its task-graph roles are `deploy-role:` groups; Slurm has only features, so there every
 * `role:` feature is a deployment role and the first is the node's role (`roleKey` renames it).
 */

export interface NodeLabels {
  rack?: string;
  role?: string;
  nid?: number;
  /** Task-graph deployment roles, in the order the words name them. */
  roles: string[];
  labels: Record<string, string>;
  tags: string[];
}

export const DEPLOY_ROLE_KEY = 'deploy-role';

/**
 * `rolesKey`: the key of the deployment-role words. `role` of the result: the `role:` word's value,
 * or with `roleFromRoles` the first deployment role (Slurm, where `role:` words are the roles).
 */
export function readNodeLabels(
  words: readonly string[],
  { rolesKey = DEPLOY_ROLE_KEY, roleFromRoles = false }: { rolesKey?: string; roleFromRoles?: boolean } = {},
): NodeLabels {
  // Built without object spreads and rest patterns: this runs for every node of a fleet listing (10,000 per increment).
  const labels: Record<string, string> = {};
  const tags: string[] = [];
  const roles: string[] = [];
  let rack: string | undefined;
  let nid: string | undefined;
  let roleLabel: string | undefined;
  for (const word of words) {
    const colon = word.indexOf(':');
    if (colon <= 0) {
      tags.push(word);
      continue;
    }
    const key = word.slice(0, colon);
    const value = word.slice(colon + 1);
    if (key === rolesKey) roles.push(value);
    else if (key === 'rack') rack = value;
    else if (key === 'nid') nid = value;
    else {
      // Where the roles give the node's role, a `role:` word under another roles key is a label like any other.
      if (key === 'role') roleLabel = value;
      if (key !== 'role' || roleFromRoles) labels[key] = value;
    }
  }
  const role = roleFromRoles ? roles[0] : roleLabel;
  const parsedNid = Number(nid);
  // The same key order as ever: rack, role, nid, roles, labels, tags.
  const result = {} as NodeLabels;
  if (rack !== undefined) result.rack = rack;
  if (role !== undefined) result.role = role;
  if (nid !== undefined && Number.isInteger(parsedNid) && parsedNid >= 0) result.nid = parsedNid;
  result.roles = roles;
  result.labels = labels;
  result.tags = tags;
  return result;
}
