import { InvalidInputError } from '../../../core/errors';
import { nextTaskStarts, planTaskGraph, startTaskRun, taskRunPolicy, validateTaskGraph, type TaskPlan } from '../../../core/task-graph';

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    if (err instanceof InvalidInputError) return err.problems.map((p) => `${p.field}: ${p.message}`);
    throw err;
  }
  throw new Error('accepted');
}
const shell = (id: string, extra: object = {}) => ({ id, type: 'shell', role: '*', parameters: { cmd: 'true' }, ...extra });
const tasksOf = (plan: TaskPlan) => Object.fromEntries(Object.entries(plan.nodes).map(([n, ts]) => [n, ts.map((t) => t.id)]));

describe('stages named by a task (B1)', () => {
  it('refuses a task waiting for its own or a later stage, or needed by its own or an earlier one; accepts the consistent ones', () => {
    expect(
      problemsOf(() =>
        validateTaskGraph([
          shell('a', { stage: 'pre_deployment', requires: ['post_deployment'] }),
          shell('b', { stage: 'post_deployment', required_for: ['pre_deployment'] }),
          shell('c', { requires: ['deployment'] }),
        ]),
      ),
    ).toEqual([
      "[0].requires[0]: waits for stage post_deployment, which does not end before the task's own stage pre_deployment: name a task, or move the task to a later stage",
      "[1].required_for[0]: is needed by stage pre_deployment, which does not start after the task's own stage post_deployment: move the task to an earlier stage",
      "[2].requires[0]: waits for stage deployment, which does not end before the task's own stage deployment: name a task, or move the task to a later stage",
    ]);
    expect(() => validateTaskGraph([{ id: 'deploy', type: 'stage' }, shell('a', { requires: ['pre_deployment'], required_for: ['deploy'] })])).not.toThrow();
  });
});

describe('attribute layers (B2, B3)', () => {
  it('refuses a layer naming a task the graph does not have, with its path', () => {
    const graph = { attributes: { release: { ntp: {} }, roles: { compute: { a: {}, ghost_task: {} } }, nodes: { n1: { typo: {} } } }, tasks: [shell('a')] };
    expect(problemsOf(() => validateTaskGraph(graph))).toEqual([
      "attributes.release.ntp: unknown task 'ntp'",
      "attributes.roles.compute.ghost_task: unknown task 'ghost_task'",
      "attributes.nodes.n1.typo: unknown task 'typo'",
    ]);
  });

  it('warns when a layer names a role or a node the site does not have', () => {
    const graph = validateTaskGraph({ attributes: { roles: { ghost: { a: { cmd: 'x' } } }, nodes: { n9: { a: { cmd: 'y' } } } }, tasks: [shell('a')] });
    expect(planTaskGraph(graph, [{ name: 'n1', roles: ['compute'] }]).warnings).toEqual([
      { field: 'attributes.roles.ghost', message: "no node of the site has role 'ghost': these parameters reach no task" },
      { field: 'attributes.nodes.n9', message: "'n9' is not a node of the site: these parameters reach no task" },
    ]);
  });

  it('checks the merged parameters against the task type, naming the task and the node', () => {
    const graph = validateTaskGraph({ attributes: { roles: { compute: { a: { cmd: 5, timeout: 'abc' } } } }, tasks: [shell('a')] });
    expect(problemsOf(() => planTaskGraph(graph, [{ name: 'n1', roles: ['compute'] }]))).toEqual([
      'tasks[0].parameters.cmd: cmd is required and must be a string (its parameters merged with the attribute layers, on node n1)',
      'tasks[0].parameters.timeout: timeout must be a number of seconds (its parameters merged with the attribute layers, on node n1)',
    ]);
    expect(() => planTaskGraph(graph, [{ name: 'n1', roles: ['controller'] }])).not.toThrow();
  });
});

