import { InvalidInputError, UpgradeConflictError, UpgradeNotAllowedError, type FieldProblem } from '../errors';
import { parseUpgradeRequest, unsupportedControls, type UpgradeRequest } from '../rolling-upgrade/upgrade-request';
import { parseOrThrow } from '../validation';
import { environmentUpgradeRequestSchema, type Environment, type EnvironmentNode, type EnvironmentUpgradeRequest, type Release } from './schemas';
import { cloneEnvironment, type SeedDraft } from './upgrade-seed';

/**
 * Fuel's single-call side-by-side upgrade (the `/cluster/<id>/upgrade` that Fuel 7.0 left
 * unimplemented), as a workflow: CLONING (the upgrade seed, unless there is one), ASSIGNING (the
 * controllers move into the seed), CONTROLLERS (a rolling upgrade of the controllers, all in one
 * step, reimages them with the release's boot template and waits until each is back), NODES (a
 * rolling upgrade of the other nodes, with the operator's controls; each node that upgraded moves
 * into the seed). COMPLETE and FAILED end it.
 */
export const ENVIRONMENT_UPGRADE_PHASES = ['CLONING', 'ASSIGNING', 'CONTROLLERS', 'NODES', 'COMPLETE', 'FAILED'] as const;
export type EnvironmentUpgradePhase = (typeof ENVIRONMENT_UPGRADE_PHASES)[number];

/** As CRUS's session states, plus FAILED: the upgrade stopped, `failure` says why. */
export const ENVIRONMENT_UPGRADE_STATES = ['UPDATING', 'READY', 'FAILED', 'DELETING', 'DELETED'] as const;
export type EnvironmentUpgradeState = (typeof ENVIRONMENT_UPGRADE_STATES)[number];

export const ENVIRONMENT_UPGRADE_KIND = 'EnvironmentUpgradeSession';

/** Messages kept on a session: the newest, so a site outage retried for days cannot grow the item without bound. */
export const MAX_UPGRADE_MESSAGES = 100;

/** The session with `messages` appended, only the newest MAX_UPGRADE_MESSAGES kept. */
export function withMessages(session: EnvironmentUpgradeSession, ...messages: string[]): EnvironmentUpgradeSession {
  return messages.length === 0 ? session : { ...session, messages: [...session.messages, ...messages].slice(-MAX_UPGRADE_MESSAGES) };
}

/** A rolling upgrade the environment upgrade runs as a child execution, named so that a retried start finds it. */
export interface ChildUpgrade {
  executionName: string;
  /** The child's session id (derived from its execution ARN, as Open Session derives it). */
  upgradeId: string;
  /** Site node names in the child's starting group. */
  nodes: string[];
}

export interface EnvironmentUpgradeProgress {
  phase: EnvironmentUpgradePhase;
  /** Epoch ms (the site's clock) at which the phase began. */
  phaseStartedAt: number;
  /** Consecutive failed attempts of the phase, for the backoff. */
  errorCount: number;
  seedId?: number;
  controllers?: ChildUpgrade;
  nodes?: ChildUpgrade;
}

export interface EnvironmentUpgradeSession {
  upgradeId: string;
  kind: typeof ENVIRONMENT_UPGRADE_KIND;
  environmentId: number;
  state: EnvironmentUpgradeState;
  completed: boolean;
  /** On the control plane's clock: a simulated instant when `simulatedTime` (see wallCreatedAt). */
  createdAt: string;
  /** Its instants are on simulated time (a simulated site): not dates, never shown as such. */
  simulatedTime?: boolean;
  /** On simulated time: the wall-clock instant it was created. */
  wallCreatedAt?: string;
  /** The request, parsed; absent when it could not be (`failure` then says why). */
  request?: EnvironmentUpgradeRequest;
  /** The release the environment is upgraded to. */
  releaseId?: number;
  /** The rolling upgrade of the other nodes as planned (the release's template filled in). */
  rollingUpgrade?: UpgradeRequest;
  progress: EnvironmentUpgradeProgress;
  /** What happened, oldest first (the last MAX_UPGRADE_MESSAGES are kept). */
  messages: string[];
  /** Why the upgrade failed (state FAILED): the error's name and the fields or nodes at fault. */
  failure?: { error: string; problems: FieldProblem[] };
  /**
   * The newest generation its executions continued as new to (`<upgradeId>-g<n>`): a person's resume
   * starts its chain after it, so that its own continue-as-new never meets a name an earlier chain used.
   */
  generation?: number;
}

/** Whether the session's workflow has nothing left to do (it may still be running its last state). */
export function upgradeHasEnded(session: Pick<EnvironmentUpgradeSession, 'progress'>): boolean {
  return session.progress.phase === 'COMPLETE' || session.progress.phase === 'FAILED';
}

