import { EmbeddedRuntime } from '../../local/embedded-runtime';
import type { ExecutionOutcome, LocalFunction } from '../../local/local-step-functions';
import { parseSiteDefinition, type SiteDefinitionInput, type SiteState } from '../../simulator';
import type { WlmReservation } from '../../simulator/models/workload-manager';
import { buildSessionReport, type SessionReport } from '../../control-plane/reports/session-report';
import { ClockStalledError } from '../../time/virtual-clock';
import { scenarioSite, type OperatorAction, type Scenario } from './scenario';
import { scenarioConnectors, siteEventsRecord, type ScenarioRelay, type SiteEventsRecord } from './scenario-relay';

/**
 * Runs a scenario on the embedded default (the real workflow files on the local engine, the real
 * activities against the simulated site), on virtual time, with the operator's actions taken at
 * their moments, and gathers what the checker needs: the site's own record (state, change log,
 * reservations) and the product's (the session's report, the workflow outcomes).
 */

export interface OperatorRecord {
  action: OperatorAction;
  /** Simulated seconds after the start at which it was taken; undefined when the run had ended before its moment. */
  takenAt?: number;
  /** What the control plane answered (a stop or cancel of a session that already ended is refused). */
  answer?: string;
  /** The session's state when the action was taken. */
  stateBefore?: string;
}

export interface ScenarioRun {
  scenario: Scenario;
  upgradeId: string;
  /** Every execution's outcome: the first run, then each resume. */
  outcomes: ExecutionOutcome[];
  /** The session's report at the end (undefined: the workflow made none). */
  report?: SessionReport;
  /** The exit status `rollout upgrade` (or its last `session resume`) would give: 0 completed, 1 not. */
  exitStatus: number;
  site: SiteState;
  reservations: WlmReservation[];
  /** Locks of this store still held on the nodes, by owner. */
  lockOwners: Map<string, string>;
  operator: OperatorRecord[];
  /** The run outlasted its budget (simulated or real) and was ended by the runner. */
  budgetExceeded?: string;
  /** Spans of more than two polls in which the running session had nothing in flight, and neither it nor the site changed or said anything. */
  silence: SilentWait[];
  /** Simulated epoch ms at the run's start (the site's change log is in the same time). */
  startedAt: number;
  /** Simulated seconds from the start to the end. */
  simulatedSeconds: number;
  realMs: number;
  /** With the site's triggers armed: what the site and the relay record of them at the end. */
  siteEvents?: SiteEventsRecord;
}

export interface SilentWait {
  /** Simulated seconds after the start. */
  from: number;
  to: number;
  /** What the session's record says it waits for, if anything. */
  waiting?: string;
  lastMessage?: string;
}

/** Silence this long (simulated seconds) ends a run: it cannot progress (a longer wait for a gate is more than any scenario draws). */
const STALL_SECONDS = 3 * 3600;

/** A message that says why the run waits: an error it retries, a gate, nodes held or left alone. */
const EXPLAINS_A_WAIT = /fail|wait|retr|paus|approv|held|left alone|not known|halt/i;

export interface RunOptions {
  /** Simulated seconds after which a run that has not ended is judged stuck (default 3 days). */
  simulatedBudgetSeconds?: number;
  /** Real milliseconds after which a run is ended (default 120 s: a guard for a run that never lets its clock settle; a slow host under load takes tens of seconds for a long run over SSM). */
  realBudgetMs?: number;
}

export async function runScenario(scenario: Scenario, options: RunOptions = {}): Promise<ScenarioRun> {
  const startedReal = Date.now();
  const site = parseSiteDefinition(scenarioSite(scenario));
  // The relay delivers to the runtime, which its connectors are built for: it is handed the runtime once started.
  const started: { runtime?: EmbeddedRuntime } = {};
  const { connectors, relay } = scenarioConnectors(scenario, () => started.runtime!);
  const runtime = await EmbeddedRuntime.start({
    site,
    ...(connectors ? { connectors } : {}),
    // A workflow that loops without waiting on in-memory state alone (a Wait For Site Event refused at once) runs on
    // promises only and would starve every timer, the runner's watch for it included: each invocation yields first.
    ...(relay ? { wrapFunction: (_name: string, fn: LocalFunction) => async (payload: unknown) => (await yieldToTimers(), fn(payload)) } : {}),
  });
  started.runtime = runtime;
  try {
    return await drive(runtime, scenario, options, startedReal, relay);
  } finally {
    relay?.kill();
    await runtime.close();
  }
}

