/**
 * The naming convention by which a site without an inventory of labels and tags (Slurm node
 * features, HSM/SMD group labels) describes what deployment selectors match: `rack:<rack>`,
 * `role:<role>`, `nid:<n>`, `deploy-role:<role>` (a task-graph role; one word per role), any other
 * `<key>:<value>` a label, and every plain word a tag.
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

const DEPLOY_ROLE = 'deploy-role';

export function readNodeLabels(words: readonly string[]): NodeLabels {
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
    if (key === DEPLOY_ROLE) roles.push(value);
    else labels[key] = value;
  }
  const { rack, role, nid, ...rest } = labels;
  const parsedNid = Number(nid);
  return {
    ...(rack !== undefined ? { rack } : {}),
    ...(role !== undefined ? { role } : {}),
    ...(nid !== undefined && Number.isInteger(parsedNid) && parsedNid >= 0 ? { nid: parsedNid } : {}),
    roles,
    labels: rest,
    tags,
  };
}
