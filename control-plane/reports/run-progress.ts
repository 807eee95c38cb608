import { DEPLOYMENT_STAGES, type DeploymentStage } from '../../core/group-deployment';
import { upgradePolicy } from '../../core/rolling-upgrade/upgrade-policy';
import type { RunRecord } from '../../ports/run-records';
import type { RunStores } from '../run-records';
import type { SessionProgress } from '../runtime';

/**
 * A cheap progress read for a display polling every quarter second, from the run's one item (the
 * workflow keeps the counts there: Progress.counts, the window's in-flight index) and its newest message.
 */
export async function runProgress(stores: RunStores, run: RunRecord): Promise<SessionProgress> {
  switch (run.kind) {
    case 'upgrade': {
      const session = run.record;
      const { step, stage, window, counts } = session.progress;
      const message = await stores.upgrades.messages.latest(session.upgradeId);
      return {
        kind: 'upgrade',
        step,
        steps: session.stepCount,
        stage,
        total: session.nodeCount,
        upgraded: counts?.upgraded ?? 0,
        failed: counts?.failed ?? 0,
        state: session.state,
        ...(session.progress.estimate ? { estimate: session.progress.estimate } : {}),
        ...(session.simulatedTime ? { simulatedTime: true } : {}),
        ...(window
          ? {
              window: {
                // Slot holders only: a node drained ahead holds none (it is not out of service yet).
                inFlight: (window.inFlight?.length ?? 0) - (window.ahead ?? 0),
                cap: upgradePolicy(session, session.nodeCount).maxInTransition,
                ahead: window.ahead ?? 0,
                phases: Object.fromEntries(Object.entries(window.phases ?? {}).map(([phase, n]) => [phase, n ?? 0])),
                draining: window.draining ?? 0,
                ...(window.waiting ? { waiting: window.waiting } : {}),
                ...(window.halted ? { halted: window.halted.reason } : {}),
              },
            }
          : {}),
        ...(message === undefined ? {} : { message }),
      };
    }
    case 'deployment': {
      const deployment = run.record;
      return {
        kind: 'deployment',
        status: deployment.status,
        groups: countStages(Object.values(deployment.state.groups).map((group) => group.stage)),
        nodes: countStages(Object.values(deployment.state.nodes)),
      };
    }
    case 'tasks': {
      const taskRun = run.record;
      const message = await stores.taskRuns.messages.latest(taskRun.runId);
      return { kind: 'tasks', status: taskRun.status, counts: taskRun.counts, nodeCount: taskRun.nodeCount, ...(message === undefined ? {} : { message }) };
    }
  }
}

function countStages(stages: Iterable<DeploymentStage>): Record<DeploymentStage, number> {
  const counts = Object.fromEntries(DEPLOYMENT_STAGES.map((stage) => [stage, 0])) as Record<DeploymentStage, number>;
  for (const stage of stages) counts[stage]++;
  return counts;
}