async function drive(runtime: EmbeddedRuntime, scenario: Scenario, options: RunOptions, startedReal: number, relay?: ScenarioRelay): Promise<ScenarioRun> {
  const clock = runtime.clock;
  const start = clock.now();
  const simulatedBudgetMs = (options.simulatedBudgetSeconds ?? 3 * 86400) * 1000;
  const realDeadline = startedReal + (options.realBudgetMs ?? 120_000);
  const pending = [...scenario.operator];
  const run = await runtime.run('rollingUpgrade', scenario.request);
  const upgradeId = run.id;
  const budget: OperatorBudget = { start, simulatedSeconds: simulatedBudgetMs / 1000, realDeadline, startedReal };
  const stopGuards = guardRun(runtime, budget);
  // Silence: the session runs (UPDATING), nothing in flight, and neither the site nor the session's messages change.
  const pollSeconds = Number(scenario.request.pollIntervalSeconds);
  const silence: SilentWait[] = [];
  let seen = '';
  let silentSince: number | undefined;
  let saidBefore: string | undefined;
  const watchSilence = async (elapsed: number) => {
    const session = await runtime.store.getSession(upgradeId);
    if (!session) return;
    const [messages, nodes] = await Promise.all([runtime.store.messages.list(upgradeId), runtime.store.listNodes(upgradeId)]);
    const inFlight = nodes.some((n) => n.status === 'IN_PROGRESS');
    const now = `${runtime.simulator.simulator.state().changes.length}/${messages.length}/${session.state}/${inFlight}`;
    const silent = session.state === 'UPDATING' && !inFlight && now === seen;
    seen = now;
    if (!silent) {
      // A silence that follows a message saying why (an error being retried, a wait) has been explained.
      if (silentSince !== undefined && elapsed - silentSince > pollSeconds * 2 && !EXPLAINS_A_WAIT.test(saidBefore ?? ''))
        silence.push({ from: silentSince, to: elapsed, waiting: session.progress.window?.waiting, lastMessage: saidBefore });
      silentSince = undefined;
      return;
    }
    if (silentSince === undefined) {
      silentSince = elapsed;
      saidBefore = messages.at(-1);
    }
    if (elapsed - silentSince > STALL_SECONDS && budget.exceeded === undefined) {
      budget.exceeded = `${STALL_SECONDS} simulated seconds with nothing in flight and nothing said or done`;
      if (!EXPLAINS_A_WAIT.test(saidBefore ?? ''))
        silence.push({ from: silentSince, to: elapsed, waiting: session.progress.window?.waiting, lastMessage: saidBefore });
      await killRunning(runtime);
    }
  };
  const { outcomes, operator } = await runOperatorActions(run, {
    clock,
    pending,
    budget,
    act: (action, elapsed) => act(runtime, action, upgradeId, elapsed, relay),
    // A stop, cancel or kill drawn for a workflow parked for the site's events waits for it to park.
    ready: async (action) => !action.whileParked || (await runtime.store.getSession(upgradeId))?.siteWaitToken !== undefined,
    watch: watchSilence,
    kill: () => killRunning(runtime),
    // Actions whose moment passed while it stood still are dropped (the process was not running).
    resume: () => runtime.run('rollingUpgrade', { resumeUpgradeId: upgradeId }),
  });
  stopGuards();
  const budgetExceeded = budget.exceeded;

  const session = await runtime.store.getSession(upgradeId);
  const report = session ? await buildSessionReport(runtime.store, session) : undefined;
  const siteState = runtime.simulator.state();
  return {
    ...(relay ? { siteEvents: await siteEventsRecord(runtime, upgradeId, relay) } : {}),
    scenario,
    upgradeId,
    outcomes,
    ...(report ? { report } : {}),
    exitStatus: report?.completed ? 0 : 1,
    site: siteState,
    reservations: runtime.simulator.simulator.workloadManager.listReservations(),
    lockOwners: await runtime.store.locks.getLockOwners(scenario.nodes.map((n) => n.name)),
    operator,
    ...(budgetExceeded ? { budgetExceeded } : {}),
    startedAt: start,
    simulatedSeconds: Math.round((clock.now() - start) / 1000),
    silence,
    realMs: Date.now() - startedReal,
  };
}