describe('--start and --end across stages (B4, B5)', () => {
  const graph = validateTaskGraph([
    { id: 'rsync', type: 'rsync', role: '*', stage: 'pre_deployment', parameters: { src: '/a', dst: '/b' } },
    shell('net'),
    shell('svc', { requires: ['net'] }),
    shell('other'),
    shell('hosts', { stage: 'post_deployment' }),
  ]);
  const nodes = [{ name: 'n1', roles: ['compute'] }];
  const only = (selection: object) => tasksOf(planTaskGraph(graph, nodes, selection)).n1;

  it("start: the task, what depends on it, and every later stage; end: the task, what it requires, and every earlier stage (Fuel's stages are graph nodes)", () => {
    expect(only({ start: 'net' })).toEqual(['net', 'svc', 'hosts']);
    expect(only({ end: 'svc' })).toEqual(['rsync', 'net', 'svc']);
    expect(only({ start: 'net', end: 'svc' })).toEqual(['net', 'svc']);
    expect(only({ start: 'rsync', end: 'other' })).toEqual(['rsync', 'other']);
  });

  it('refuses an inverted --start/--end, and warns when the plan runs nothing, saying why', () => {
    expect(problemsOf(() => planTaskGraph(graph, nodes, { start: 'svc', end: 'net' }))).toEqual([
      "end: 'net' does not come after --start 'svc': no task is between them",
    ]);
    expect(problemsOf(() => planTaskGraph(graph, nodes, { start: 'hosts', end: 'pre_deployment' }))).toHaveLength(1);
    const empty = planTaskGraph(graph, [...nodes, { name: 'bare', roles: [] }], { nodes: ['bare'] });
    expect(empty.nodes).toEqual({});
    expect(empty.warnings).toEqual([{ field: 'selection', message: 'the plan runs no task: the nodes selected have no role (bare)' }]);
  });
});

describe('role-group caps (B6)', () => {
  it("apply to the grouped stages only: pre_deployment starts on every node at once, deployment by the group's amount", () => {
    const graph = validateTaskGraph([
      { id: 'compute', type: 'group', role: 'compute', parameters: { strategy: { type: 'parallel', amount: 2 } } },
      shell('pre', { stage: 'pre_deployment' }),
      shell('main', { groups: ['compute'], role: undefined }),
    ]);
    const plan = planTaskGraph(
      graph,
      ['c1', 'c2', 'c3', 'c4'].map((name) => ({ name, roles: ['compute'] })),
    );
    const pass = nextTaskStarts(startTaskRun(plan), taskRunPolicy(plan, 100), 0);
    expect(pass.starts.map((s) => s.op)).toEqual(['c1/pre', 'c2/pre', 'c3/pre', 'c4/pre']);
  });
});

describe('validation reports every problem (B7)', () => {
  it('a task cycle does not hide a task waiting for a later stage', () => {
    expect(
      problemsOf(() =>
        validateTaskGraph([
          shell('a', { requires: ['b'] }),
          shell('b', { requires: ['a'] }),
          shell('p', { stage: 'pre_deployment', requires: ['c'] }),
          shell('c'),
        ]),
      ),
    ).toEqual(['[0]: tasks in a cycle: a -> b -> a', "[2]: runs in stage pre_deployment but waits for 'c' of the later stage deployment"]);
  });

  it('a graph that waits on itself once laid over the nodes names its tasks (in execution order) and where the first one is', () => {
    const graph = validateTaskGraph([
      { id: 'first', type: 'group', role: 'a' },
      { id: 'second', type: 'group', role: 'b', requires: ['first'] },
      shell('early', { role: ['a'], requires: ['late'] }),
      shell('late', { role: ['b'] }),
    ]);
    const [problem] = problemsOf(() =>
      planTaskGraph(graph, [
        { name: 'n1', roles: ['a'] },
        { name: 'n2', roles: ['b'] },
      ]),
    );
    expect(problem).toMatch(
      /^\[3\]: laid over the nodes, the graph waits on itself \(a task requires one of a group that starts after it\): tasks late, early; dependency cycle: .*n1\/early/,
    );
  });
});
