import { bothNames } from '../core/site/node-names';
import type { OperationState } from '../core/scheduling';
import type { DeploymentReport } from '../control-plane/reports/deployment-report';
import { LIVE_MESSAGES, type LiveSessionReport } from '../control-plane/reports/live-session';
import type { TaskRunView } from '../control-plane/reports/task-run-report';
import type { SessionProgress } from '../control-plane/runtime';
import type { LiveNode, LiveState } from './live-view';

/**
 * The live view's state of each kind of run, from the control plane's reads: `progress(id)` (the
 * run's one item: counts, the window's cap, the estimate, the newest message) and the nodes (each
 * node's phase and since when, the messages): an upgrade's nodes in flight alone (`liveUpgrade(id)`),
 * a deployment's or task run's report (`session(id)`). Pure: the display reads, these shape.
 */

type Progress<K extends SessionProgress['kind']> = Extract<SessionProgress, { kind: K }>;

/** The newest messages searched for the one that names a node (a long run's older messages say nothing of its nodes in flight): those the live read reads. */
const MESSAGES_SEARCHED = LIVE_MESSAGES;

/** An upgrade: its mode and step (or wave), the counts by status, the cap in use, and each node in flight in plan order. */
export function upgradeLiveState(progress: Progress<'upgrade'>, report: LiveSessionReport): LiveState {
  const window = report.controls.mode === 'window';
  const inFlight = Object.entries(report.nodes).filter(([, node]) => node.status === 'IN_PROGRESS');
  const naming = messageNaming(report.messageLog.slice(-MESSAGES_SEARCHED).map((m) => m.text));
  const nodes = inFlight.map(
    ([name, node]): LiveNode => ({
      name: bothNames(name, node.wlmName),
      phase: node.phase,
      ...(node.since !== undefined ? { since: Date.parse(node.since) } : {}),
      ...withMessage(node.reason ?? naming(name)),
    }),
  );
  const lastWave = report.waves?.at(-1)?.wave;
  const stamps = [Date.parse(report.createdAt), ...report.messageLog.map((m) => Date.parse(m.at)), ...nodes.map((n) => n.since ?? 0)];
  return {
    title: `upgrade ${report.upgradeId}`,
    mode: window
      ? `window${lastWave !== undefined ? `, wave ${lastWave}` : ''}`
      : `lock-step, step ${Math.min(progress.step + 1, Math.max(progress.steps, 1))} of ${progress.steps}`,
    state: report.state,
    startedAt: Date.parse(report.createdAt),
    ...(progress.estimate ? { endsAt: progress.estimate.endsAt } : {}),
    simulated: report.timeBase === 'simulated',
    asOf: Math.max(...stamps),
    total: { count: Object.values(report.counts).reduce((sum, count) => sum + count, 0), of: 'nodes' },
    counts: [
      ['upgraded', report.counts.UPGRADED],
      ['failed', report.counts.FAILED],
      ['in flight', report.counts.IN_PROGRESS],
      [report.state === 'UPDATING' ? 'waiting' : 'not started', report.counts.NOT_STARTED],
    ],
    cap: progress.window
      ? { size: progress.window.cap, inUse: progress.window.inFlight, ahead: progress.window.ahead }
      : { size: report.upgradeStepSize, inUse: report.counts.IN_PROGRESS },
    notes: [
      ...(report.state === 'STOPPING' ? ['stopping: what is in flight finishes, nothing new starts'] : []),
      ...(report.haltedReason ? [`halted: ${report.haltedReason}`] : []),
      ...(report.paused ? [`paused: no new node starts until \`rollout session resume ${report.upgradeId}\``] : []),
      ...(report.awaitingApprovalOfBatch !== undefined
        ? [`waiting for the approval of batch ${report.awaitingApprovalOfBatch}: \`rollout session approve ${report.upgradeId}\``]
        : report.waiting && report.waiting !== 'paused'
          ? [`waiting: ${report.waiting}`]
          : []),
      ...(progress.message !== undefined ? [`latest: ${progress.message}`] : []),
    ],
    nodes,
  };
}

const DEPLOYMENT_COUNTS = [
  ['deployed', 'DEPLOYED'],
  ['prepared', 'PREPARED'],
  ['failed', 'FAILED'],
  ['not started', 'NOT_STARTED'],
] as const;

/** A group deployment: nodes by stage, the groups by stage, and the nodes prepared and not yet deployed (with their group). */
export function deploymentLiveState(progress: Progress<'deployment'>, report: DeploymentReport): LiveState {
  const groupOf = new Map(Object.entries(report.groups).flatMap(([group, { nodes }]) => nodes.map((node) => [node, group] as const)));
  const groups = DEPLOYMENT_COUNTS.filter(([, stage]) => progress.groups[stage] > 0).map(([label, stage]) => `${progress.groups[stage]} ${label}`);
  return {
    title: `deployment ${report.deploymentId}`,
    mode: 'group deployment',
    state: report.status,
    simulated: false,
    total: { count: Object.keys(report.nodes).length, of: 'nodes' },
    counts: DEPLOYMENT_COUNTS.map(([label, stage]) => [label, progress.nodes[stage]] as const),
    notes: groups.length > 0 ? [`groups: ${groups.join(', ')}`] : [],
    nodes: Object.entries(report.nodes)
      .filter(([, stage]) => stage === 'PREPARED')
      .map(([name]) => ({ name, phase: 'prepared', ...withMessage(groupOf.has(name) ? `group ${groupOf.get(name)}` : undefined) })),
  };
}

const TASK_COUNTS: readonly (readonly [string, OperationState])[] = [
  ['done', 'ACTIVE'],
  ['running', 'TRANSITION'],
  ['to do', 'TODO'],
  ['blocked', 'BLOCKED'],
  ['failed', 'ERROR'],
];

/** A task run: node tasks by state, the cap on tasks running at once, and each node with a task running (its errors as its message). */
export function taskRunLiveState(progress: Progress<'tasks'>, view: TaskRunView): LiveState {
  const nodes = Object.entries(view.nodes).flatMap(([name, tasks]): LiveNode[] => {
    const running = Object.entries(tasks)
      .filter(([, state]) => state === 'TRANSITION')
      .map(([task]) => task);
    if (running.length === 0) return [];
    const errors = Object.entries(view.errors[name] ?? {}).map(([task, error]) => `${task}: ${error}`);
    return [{ name, phase: `running ${running.join(', ')}`, ...withMessage(errors.length > 0 ? errors.join('; ') : undefined) }];
  });
  return {
    title: `task run ${view.runId}`,
    mode: 'task graph',
    state: view.status,
    simulated: false,
    total: { count: TASK_COUNTS.reduce((sum, [, state]) => sum + progress.counts[state], 0), of: `task runs on ${progress.nodeCount} nodes` },
    counts: TASK_COUNTS.map(([label, state]) => [label, progress.counts[state]] as const),
    cap: { size: view.settings.maxInTransition, inUse: progress.counts.TRANSITION },
    notes: progress.message !== undefined ? [`latest: ${progress.message}`] : [],
    nodes,
  };
}

const withMessage = (message: string | undefined) => (message === undefined ? {} : { message });

/** A lookup of the newest of `messages` (oldest first) that names a node as a whole word. */
function messageNaming(messages: readonly string[]): (name: string) => string | undefined {
  const newestFirst = [...messages].reverse().map((text) => ({ text, words: new Set(text.split(/[\s,:;()[\]]+/)) }));
  return (name) => newestFirst.find((m) => m.words.has(name))?.text;
}
