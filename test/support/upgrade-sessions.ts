import type { NodeRecord, Progress, UpgradeSession, WorkflowState } from '../../core/rolling-upgrade/session';
import type { SessionStore } from '../../ports/session-store';
import type { WlmNode } from '../../core/site/site-nodes';
import { parseUpgradeRequest } from '../../core/rolling-upgrade/upgrade-request';

/** Inputs for the pure rolling-upgrade decisions: a two-step session of four nodes, and site observations. */
export const NOW = 1_000_000;
/** The session's run id: a UUID, as every run id is (a claim names its run by one that parses). */
export const RUN_ID = 'a1b2c3d4-0000-4000-8000-000000000001';
/** This session's drain as it sets it in Slurm (core/site/node-claims.ts drainClaim). */
export const OUR_DRAIN = `rolling-upgrade ${RUN_ID}`;

/** A window-mode request as parsed: one node a step, at most two unavailable, `request` over it. */
export function windowRequest(request: Partial<Parameters<typeof parseUpgradeRequest>[0]> = {}) {
  return parseUpgradeRequest({
    startingLabel: 'compute',
    upgradingLabel: 'upgrading',
    failedLabel: 'failed',
    upgradeStepSize: 1,
    upgradeTemplateId: 'image-2',
    workloadManagerType: 'slurm',
    mode: 'window',
    maxUnavailable: 2,
    ...request,
  });
}

export function session(overrides: Partial<UpgradeSession> = {}): UpgradeSession {
  return {
    upgradeId: RUN_ID,
    kind: 'ComputeUpgradeSession',
    state: 'UPDATING',
    completed: false,
    createdAt: '2026-01-01T00:00:00.000Z',
    planTaken: true,
    nodeCount: 4,
    stepCount: 2,
    ...parseUpgradeRequest({
      startingLabel: 'compute',
      upgradingLabel: 'upgrading',
      failedLabel: 'failed',
      upgradeStepSize: 2,
      upgradeTemplateId: 'image-2',
      workloadManagerType: 'slurm',
      quiesceTimeoutSeconds: 100,
      bootTimeoutSeconds: 200,
      wlmReturnTimeoutSeconds: 300,
      pollIntervalSeconds: 30,
    }),
    progress: progress(),
    ...overrides,
  };
}

/** A session whose plan is not taken yet (STARTING since `startedAt`), created in `store` with no nodes. */
export async function createdSession(
  store: Pick<SessionStore, 'createSession'>,
  startedAt: number,
  overrides: Partial<UpgradeSession>,
): Promise<UpgradeSession> {
  const created = session({
    planTaken: false,
    nodeCount: 0,
    stepCount: 0,
    ...overrides,
    progress: { step: 0, stage: 'STARTING', stageStartedAt: startedAt, errorCount: 0 },
  });
  await store.createSession(created, []);
  return created;
}

/** The workflow's state as the state machine hands it to an activity at step 0 of `stage`. */
export const workflowAt = (upgradeId: string, stage: WorkflowState['stage']): WorkflowState => ({
  upgradeId,
  stage,
  step: 0,
  waitSeconds: 0,
  iteration: 0,
  iterationLimit: 100,
  generation: 0,
});

export function progress(overrides: Partial<Progress> = {}): Progress {
  return { step: 0, stage: 'STARTING', stageStartedAt: NOW - 1000, errorCount: 0, ...overrides };
}

export const node = (name: string, index: number, status: NodeRecord['status'] = 'IN_PROGRESS'): NodeRecord => ({ name, index, status });
export const wlmNode = (name: string, base: WlmNode['base'], flags: string[] = [], extra: Partial<WlmNode> = {}): WlmNode => ({
  name,
  base,
  flags,
  ...extra,
});
export const wlmMap = (...nodes: WlmNode[]) => new Map(nodes.map((n) => [n.name, n]));
