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
export function readNodeLabels(words: readonly string[], { rolesKey = DEPLOY_ROLE_KEY, roleFromRoles = false }: { rolesKey?: string; roleFromRoles?: boolean } = {}): NodeLabels {
  const labels: Record<string, string> = {};
  const tags: string[] = [];
  const roles: string[] = [];
  for (const word of words) {
    const colon = word.indexOf(':');
    if (colon <= 0) {
      tags.push(word);
      continue;
    }
    const key = word.slice(0, colon);
    const value = word.slice(colon + 1);
    if (key === rolesKey) roles.push(value);
    else labels[key] = value;
  }
  const { rack, nid, ...others } = labels;
  const { role: roleLabel, ...rest } = others;
  const role = roleFromRoles ? roles[0] : roleLabel;
  const parsedNid = Number(nid);
  return {
    ...(rack !== undefined ? { rack } : {}),
    ...(role !== undefined ? { role } : {}),
    ...(nid !== undefined && Number.isInteger(parsedNid) && parsedNid >= 0 ? { nid: parsedNid } : {}),
    roles,
    // Where the roles give the node's role, a `role:` word under another roles key is a label like any other.
    labels: roleFromRoles ? others : rest,
    tags,
  };
}
