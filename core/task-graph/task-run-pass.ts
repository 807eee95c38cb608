import { isBarrier, type PlannedTask, type TaskPlan } from './task-plan';
import { cancelTaskRun, nextTaskStarts, recordTaskOutcomes, settledNodes, taskRunPolicy, taskRunReport, type TaskPass } from './task-run';
import type { TaskRunSettings } from './task-run-request';
import type { TaskExecution, TaskResult } from './task-run-state';
import { claimantOf, HELD_BY_ANOTHER_CONTROL_PLANE, holdersText } from '../site/node-claims';
import type { WlmNode } from '../site/site-nodes';
import { shortList } from '../text';
import type { RunStatus } from '../run-status';
import type { NodeObservation, Observations, Operation, OperationOutcome, ScheduleState } from '../scheduling';

/**
 * One pass of the annealer over a task run, decided without I/O (the activity
 * lambdas/activities/task-graph/advance-task-run.ts loads, then applies). Three phases:
 * - settle: the run's wind-down (a cancel halts it, a stop pauses it), the nodes whose lock was lost,
 *   and the tasks in flight that ended (ok, failed, or past their timeout);
 * - starts: what may start now (one transition per node, the role groups' caps, the global cap), given
 *   the nodes' locks as taken so far (the activity takes the locks the starts want, and asks again);
 * - conclude: what to give back, check and start, how the run stands after the pass (running, wound
 *   down, or over), what to say, and when to look again.
 */

/** The run's own cancel or stop request, or its deployment's (a group's deploy phase winds down with its deployment). */
export type TaskRunWindDown = 'cancel' | 'stop' | undefined;

/** What the executor said of a task in flight when looked at (ports/task-executor.ts `poll`). */
export interface TaskAnswer {
  /** Absent while the task runs. */
  outcome?: { result: TaskResult; detail?: string };
  /** The task's execution, when it moved on (a reboot drained, now booting). */
  execution?: TaskExecution;
}

/** The schedule as stored, read back (assembleSchedule). */
export interface StoredSchedule {
  state: ScheduleState;
  executions: ReadonlyMap<string, TaskExecution>;
  results: ReadonlyMap<string, TaskResult>;
  lockTokens: ReadonlyMap<string, number>;
}

/** What a pass decides from: the run, its stored schedule, and what the site and the locks said. */
export interface TaskRunPassInput {
  runId: string;
  settings: TaskRunSettings;
  plan: Pick<TaskPlan, 'nodes' | 'groupLimits'>;
  stored: StoredSchedule;
  windDown: TaskRunWindDown;
  /** Nodes whose lock the heartbeat found lost, with who holds it now (undefined: nobody). */
  lost: ReadonlyMap<string, string | undefined>;
  /** The executor's answers for the tasks in flight (tasksInFlight's `running`). */
  answers: ReadonlyMap<string, TaskAnswer>;
  /** OpenCrowbar's gates of the nodes awaiting a start (taskRunGates). */
  gates: Readonly<Record<string, NodeObservation>>;
  now: number;
}

/** The seconds a task may take: its own `timeout`, else the run's default. */
export function taskTimeoutSeconds(parameters: Record<string, unknown>, settings: Pick<TaskRunSettings, 'taskTimeoutSeconds'>): number {
  const own = parameters.timeout;
  return typeof own === 'number' && own > 0 ? own : settings.taskTimeoutSeconds;
}

/**
 * How long past its timeout a task may take to report: the node's own `timeout` stops a command at
 * its timeout, and the outcome still has to travel back (pdsh, SSM).
 */
export const TIMEOUT_GRACE_SECONDS = 60;

/** The planned task of an operation (`node/task`). */
export function plannedTask(plan: Pick<TaskPlan, 'nodes'>, op: string): PlannedTask | undefined {
  const slash = op.indexOf('/');
  return plan.nodes[op.slice(0, slash)]?.find((t) => t.id === op.slice(slash + 1));
}

/** A node task's timeout. */
function timeoutOfOp(input: Pick<TaskRunPassInput, 'runId' | 'plan' | 'settings'>, op: string): number {
  const planned = plannedTask(input.plan, op);
  if (!planned) throw new Error(`task run ${input.runId}: operation ${op} is not in the plan`);
  return taskTimeoutSeconds(planned.parameters, input.settings);
}

/** The node tasks in flight on nodes still ours: those with a stored execution to look at, and those whose start was never stored. */
export function tasksInFlight(
  stored: Pick<StoredSchedule, 'state' | 'executions'>,
  lost: ReadonlyMap<string, unknown>,
): { running: { op: Operation; execution: TaskExecution }[]; unstarted: string[] } {
  const inFlight = stored.state.ops.filter((op) => op.state === 'TRANSITION' && !isBarrier(op.id) && !lost.has(op.node));
  return {
    running: inFlight.filter((op) => stored.executions.has(op.id)).map((op) => ({ op, execution: stored.executions.get(op.id)! })),
    unstarted: inFlight.filter((op) => !stored.executions.has(op.id)).map((op) => op.id),
  };
}