/**
 * Ends a run that never lets the clock settle on the wall clock (its real deadline), and one that loops without
 * waiting at once (watchForSpin), saying why in `budget.exceeded`. Returns what stops both guards.
 */
function guardRun(runtime: EmbeddedRuntime, budget: OperatorBudget): () => void {
  const endRun = (why: string) => {
    budget.exceeded ??= why;
    void killRunning(runtime).catch(() => undefined);
  };
  const guard = setTimeout(() => endRun(`${Date.now() - budget.startedReal} ms of real time (the clock never settled)`), budget.realDeadline - Date.now());
  const spin = watchForSpin(runtime, budget.start, endRun);
  return () => {
    clearTimeout(guard);
    clearInterval(spin);
  };
}

const yieldToTimers = () => new Promise<void>((resolve) => setImmediate(resolve));

/** State transitions at one simulated instant past which a run is judged to loop without waiting (a run of ten nodes takes a few dozen; a loop over SSM, a hundred a real second). */
const SPIN_TRANSITIONS = 500;

/**
 * Watches, every real second, for a workflow that loops without ever waiting: its state transitions keep rising
 * while the simulated clock stands still. Ends it at once (`spun` says why) rather than at the real-time guard.
 */
function watchForSpin(runtime: EmbeddedRuntime, start: number, spun: (why: string) => void): NodeJS.Timeout {
  const transitions = () => runtime.engine.executions.reduce((sum, e) => sum + e.stateTransitions, 0);
  let last = { at: runtime.clock.now(), transitions: transitions() };
  return setInterval(() => {
    const now = { at: runtime.clock.now(), transitions: transitions() };
    if (now.at !== last.at) last = now;
    else if (now.transitions - last.transitions >= SPIN_TRANSITIONS)
      spun(`${now.transitions - last.transitions} state transitions at +${(now.at - start) / 1000}s with the clock standing still (a loop that never waits)`);
  }, 1000);
}

type TakenAction = OperatorRecord & { resumed?: boolean };

/** When a scenario's run is ended by the bench rather than by itself: its simulated and real budgets, and why it was ended. */
export interface OperatorBudget {
  /** Simulated epoch ms of the scenario's start. */
  start: number;
  simulatedSeconds: number;
  /** Date.now() past which the run is killed, and Date.now() at the scenario's start. */
  realDeadline: number;
  startedReal: number;
  /** Why the bench ended the run (a budget, a stall), once it has. */
  exceeded?: string;
}

/** What runOperatorActions needs of one kind of run. */
export interface OperatorLoop {
  clock: EmbeddedRuntime['clock'];
  /** The scenario's actions not yet taken, in time order: taken from the front at their moments; those left were never reached. */
  pending: OperatorAction[];
  budget: OperatorBudget;
  /** Takes one action at `elapsed` simulated seconds: the record of it (the run's state before, the answer). */
  act(action: OperatorAction, elapsed: number): Promise<OperatorRecord>;
  /** Whether an action whose moment came can be taken now (absent: always); one not ready waits for a later turn, the others are taken. */
  ready?(action: OperatorAction): Promise<boolean>;
  /** Looks at the run after the actions of each turn (the upgrade's silence watch). */
  watch?(elapsed: number): Promise<void>;
  /** kill -9: every execution of the run ends without a word. */
  kill(): Promise<void>;
  /** Starts the run's next execution after a stop or kill that asked for a resume (the `resumes`th). */
  resume(resumes: number): Promise<{ outcome: Promise<ExecutionOutcome> }>;
}

/**
 * One action of a deployment's or task run's scenario: the run's status before it, and the control plane's
 * answer as JSON (`null` for none), or `refused: why`.
 */