/** What the workflow carries between states: a pointer to the stored session, never node lists. */
export interface EnvironmentUpgradePointer {
  upgradeId: string;
  phase: EnvironmentUpgradePhase;
  waitSeconds: number;
  iteration: number;
  iterationLimit: number;
  generation: number;
  /** A child rolling upgrade to start now (Prepare Rolling Upgrade sets it, the Start state reads it). */
  start?: { name: string; input: UpgradeRequest };
  /** A child runs: the next increments only poll it (Follow Rolling Upgrade). */
  following?: boolean;
  /** Phase FAILED: the failure in a line, the workflow's Fail cause. */
  cause?: string;
}

/** Everything the upgrade does, decided from the request and the stored environments before anything is written. */
export interface EnvironmentUpgradePlan {
  request: EnvironmentUpgradeRequest;
  original: Environment;
  target: Release;
  /** The seed to clone; absent when the environment has one already. */
  seedDraft?: SeedDraft;
  /** Nodes with a controller role, in the original or (assigned before) in the seed, by id. */
  controllers: EnvironmentNode[];
  /** The original's other nodes, by id: the rolling upgrade's. */
  others: EnvironmentNode[];
  /** The rolling upgrade of the others, its template the release's. */
  rollingUpgrade: UpgradeRequest;
}

export function parseEnvironmentUpgradeRequest(body: unknown): EnvironmentUpgradeRequest {
  return parseOrThrow(environmentUpgradeRequestSchema, body, 'environment upgrade request');
}

/**
 * The upgrade of `original` to `target` (the seed's release when it has a seed, else the request's),
 * checked as far as the stored environments tell: 405 for a seed, 409 for attributes or roles the
 * release cannot take, 422 (InvalidInputError) for the request's fields.
 */
export function planEnvironmentUpgrade(
  request: EnvironmentUpgradeRequest,
  original: Environment,
  seed: Environment | undefined,
  target: Release,
  originalRelease?: Release,
): EnvironmentUpgradePlan {
  if (original.original_cluster_id !== undefined) {
    throw new UpgradeNotAllowedError(`environment ${original.id} is itself the upgrade seed of environment ${original.original_cluster_id}: upgrade that one`);
  }
  const problems: FieldProblem[] = [];
  let seedDraft: SeedDraft | undefined;
  if (seed) {
    if (request.release_id !== undefined && request.release_id !== seed.release_id) {
      problems.push({ field: 'release_id', message: `environment ${original.id} already has upgrade seed ${seed.id} on release ${seed.release_id}` });
    }
  } else {
    for (const field of ['name', 'release_id'] as const) {
      if (request[field] === undefined)
        problems.push({ field, message: `is required: environment ${original.id} has no upgrade seed yet, and the clone needs it` });
    }
    // The clone's own checks (409 for an attribute the release removes), before anything is written.
    if (problems.length === 0) seedDraft = cloneEnvironment(original, target, { name: request.name!, release_id: target.id }, undefined, originalRelease);
  }

  const isController = (node: EnvironmentNode) => node.roles.some((role) => request.controller_roles.includes(role));
  const byId = (a: EnvironmentNode, b: EnvironmentNode) => a.id - b.id;
  const controllers = [...original.nodes, ...(seed?.nodes ?? [])].filter(isController).sort(byId);
  const others = original.nodes.filter((node) => !isController(node)).sort(byId);
  if (controllers.length === 0) {
    problems.push({
      field: 'controller_roles',
      message: `environment ${original.id} has no node with role ${request.controller_roles.map((r) => `'${r}'`).join(' or ')}`,
    });
  }

  let rollingUpgrade: UpgradeRequest | undefined;
  if ('upgradeTemplateId' in request.rolling_upgrade) {
    problems.push({
      field: 'rolling_upgrade.upgradeTemplateId',
      message: `leave it out: the nodes are reimaged with release ${target.id}'s bootTemplate '${target.bootTemplate}'`,
    });
  } else {
    try {
      rollingUpgrade = parseUpgradeRequest({ ...request.rolling_upgrade, upgradeTemplateId: target.bootTemplate });
      problems.push(...unsupportedControls(rollingUpgrade).map((p) => ({ ...p, field: `rolling_upgrade.${p.field}` })));
    } catch (err) {
      if (!(err instanceof InvalidInputError)) throw err;
      problems.push(...err.problems.map((p) => ({ ...p, field: p.field ? `rolling_upgrade.${p.field}` : 'rolling_upgrade' })));
    }
  }
  if (problems.length > 0) throw new InvalidInputError('environment upgrade request', problems);

  const undefinedRoles = [...controllers, ...others].flatMap((node) =>
    node.roles
      .filter((role) => !target.roles.includes(role))
      .map((role) => ({
        field: 'nodes',
        message: `role '${role}' of node ${node.id} (${node.name}) is not defined in release ${target.id} (${target.name} ${target.version})`,
      })),
  );
  if (undefinedRoles.length > 0) throw new UpgradeConflictError(`environment ${original.id} cannot be upgraded to release ${target.id}`, undefinedRoles);
  return { request, original, target, ...(seedDraft ? { seedDraft } : {}), controllers, others, rollingUpgrade: rollingUpgrade! };
}