/** The nodes a task may still start on (BLOCKED ones too: a barrier settled within the pass frees them): whose gates the pass reads. */
export function nodesAwaitingStart(state: ScheduleState): Set<string> {
  return new Set(state.ops.filter((op) => (op.state === 'TODO' || op.state === 'BLOCKED') && !isBarrier(op.id)).map((op) => op.node));
}

/** OpenCrowbar's gates, from the inventory: a node awaiting a start that is not alive or not available starts nothing. */
export function taskRunGates(
  awaiting: ReadonlySet<string>,
  inventory: readonly { name: string; alive?: boolean; available?: boolean }[],
): Record<string, NodeObservation> {
  const gates: Record<string, NodeObservation> = {};
  for (const node of inventory) {
    if (awaiting.has(node.name) && (node.alive === false || node.available === false))
      gates[node.name] = { alive: node.alive !== false, available: node.available !== false };
  }
  return gates;
}

/** The run after phase "settle". */
export interface SettledTaskRun {
  input: TaskRunPassInput;
  state: ScheduleState;
  executions: Map<string, TaskExecution>;
  results: Map<string, TaskResult>;
  /** The locks the run holds still (the lost ones gone). */
  lockTokens: Map<string, number>;
  /** Tasks in flight whose start reached the site but was never stored: started again (tasks run at least once). */
  unstarted: string[];
  cancelled: boolean;
  stopping: boolean;
  /** The gates, and the nodes whose lock was lost. */
  observations: Observations;
  messages: string[];
}

/**
 * Phase "settle": a cancel (of the run, or of the deployment whose deploy phase it is) halts the run:
 * nothing starts, the tasks in flight finish. A stop pauses the annealer: no task starts; once none
 * is in flight the run ends STOPPED. Task runs pause for nothing else: a resumed run (RUNNING again)
 * starts tasks again. A node another run took over is left alone from now on (its task in flight
 * ends here); each task in flight that the site says ended, or that is well past its timeout, is recorded.
 */
export function settleTaskRunPass(input: TaskRunPassInput): SettledTaskRun {
  const { stored, windDown, lost, answers, now } = input;
  const cancelled = windDown === 'cancel';
  const stopping = windDown === 'stop';
  let state = cancelled ? cancelTaskRun(stored.state, now) : stored.state;
  if (state.paused !== stopping) state = { ...state, paused: stopping };
  const lockTokens = new Map([...stored.lockTokens].filter(([node]) => !lost.has(node)));
  const messages = lost.size > 0 ? [`${lost.size} node(s) no longer ours (lock lost${describeHolders(lost)}): left alone: ${shortList([...lost.keys()])}`] : [];

  const executions = new Map(stored.executions);
  const results = new Map(stored.results);
  const { running, unstarted } = tasksInFlight({ state, executions }, lost);
  const ended = new Map<string, OperationOutcome>();
  for (const { op } of running) {
    const seen = answers.get(op.id);
    if (seen?.execution) executions.set(op.id, seen.execution);
    const outcome = seen?.outcome ?? timedOut(op.startedAt ?? now, timeoutOfOp(input, op.id), now);
    if (!outcome) continue;
    ended.set(op.id, outcome.result === 'ok' ? { ok: true } : { ok: false, error: describeOutcome(outcome) });
    results.set(op.id, outcome.result);
    executions.delete(op.id);
  }
  // A task in flight on a node whose lock was lost ends here: the run no longer acts on that node.
  for (const op of state.ops)
    if (op.state === 'TRANSITION' && lost.has(op.node)) ended.set(op.id, { ok: false, error: `lock lost to ${lost.get(op.node) ?? 'nobody'}` });
  state = recordTaskOutcomes(state, ended, now);

  const nodes: Record<string, NodeObservation> = { ...input.gates };
  for (const node of lost.keys()) nodes[node] = { ...nodes[node], lockLost: true };
  return { input, state, executions, results, lockTokens, unstarted, cancelled, stopping, observations: { nodes }, messages };
}

function describeHolders(lost: ReadonlyMap<string, string | undefined>): string {
  const holders = [...new Set([...lost.values()].filter((h) => h !== undefined))];
  return holders.length > 0 ? ` to run ${holders.join(', ')}` : '';
}

