import type { UpgradeSession } from '../../core/rolling-upgrade/session';

/** A plausible session; tests override what they are about. */
export function makeSession(overrides: Partial<UpgradeSession> = {}): UpgradeSession {
  return {
    upgradeId: `s-${Math.random().toString(16).slice(2, 10)}`,
    kind: 'ComputeUpgradeSession',
    startingLabel: 'compute-nodes',
    upgradingLabel: 'upgrading-nodes',
    failedLabel: 'failed-nodes',
    upgradeStepSize: 8,
    upgradeTemplateId: 'cos-2.4',
    workloadManagerType: 'slurm',
    quiesceTimeoutSeconds: 86400,
    bootTimeoutSeconds: 3600,
    wlmReturnTimeoutSeconds: 600,
    pollIntervalSeconds: 30,
    mode: 'lockstep',
    order: 'plan',
    approval: 'none',
    haltOnOutsideFailures: false,
    bakeSeconds: 0,
    state: 'UPDATING',
    completed: false,
    createdAt: new Date().toISOString(),
    planTaken: true,
    nodeCount: 0,
    stepCount: 0,
    progress: { step: 0, stage: 'STARTING', stageStartedAt: 1_700_000_000_000, errorCount: 0 },
    ...overrides,
  };
}

/** `count` node names in a deliberately non-alphabetical plan order (the table sorts by name, the plan must not). */
export function makePlan(count: number, prefix = 'x'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${String((i * 7919) % 100_003).padStart(6, '0')}n${i}`);
}