/** What the site says about a plan: the boot template, the node names, the groups the rolling upgrades use. */
export interface SiteObservation {
  templateExists: boolean;
  siteNodes: ReadonlySet<string>;
  /** Members of each label the rolling upgrade names; undefined for a group that does not exist. */
  groups: Readonly<Record<string, readonly string[] | undefined>>;
}

/** The plan's problems on this site, each naming its field: nothing is touched when there is one. */
export function siteProblems(plan: EnvironmentUpgradePlan, observed: SiteObservation): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!observed.templateExists) {
    problems.push({
      field: 'release_id',
      message: `release ${plan.target.id}'s bootTemplate '${plan.target.bootTemplate}' does not exist in the boot service`,
    });
  }
  const nodes = [...plan.controllers, ...plan.others];
  for (const node of nodes) {
    if (!observed.siteNodes.has(node.name))
      problems.push({ field: 'nodes', message: `node ${node.id} '${node.name}' of the environment is not a node of the site` });
  }
  const { startingLabel, upgradingLabel, failedLabel } = plan.rollingUpgrade;
  for (const [field, label] of [
    ['startingLabel', startingLabel],
    ['upgradingLabel', upgradingLabel],
    ['failedLabel', failedLabel],
  ] as const) {
    if (observed.groups[label] === undefined) problems.push({ field: `rolling_upgrade.${field}`, message: `group '${label}' does not exist` });
  }
  const ours = new Set(nodes.map((node) => node.name));
  const foreign = (observed.groups[startingLabel] ?? []).filter((member) => !ours.has(member));
  if (foreign.length > 0) {
    problems.push({
      field: 'rolling_upgrade.startingLabel',
      message: `group '${startingLabel}' holds nodes outside environment ${plan.original.id} (${foreign.slice(0, 5).join(', ')}${foreign.length > 5 ? ', ...' : ''}): the upgrade sets its members, so it must hold none of another's`,
    });
  }
  return problems;
}

/**
 * The request of a child rolling upgrade. The controllers go in one lock-step step, all at once
 * (their environment's control plane is down until they are back, so the shortest outage is one
 * reimage); the others as the operator's rolling_upgrade says.
 */
export function childUpgradeRequest(plan: Pick<EnvironmentUpgradePlan, 'rollingUpgrade'>, phase: 'CONTROLLERS' | 'NODES', nodeCount: number): UpgradeRequest {
  if (phase === 'NODES') return plan.rollingUpgrade;
  const {
    startingLabel,
    upgradingLabel,
    failedLabel,
    upgradeTemplateId,
    workloadManagerType,
    quiesceTimeoutSeconds,
    bootTimeoutSeconds,
    wlmReturnTimeoutSeconds,
    pollIntervalSeconds,
  } = plan.rollingUpgrade;
  return parseUpgradeRequest({
    startingLabel,
    upgradingLabel,
    failedLabel,
    upgradeTemplateId,
    workloadManagerType,
    quiesceTimeoutSeconds,
    bootTimeoutSeconds,
    wlmReturnTimeoutSeconds,
    pollIntervalSeconds,
    upgradeStepSize: Math.max(1, nodeCount),
  });
}

/** The execution name of a phase's child: fixed per session and phase, so a retried start finds the one it started. */
export function childExecutionName(upgradeId: string, phase: 'CONTROLLERS' | 'NODES'): string {
  return `${upgradeId}-${phase.toLowerCase()}`;
}

/** The ARN an execution named `name` of `stateMachineArn` gets (AWS's format, which the embedded engine keeps). */
export function executionArnOf(stateMachineArn: string, name: string): string {
  const [prefix, machine] = stateMachineArn.split(':stateMachine:');
  if (!prefix || !machine) throw new Error(`not a state machine ARN: ${stateMachineArn}`);
  return `${prefix}:execution:${machine}:${name}`;
}

/** Seconds before a failed phase is tried again: the poll interval, doubled per failure, at most 5 minutes. */
export function phaseBackoffSeconds(pollIntervalSeconds: number, errorCount: number): number {
  return Math.min(300, pollIntervalSeconds * 2 ** Math.min(errorCount, 10));
}
