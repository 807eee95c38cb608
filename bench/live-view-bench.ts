import { performance } from 'node:perf_hooks';
import { DynamoDbDeploymentStore } from '../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbRunRecords } from '../adapters/dynamodb/dynamodb-run-records';
import { DynamoDbSessionStore } from '../adapters/dynamodb/dynamodb-session-store';
import { DynamoDbTaskRunStore } from '../adapters/dynamodb/dynamodb-task-run-store';
import { upgradeLiveState } from '../cli/live-state';
import { ControlPlane } from '../control-plane/control-plane';
import type { NodeRecord, UpgradeSession } from '../core/rolling-upgrade/session';
import { countRequests, startLocalDynamoDb } from '../local/local-dynamodb';
import type { Executions } from '../ports/executions';

/**
 * What one redraw of the live view (`rollout upgrade` on a terminal, `rollout session get ID --watch`)
 * reads from the store, half-way through an upgrade of 64 and of 10,000 nodes: before, the run's
 * progress and its whole report (every node record, the whole plan, every message); after, the
 * progress and the nodes in flight alone (ControlPlane.liveUpgrade). Items read per redraw (GetItem,
 * BatchGetItem and Query items, as DynamoDB bills reads) and the time a redraw takes on the embedded
 * store, in this process.
 */

const REDRAWS = 5;
const START = Date.parse('2026-01-01T00:00:00.000Z');

interface LiveViewFleet {
  label: string;
  nodes: number;
  mode: 'lockstep' | 'window';
  /** Lock-step's step size, or the window's maxUnavailable. */
  inFlight: number;
}

export const LIVE_VIEW_FLEETS: readonly LiveViewFleet[] = [
  { label: '64 nodes, lock-step, step 8', nodes: 64, mode: 'lockstep', inFlight: 8 },
  { label: '64 nodes, window, maxUnavailable 6', nodes: 64, mode: 'window', inFlight: 6 },
  { label: '10,000 nodes, lock-step, step 100', nodes: 10_000, mode: 'lockstep', inFlight: 100 },
  { label: '10,000 nodes, window, maxUnavailable 500', nodes: 10_000, mode: 'window', inFlight: 500 },
];

interface RedrawFigures {
  itemsRead: number;
  requests: number;
  ms: number;
}

export async function benchLiveView(fleets: readonly LiveViewFleet[], write: (text: string) => void): Promise<void> {
  write('live view: DynamoDB items read and time per redraw, half-way through a run (mean of 5 redraws, embedded store)\n');
  write(
    '| fleet | before: items | before: requests | before: ms | after: items | after: requests | after: ms |\n| --- | --- | --- | --- | --- | --- | --- |\n',
  );
  for (const fleet of fleets) {
    const db = await startLocalDynamoDb();
    try {
      const counter = countRequests(db.rawClient);
      const { tableName, client } = db;
      const upgrades = new DynamoDbSessionStore({ tableName, client });
      const controlPlane = new ControlPlane({
        upgrades,
        deployments: new DynamoDbDeploymentStore({ tableName, client }),
        taskRuns: new DynamoDbTaskRunStore({ tableName, client }),
        records: new DynamoDbRunRecords({ tableName, client }),
        // The redraws read the stores alone.
        executions: {} as Executions,
      });
      const id = await halfWayRun(upgrades, fleet);
      const measure = async (redraw: () => Promise<unknown>): Promise<RedrawFigures> => {
        const [items, requests, started] = [counter.itemsRead, counter.total, performance.now()];
        for (let i = 0; i < REDRAWS; i++) await redraw();
        return {
          itemsRead: (counter.itemsRead - items) / REDRAWS,
          requests: (counter.total - requests) / REDRAWS,
          ms: (performance.now() - started) / REDRAWS,
        };
      };
      // Before: what the reader did until the live view read its nodes in flight alone.
      const before = await measure(async () => {
        const [progress, view] = await Promise.all([controlPlane.progress(id), controlPlane.session(id)]);
        if (progress?.kind === 'upgrade' && view?.kind === 'upgrade') upgradeLiveState(progress, view.report);
      });
      const after = await measure(async () => {
        const live = await controlPlane.liveUpgrade(id);
        if (live?.progress.kind === 'upgrade') upgradeLiveState(live.progress, live.report);
      });
      const cells = (f: RedrawFigures) => [f.itemsRead.toLocaleString('en-US'), f.requests.toFixed(0), f.ms.toFixed(1)];
      write(`| ${fleet.label} | ${[...cells(before), ...cells(after)].join(' | ')} |\n`);
    } finally {
      await db.close();
    }
  }
}