/** A task the site still reports running well after its timeout ended as `timeout` (the site's own timeout normally says so first). */
function timedOut(startedAt: number, timeoutSeconds: number, now: number): TaskAnswer['outcome'] {
  const limit = timeoutSeconds + TIMEOUT_GRACE_SECONDS;
  return now - startedAt >= limit * 1000 ? { result: 'timeout', detail: `no outcome ${limit} s after it started` } : undefined;
}

function describeOutcome(outcome: NonNullable<TaskAnswer['outcome']>): string {
  return outcome.detail ? `${outcome.result}: ${outcome.detail}` : outcome.result;
}

/** The nodes' locks as taken for this pass's starts so far. */
export interface StartLocks {
  /** Locked in this pass, with the fencing token of each. */
  taken: ReadonlyMap<string, number>;
  /** Held by another run of this store: their tasks wait (the run does not end meanwhile). */
  heldByOthers: ReadonlyMap<string, string>;
  /** Claimed at the site by another control plane's run: left alone (their locks went back). */
  claimedElsewhere: ReadonlyMap<string, string>;
}

export const NO_START_LOCKS: StartLocks = { taken: new Map(), heldByOthers: new Map(), claimedElsewhere: new Map() };

/** The locks of one more round added to those of the rounds before. */
export function addStartLocks(before: StartLocks, round: StartLocks): StartLocks {
  return {
    taken: new Map([...before.taken, ...round.taken]),
    heldByOthers: new Map([...before.heldByOthers, ...round.heldByOthers]),
    claimedElsewhere: new Map([...before.claimedElsewhere, ...round.claimedElsewhere]),
  };
}

export interface TaskStartsDecision {
  pass: TaskPass;
  /** The nodes whose lock the starts need and the run does not hold: to take, then decide again if any was refused. */
  toLock: string[];
}

/**
 * Phase "starts": what may start now, the gates and the locks known so far observed (a node another
 * run holds waits; one another control plane claims at the site is left alone), and the nodes whose
 * lock the starts still need.
 */
export function decideTaskStarts(settled: SettledTaskRun, locks: StartLocks): TaskStartsDecision {
  const policy = taskRunPolicy(settled.input.plan, settled.input.settings.maxInTransition);
  const nodes: Record<string, NodeObservation> = { ...settled.observations.nodes };
  for (const [node, holder] of locks.heldByOthers) nodes[node] = { ...nodes[node], heldBy: holder };
  for (const node of locks.claimedElsewhere.keys()) nodes[node] = { ...nodes[node], claimedElsewhere: true };
  const pass = nextTaskStarts(settled.state, policy, settled.input.now, { ...settled.observations, nodes });
  const toLock = [...new Set(pass.starts.map((start) => start.node))].filter((node) => !settled.lockTokens.has(node) && !locks.taken.has(node));
  return { pass, toLock };
}

/** What a pass does and leaves: the activity checks, starts, writes and says it, in this order. */
export interface TaskRunPassDecision {
  state: ScheduleState;
  /** Locks taken in this pass for a start a later round dropped: given back at once, not held idle. */
  idle: string[];
  /** The nodes about to change that the run held before this pass, with their tokens: checked right before the first site call (fencing). */
  fence: Map<string, number>;
  /** Operations to start at the site: tasks whose start was never stored, then the annealer's starts. */
  toStart: string[];
  status: RunStatus;
  /** The run has finished or stopped: its workflow ends. */
  over: boolean;
  /** A finished cancel: the nodes whose drain task ran, whose drain is lifted where the site still shows the run's claim (ownDrainsToLift). */
  liftDrainsOf?: string[];
  /** The locks the run keeps (stored with its chunks). */
  held: Map<string, number>;
  /** The nodes the run is done with: their locks go back once the pass is committed. */
  release: string[];
  messages: string[];
  waitSeconds: number;
}

/**
 * Phase "conclude": the locks to give back and to check, the tasks to start, and how the run stands.
 * A stop holds until a person's resume: once no task is in flight the run ends STOPPED, even when
 * what is left can no longer run (blocked behind a task that failed meanwhile: the failure stays
 * recorded on its node, and the resume judges the run). The nodes the run is done with go back at
 * once; all of them once it has finished or stopped.
 */
