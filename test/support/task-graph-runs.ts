import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import type { ExecutionOutcome } from '../../local/local-step-functions';
import type { TaskRunView } from '../../control-plane/reports/task-run-report';
import { parseSiteDefinition, type SiteDefinition, type SiteDefinitionInput, type SiteState } from '../../simulator';
import type { TaskLogEntry } from '../../simulator/models/task-runner';

const ROOT = path.join(__dirname, '..', '..');

/** The seed's worked example (examples/graphs/fuel-granular-example.yaml): five role groups, setup_network then setup_services on every role. */
export const EXAMPLE_GRAPH = readFileSync(path.join(ROOT, 'examples', 'graphs', 'fuel-granular-example.yaml'), 'utf8');

/**
 * A graph over the nodes of role compute, `strategy` at a time: drain each (its reason `kernel update`, waiting
 * for its job), reboot it into `template`, resume it.
 */
export function drainRebootResumeGraph(template: string, strategy: 'parallel' | 'one_by_one' = 'parallel'): string {
  return `
tasks:
  - {id: compute, type: group, role: [compute], parameters: {strategy: {type: ${strategy}}}}
  - {id: drain_compute, type: drain, groups: [compute], parameters: {reason: kernel update}}
  - {id: reboot_compute, type: reboot, groups: [compute], requires: [drain_compute], parameters: {template: ${template}, timeout: 600}}
  - {id: resume_compute, type: resume, groups: [compute], requires: [reboot_compute]}
`;
}

type SiteNodeInput = SiteDefinitionInput['nodes'][number];

/** The example's site (examples/sites/fuel-granular-example.yaml), each node's fields overridden as given (faults, gates). */
export function exampleSite(nodes: Record<string, Partial<SiteNodeInput>> = {}, timing: SiteDefinitionInput['timing'] = {}): SiteDefinition {
  const input = parse(readFileSync(path.join(ROOT, 'examples', 'sites', 'fuel-granular-example.yaml'), 'utf8')) as SiteDefinitionInput;
  return parseSiteDefinition({ ...input, nodes: input.nodes.map((node) => ({ ...node, ...nodes[node.name] })), timing: { ...input.timing, ...timing } });
}

export interface FinishedTaskRun {
  runId: string;
  outcome: ExecutionOutcome;
  view: TaskRunView;
  site: SiteState;
}

/** Starts a TaskGraph run and waits for its end (continue-as-new followed); reads back the run's view and the site. */
export async function runTaskGraph(runtime: EmbeddedRuntime, input: unknown): Promise<FinishedTaskRun> {
  const run = await runtime.run('taskGraph', input);
  const outcome = await run.outcome;
  const view = await runtime.taskRun(run.id);
  if (!view) throw new Error(`no task run after the workflow: ${outcome.status} ${outcome.error ?? ''} ${outcome.cause ?? ''}`);
  return { runId: run.id, outcome, view, site: runtime.simulator.state() };
}

/** The task log as the order things started: simulated start second -> the `node/task` runs that started then, sorted. */
export function startsBySecond(log: readonly TaskLogEntry[]): [number, string[]][] {
  const bySecond = new Map<number, string[]>();
  for (const entry of log) bySecond.set(entry.start, [...(bySecond.get(entry.start) ?? []), `${entry.node}/${entry.task}`]);
  return [...bySecond].sort(([a], [b]) => a - b).map(([second, runs]) => [second, runs.sort()]);
}

/** Most task runs in flight at once in the log (a run still going counts to the end). */
export function maxConcurrentTasks(log: readonly TaskLogEntry[]): number {
  const events = log.flatMap((e) => [[e.start, 1] as const, [e.end ?? Infinity, -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, delta] of events) max = Math.max(max, (now += delta));
  return max;
}
