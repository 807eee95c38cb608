import { LocalStepFunctions, type ExecutionFigures, type ExecutionOutcome, type LocalFunction } from '../../local/local-step-functions';
import { VirtualClock } from '../../time/virtual-clock';
import { STATE_MACHINES, type StateMachineName, type WorkflowName } from '../../contracts';
import type { ProvisionNodeRun } from '../../simulator/models/provisioner';
import { maxInFlight } from './deployment-sites';

/** What a stubbed activity saw: its function, its payload, and when (simulated seconds from the start). */
export interface StubCall {
  fn: string;
  payload: Record<string, unknown>;
  at: number;
}

/** A stubbed activity: a plain function from the payload to the canned result (throw to fail the task). */
export type Stub = (payload: Record<string, unknown>, call: StubCall) => unknown;

/** An error as an activity raises it (its name becomes the task's Error). */
export function activityError(name: string, message = name): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

/**
 * The third test level (after unit tests of the core and activity tests against the simulator): the
 * workflow files run on the embedded engine, on virtual time, with every activity a stub. It checks
 * control flow alone: which task runs when, how many at once, and how the run ends.
 */
export class StubbedWorkflows {
  readonly clock = new VirtualClock();
  readonly engine: LocalStepFunctions;
  calls: StubCall[] = [];
  private readonly functions: Record<string, LocalFunction> = {};
  private readonly arns: Record<WorkflowName, string>;
  private startedAt = this.clock.now();
  private executionsBefore = 0;

  /** Loads the workflow files once (validating them takes a while); `use` sets the stubs of each case. */
  constructor(stubs: Record<string, Stub> = {}) {
    this.engine = new LocalStepFunctions({ functions: this.functions, time: this.clock });
    // Children first, as STATE_MACHINES lists them, under their contracts names.
    const arns = Object.fromEntries(
      (Object.keys(STATE_MACHINES) as StateMachineName[]).map((name) => [name, this.engine.register(name, STATE_MACHINES[name])]),
    ) as Record<StateMachineName, string>;
    this.arns = { rollingUpgrade: arns.RollingUpgrade, groupDeployment: arns.GroupDeployment, taskGraph: arns.TaskGraph };
    this.use(stubs);
  }

  /** Replaces every stub (a function without one is not found, as on Lambda), forgets the calls, and starts the elapsed time anew. */
  use(stubs: Record<string, Stub>): this {
    for (const fn of Object.keys(this.functions)) delete this.functions[fn];
    for (const [fn, stub] of Object.entries(stubs)) {
      this.functions[fn] = async (payload) => {
        const call = { fn, payload: payload as Record<string, unknown>, at: this.elapsedSeconds() };
        this.calls.push(call);
        return stub(call.payload, call);
      };
    }
    this.calls = [];
    this.startedAt = this.clock.now();
    this.executionsBefore = this.engine.executions.length;
    return this;
  }

  /** Runs the workflow, following continue-as-new, to the last execution's outcome. */
  run(workflow: WorkflowName, input: unknown, name?: string): Promise<ExecutionOutcome> {
    return this.engine.runToEnd(this.arns[workflow], input, name);
  }

  /** Simulated seconds since `use`. */
  elapsedSeconds(): number {
    return (this.clock.now() - this.startedAt) / 1000;
  }

  callsOf(fn: string): StubCall[] {
    return this.calls.filter((call) => call.fn === fn);
  }

  /** Execution ARNs of a state machine since `use`, in start order. */
  /** Figures of each execution of a state machine since `use`, in start order. */
  figuresOf(machine: string): ExecutionFigures[] {
    return this.engine.executions.slice(this.executionsBefore).filter((e) => e.executionArn.includes(`:execution:${machine}:`));
  }

  executionsOf(machine: string): string[] {
    return this.engine.executions
      .slice(this.executionsBefore)
      .map((e) => e.executionArn)
      .filter((arn) => arn.includes(`:execution:${machine}:`));
  }
}

/** The most intervals [from, to) open at one instant (a slot freed at t may be taken again at t). */
export function maxOverlap(intervals: readonly { from: number; to: number }[]): number {
  return maxInFlight(intervals.map(({ from, to }) => ({ startedAt: from, finishedAt: to }) as ProvisionNodeRun));
}