export function concludeTaskRunPass(settled: SettledTaskRun, starts: TaskStartsDecision, locks: StartLocks): TaskRunPassDecision {
  const { input, cancelled, stopping } = settled;
  const { pass } = starts;
  const starting = new Set(pass.starts.map((start) => start.node));
  const idle = [...locks.taken.keys()].filter((node) => !starting.has(node));
  const takenNow = new Map([...locks.taken].filter(([node]) => starting.has(node)));
  const lockTokens = new Map([...settled.lockTokens, ...takenNow]);
  const fence = new Map([...starting].filter((node) => !takenNow.has(node)).map((node) => [node, lockTokens.get(node)!]));
  const toStart = [...settled.unstarted.filter((op) => !input.lost.has(op.slice(0, op.indexOf('/')))), ...pass.starts.map((start) => start.op)];

  const stopped = stopping && !pass.state.ops.some((op) => op.state === 'TRANSITION' && !isBarrier(op.id));
  const finished = pass.finished && !stopped;
  // Stopped where the annealer found nothing left that could run: the finish is not recorded (the resume decides it).
  const state = stopped && pass.finished ? settled.state : pass.state;
  const over = finished || stopped;
  const release = over ? [...lockTokens.keys()] : settledNodes(state, lockTokens.keys());
  return {
    state,
    idle,
    fence,
    toStart,
    status: passStatus({ finished, stopped, cancelled, stopping, succeeded: finished && taskRunReport(state).status === 'succeeded' }),
    over,
    ...(finished && cancelled ? { liftDrainsOf: drainedByTheRun(input.plan, state, settled.results) } : {}),
    held: new Map([...lockTokens].filter(([node]) => !release.includes(node))),
    release,
    messages: [...settled.messages, ...lockMessages(locks)],
    waitSeconds: over ? 0 : taskRunWait(input, state, pass.recheckAt),
  };
}

function passStatus(run: { finished: boolean; stopped: boolean; cancelled: boolean; stopping: boolean; succeeded: boolean }): RunStatus {
  if (run.finished) return run.cancelled ? 'CANCELLED' : run.succeeded ? 'SUCCEEDED' : 'FAILED';
  if (run.stopped) return 'STOPPED';
  return run.cancelled ? 'CANCELLING' : run.stopping ? 'STOPPING' : 'RUNNING';
}

/** What the run says of the locks it could not take: the nodes that wait for another run, those another control plane claims. */
function lockMessages(locks: StartLocks): string[] {
  const messages: string[] = [];
  if (locks.heldByOthers.size > 0) messages.push(`Waiting for nodes another run holds: ${holdersText(locks.heldByOthers)}`);
  if (locks.claimedElsewhere.size > 0) {
    messages.push(
      `${locks.claimedElsewhere.size} node(s) left alone, ${HELD_BY_ANOTHER_CONTROL_PLANE}: the site shows them claimed by run ${[...new Set(locks.claimedElsewhere.values())].join(', ')}, which this control plane does not know: ${shortList([...locks.claimedElsewhere.keys()])}`,
    );
  }
  return messages;
}

/** The nodes whose drain task ran (ok): a cancel lifts those drains. */
function drainedByTheRun(plan: Pick<TaskPlan, 'nodes'>, state: ScheduleState, results: ReadonlyMap<string, TaskResult>): string[] {
  return [...new Set(state.ops.filter((op) => results.get(op.id) === 'ok' && plannedTask(plan, op.id)?.type === 'drain').map((op) => op.node))];
}

/**
 * A cancel never leaves a node drained by the run: of the nodes whose drain task ran, those whose
 * Slurm reason still shows this run's claim (no one drained them since) get the drain lifted.
 */
export function ownDrainsToLift(
  runId: string,
  drained: readonly string[],
  wlm: ReadonlyMap<string, Pick<WlmNode, 'reason' | 'flags'>>,
): { nodes: string[]; message: string } {
  const nodes = drained.filter((node) => claimantOf(wlm.get(node)?.reason) === runId && wlm.get(node)?.flags.includes('DRAIN'));
  return { nodes, message: nodes.length > 0 ? `Cancelled: the run's drain lifted on ${shortList(nodes)}` : 'Cancelled: no node is left drained by the run' };
}

/** Tasks in flight: look again at the poll interval, or sooner when one reaches its timeout; nothing in flight: at a recheck, or the poll interval. */
function taskRunWait(input: Pick<TaskRunPassInput, 'runId' | 'plan' | 'settings' | 'now'>, state: ScheduleState, recheckAt: number | undefined): number {
  const { now } = input;
  let wait = input.settings.pollIntervalSeconds;
  for (const op of state.ops) {
    if (op.state !== 'TRANSITION' || isBarrier(op.id)) continue;
    // Look right at the timeout, when the site reports it, then at the end of the grace.
    const startedAt = op.startedAt ?? now;
    const timeout = timeoutOfOp(input, op.id);
    const deadline = [timeout, timeout + TIMEOUT_GRACE_SECONDS].map((s) => startedAt + s * 1000).find((at) => at > now);
    if (deadline !== undefined) wait = Math.min(wait, Math.max(1, Math.ceil((deadline - now) / 1000)));
  }
  if (recheckAt !== undefined) wait = Math.min(wait, Math.max(1, Math.ceil((recheckAt - now) / 1000)));
  return wait;
}