export async function takeAction(
  action: OperatorAction,
  elapsed: number,
  statusBefore: () => Promise<string | undefined>,
  work: () => Promise<unknown>,
): Promise<OperatorRecord> {
  const stateBefore = await statusBefore();
  const taken: OperatorRecord = { action, takenAt: Math.round(elapsed), ...(stateBefore ? { stateBefore } : {}) };
  try {
    return { ...taken, answer: JSON.stringify((await work()) ?? null) };
  } catch (err) {
    return { ...taken, answer: `refused: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/**
 * A deployment's or a task run's scenario as runRecordedScenario runs it: its site, its operator's actions,
 * and how its run starts, reads and answers (each given the runtime and the run's id).
 */
export interface RecordedScenario {
  site: SiteDefinitionInput;
  nodes: readonly { name: string }[];
  operator: readonly OperatorAction[];
  /** Starts the run: its id and its first execution. */
  start(runtime: EmbeddedRuntime): Promise<{ id: string; outcome: Promise<ExecutionOutcome> }>;
  /** The run's status before an action. */
  statusBefore(runtime: EmbeddedRuntime, id: string): Promise<string | undefined>;
  /** The control plane's answer to an action (a refusal throws); `kill` is kill below, for the actions that kill. */
  answer(runtime: EmbeddedRuntime, id: string, action: OperatorAction, kill: () => Promise<void>): Promise<unknown>;
  /** kill -9: every execution of the run ends without a word. */
  kill(runtime: EmbeddedRuntime): Promise<void>;
  /** Starts the run's next execution after a stop or kill that asked for a resume (the `resumes`th). */
  resume(runtime: EmbeddedRuntime, id: string, resumes: number): Promise<{ outcome: Promise<ExecutionOutcome> }>;
}

/** What every deployment's or task run's scenario ends with, beside what its kind adds. */
export interface RecordedRun {
  outcomes: ExecutionOutcome[];
  operator: OperatorRecord[];
  budgetExceeded?: string;
  site: SiteState;
  lockOwners: Map<string, string>;
  simulatedSeconds: number;
  realMs: number;
}

/**
 * Runs a deployment's or a task run's scenario on an embedded runtime of its own to its end (each resume
 * included), each operator action recorded by takeAction at its moment, within `simulatedBudgetSeconds` and
 * 120 s of real time; `end` reads what the scenario's kind adds (given the run's id and the simulated epoch
 * ms of its start) before the runtime closes.
 */
export async function runRecordedScenario<T>(
  scenario: RecordedScenario,
  simulatedBudgetSeconds: number,
  end: (runtime: EmbeddedRuntime, id: string, start: number) => Promise<T>,
): Promise<T & RecordedRun> {
  const startedReal = Date.now();
  const runtime = await EmbeddedRuntime.start({ site: parseSiteDefinition(scenario.site) });
  try {
    const clock = runtime.clock;
    const start = clock.now();
    const first = await scenario.start(runtime);
    const { id } = first;
    const kill = () => scenario.kill(runtime);
    const budget: OperatorBudget = { start, simulatedSeconds: simulatedBudgetSeconds, realDeadline: startedReal + 120_000, startedReal };
    const { outcomes, operator } = await runOperatorActions(first, {
      clock,
      pending: [...scenario.operator],
      budget,
      act: (action, elapsed) =>
        takeAction(
          action,
          elapsed,
          () => scenario.statusBefore(runtime, id),
          () => scenario.answer(runtime, id, action, kill),
        ),
      kill,
      resume: (resumes) => scenario.resume(runtime, id, resumes),
    });
    const ended = await end(runtime, id, start);
    return {
      ...ended,
      outcomes,
      site: runtime.simulator.state(),
      lockOwners: await runtime.store.locks.getLockOwners(scenario.nodes.map((n) => n.name)),
      operator,
      ...(budget.exceeded ? { budgetExceeded: budget.exceeded } : {}),
      simulatedSeconds: Math.round((clock.now() - start) / 1000),
      realMs: Date.now() - startedReal,
    };
  } finally {
    await runtime.close();
  }
}

/**
 * Each execution of a run to its end, on virtual time, with the operator's actions taken at their moments;
 * a stop or kill that asked for a resume starts the next execution. A run past its budget is killed.
 */
export async function runOperatorActions(
  first: { outcome: Promise<ExecutionOutcome> },
  loop: OperatorLoop,
): Promise<{ outcomes: ExecutionOutcome[]; operator: OperatorRecord[] }> {
  const { clock, pending, budget } = loop;
  const operator: TakenAction[] = [];
  const outcomes: ExecutionOutcome[] = [];
  let run = first;
  for (let resumes = 1; ; resumes++) {
    let ended = false;
    const outcome = run.outcome.then((o) => {
      ended = true;
      return o;
    });
    while (!ended) {
      await clock.busy(async () => {
        if (ended) return;
        const elapsed = (clock.now() - budget.start) / 1000;
        for (let i = 0; i < pending.length && pending[i]!.atSeconds <= elapsed; ) {
          if (loop.ready && !(await loop.ready(pending[i]!))) i++;
          else operator.push(await loop.act(pending.splice(i, 1)[0]!, elapsed));
        }
        await loop.watch?.(elapsed);
        if (budget.exceeded === undefined && (elapsed > budget.simulatedSeconds || Date.now() > budget.realDeadline)) {
          budget.exceeded =
            elapsed > budget.simulatedSeconds ? `${budget.simulatedSeconds} simulated seconds` : `${Date.now() - budget.startedReal} ms of real time`;
          await loop.kill();
        }
      });
      if (ended) break;
      try {
        await clock.settled();
      } catch (err) {
        if (err instanceof ClockStalledError) break;
        throw err;
      }
    }
    outcomes.push(await outcome);
    if (budget.exceeded !== undefined) break;
    // The action that ended this execution (a stop, a kill), if it asked for a resume.
    const last = operator.find(
      (r) => (r.action.kind === 'stop' || r.action.kind === 'kill') && r.action.resume === true && !r.resumed && !r.answer?.startsWith('refused'),
    );
    if (!last) break;
    last.resumed = true;
    run = await loop.resume(resumes);
  }
  for (const action of pending) operator.push({ action });
  return { outcomes, operator: operator.map(({ resumed: _, ...record }) => record) };
}

/**
 * Ends every running rolling-upgrade execution at once, as kill -9 ends the process that runs them: the
 * one running now (a run that continued as new runs under another execution than the one started).
 */
async function killRunning(runtime: EmbeddedRuntime): Promise<void> {
  const running = runtime.engine.listExecutions(runtime.stateMachineArns.RollingUpgrade).filter((e) => e.status === 'RUNNING');
  await Promise.all(running.map((e) => runtime.engine.stop(e.executionArn)));
}

async function act(runtime: EmbeddedRuntime, action: OperatorAction, upgradeId: string, elapsed: number, relay?: ScenarioRelay): Promise<TakenAction> {
  const stateBefore = (await runtime.store.getSession(upgradeId))?.state;
  const taken = { action, takenAt: Math.round(elapsed), ...(stateBefore ? { stateBefore } : {}) };
  const answer = async (work: () => Promise<unknown>) => {
    try {
      return JSON.stringify(await work());
    } catch (err) {
      return `refused: ${err instanceof Error ? err.message : String(err)}`;
    }
  };
  const sim = runtime.simulator.simulator;
  switch (action.kind) {
    case 'stop':
      return { ...taken, answer: await answer(() => runtime.stop(upgradeId)) };
    case 'cancel':
      return { ...taken, answer: await answer(() => runtime.cancel(upgradeId)) };
    case 'kill':
      return { ...taken, answer: await answer(() => killRunning(runtime)) };
    case 'admin-drain':
      return { ...taken, answer: await answer(async () => sim.workloadManager.drain(action.node!, action.reason!)) };
    case 'restart-slurmctld':
      return { ...taken, answer: await answer(async () => sim.headNode.restartController()) };
    case 'reconfigure':
      return { ...taken, answer: await answer(async () => sim.headNode.restartController()) };
    case 'kill-relay':
      return { ...taken, answer: await answer(async () => relay?.kill()) };
    case 'restart-relay':
      return { ...taken, answer: await answer(async () => relay?.restart()) };
    case 'lose-firings':
      return { ...taken, answer: await answer(async () => (sim.workloadManager.triggers.faults.loseFirings += action.count ?? 1)) };
    case 'fail-relay-program':
      return { ...taken, answer: await answer(async () => (sim.workloadManager.triggers.faults.failProgram = true)) };
    case 'fix-relay-program':
      return { ...taken, answer: await answer(async () => (sim.workloadManager.triggers.faults.failProgram = false)) };
  }
}