/**
 * An upgrade half done: the first half of the plan upgraded (1% failed), the next `inFlight` nodes
 * booting, the rest never touched (no record), two messages per step or per node done.
 */
async function halfWayRun(store: DynamoDbSessionStore, fleet: LiveViewFleet): Promise<string> {
  const upgradeId = `live-${fleet.nodes}-${fleet.mode}`;
  const plan = Array.from({ length: fleet.nodes }, (_, i) => `x${3000 + Math.floor(i / 64)}c0s${Math.floor((i % 64) / 2) + 1}b0n${i % 2}`);
  const done = Math.floor(fleet.nodes / 2 / fleet.inFlight) * fleet.inFlight;
  const inFlight = Array.from({ length: fleet.inFlight }, (_, i) => done + i);
  const failed = (i: number) => i % 100 === 99;
  const window = fleet.mode === 'window';
  const session: UpgradeSession = {
    upgradeId,
    kind: 'ComputeUpgradeSession',
    startingLabel: 'compute-nodes',
    upgradingLabel: 'upgrading-nodes',
    failedLabel: 'failed-nodes',
    upgradeStepSize: window ? 1 : fleet.inFlight,
    upgradeTemplateId: 'cos-2.4',
    workloadManagerType: 'slurm',
    quiesceTimeoutSeconds: 86400,
    bootTimeoutSeconds: 3600,
    wlmReturnTimeoutSeconds: 600,
    pollIntervalSeconds: 30,
    mode: fleet.mode,
    order: 'plan',
    approval: 'none',
    haltOnOutsideFailures: false,
    bakeSeconds: 0,
    ...(window ? { maxUnavailable: fleet.inFlight } : {}),
    state: 'UPDATING',
    completed: false,
    createdAt: new Date(START).toISOString(),
    planTaken: false,
    nodeCount: 0,
    stepCount: 0,
    progress: {
      step: window ? 0 : done / fleet.inFlight,
      stage: window ? 'ROLLING' : 'BOOTING',
      stageStartedAt: START + 3600_000,
      errorCount: 0,
      counts: { upgraded: done - Math.floor(done / 100), failed: Math.floor(done / 100) },
      ...(window ? { window: { wave: 0, approvedWaves: [], paused: false, bootCount: 1, inFlight } } : {}),
    },
  };
  await store.createSession(session, []);
  await store.savePlan(upgradeId, plan);
  const at = START + 3600_000;
  const records: NodeRecord[] = [
    ...Array.from(
      { length: done },
      (_, index): NodeRecord => ({
        name: plan[index]!,
        index,
        status: failed(index) ? 'FAILED' : 'UPGRADED',
        phase: 'DONE',
        ...(failed(index) ? { reason: 'upgrading-boot-session-failed' } : {}),
        phaseTimes: { DRAINING: START, BOOTING: START + 600_000, DONE: START + 1200_000 },
      }),
    ),
    ...inFlight.map(
      (index): NodeRecord => ({ name: plan[index]!, index, status: 'IN_PROGRESS', phase: 'BOOTING', phaseTimes: { DRAINING: at - 600_000, BOOTING: at } }),
    ),
  ];
  await store.putNodes(upgradeId, records);
  const messages = window ? done * 2 : (done / fleet.inFlight) * 2;
  for (let i = 0; i < messages; i++) await store.messages.append(upgradeId, `message ${i} about ${plan[Math.min(i, plan.length - 1)]}`);
  return upgradeId;
}
