import {
  checkReferences,
  cycleProblems,
  indexGraphItems,
  readGraphItems,
  readGraphShell,
  stageProblems,
  type GraphItemIndex,
} from '../../../core/task-graph/parse-task-graph';

/** The validation's steps one by one (validateTaskGraph composes them; task-plan.test.ts and audit-fixes.test.ts pin the whole). */

const shell = (id: string, extra: object = {}) => ({ id, type: 'shell', role: '*', parameters: { cmd: 'true' }, ...extra });

/** The steps up to the index, as validateTaskGraph runs them. */
function indexOf(raw: unknown[]): { index: GraphItemIndex; problems: string[] } {
  const { doc, at } = readGraphShell(raw, 'task graph');
  const read = readGraphItems(doc.tasks, at);
  const { index, problems } = indexGraphItems(read, at);
  return { index, problems: [...read.problems, ...problems].map((p) => `${p.field}: ${p.message}`) };
}

describe('readGraphShell', () => {
  it("names a bare list's items `[i]` and an object's `tasks[i]`", () => {
    expect(readGraphShell([], 'g').at(3)).toBe('[3]');
    expect(readGraphShell({ tasks: [] }, 'g').at(3)).toBe('tasks[3]');
  });

  it('refuses an outer form that is not a graph, naming the subject', () => {
    expect(() => readGraphShell({ tasks: 1 }, 'task graph g.yaml')).toThrow('Invalid task graph g.yaml: tasks: tasks must be a list of items');
  });
});

describe('readGraphItems', () => {
  it('keeps the good items with their document positions, and the ids of the bad ones', () => {
    // Prepare: a bad item between two good ones, and one without an id.
    const raws = [shell('a'), { id: 'b', type: 'ansible' }, { type: 'shell' }, shell('c')];

    // Act
    const read = readGraphItems(raws, (i) => `[${i}]`);

    // Assess
    expect(read.items.map((item) => item.id)).toEqual(['a', 'c']);
    expect(read.positions).toEqual([0, 3]);
    expect([...read.badIds]).toEqual(['b']);
    expect(read.problems.map((p) => p.field)).toEqual(['[1].type', '[2].id', '[2].parameters']);
  });
});

describe('indexGraphItems', () => {
  it('reports a duplicate id where it is, naming the first; the first one wins the kind', () => {
    const { index, problems } = indexOf([shell('a'), { id: 'a', type: 'group', role: 'r' }, { id: 'g', type: 'group', role: 'r' }]);

    expect(problems).toEqual(["[1].id: duplicate id 'a' (first at [0])"]);
    expect(index.isTask('a')).toBe(true);
    expect(index.isGroup('a')).toBe(false);
    expect(index.isGroup('g')).toBe(true);
  });

  it('knows the default stages without declaring them, and positions past a bad item', () => {
    const { index } = indexOf([
      { id: 'x', type: 'nope' },
      { id: 's', type: 'stage' },
    ]);

    expect(['pre_deployment', 'deployment', 'post_deployment', 's'].every((id) => index.isStage(id))).toBe(true);
    expect(index.atItem(0)).toBe('[1]');
    expect(index.badIds.has('x')).toBe(true);
  });
});

describe('checkReferences', () => {
  it("turns required_for into the named item's requires, in document order, and lists each group's tasks", () => {
    // Prepare: c requires a; b is required for c; group g runs a.
    const { index } = indexOf([
      shell('a'),
      shell('c', { requires: ['a'] }),
      shell('b', { required_for: ['c'] }),
      { id: 'g', type: 'group', role: 'r', tasks: ['a'] },
    ]);

    // Act
    const { problems, order } = checkReferences(index);

    // Assess
    expect(problems).toEqual([]);
    expect([...order.taskRequires.get('c')!]).toEqual(['a', 'b']);
    expect(order.groupTasks.get('a')).toEqual(['g']);
  });

  it('orders the default stages, then declared ones by their references', () => {
    const { index } = indexOf([
      { id: 'late', type: 'stage', requires: ['post_deployment'] },
      { id: 'early', type: 'stage', required_for: ['late'] },
    ]);

    const { order } = checkReferences(index);

    expect(order.stageIds).toEqual(['pre_deployment', 'deployment', 'post_deployment', 'late', 'early']);
    expect([...order.stageAfter.get('deployment')!]).toEqual(['pre_deployment']);
    expect([...order.stageAfter.get('late')!]).toEqual(['post_deployment', 'early']);
  });

  it("accepts a stage wherever a task or group is named, and says nothing of a bad item's id", () => {
    const { index } = indexOf([
      { id: 'broken', type: 'ansible' },
      shell('a', { requires: ['deployment', 'broken', 'ghost'] }),
      shell('a2', { requires: ['a2'] }),
    ]);

    const { problems, order } = checkReferences(index);

    expect(problems.map((p) => `${p.field}: ${p.message}`)).toEqual(["[1].requires[2]: unknown task or stage 'ghost'", "[2].requires[0]: 'a2' names itself"]);
    expect([...order.taskRequires.get('a')!]).toEqual([]);
  });

  it('asks a task that names no role and no group to say where it runs, unless a group lists it', () => {
    const { index } = indexOf([
      { id: 'lost', type: 'shell', parameters: { cmd: 'true' } },
      { id: 'held', type: 'shell', parameters: { cmd: 'true' } },
      { id: 'g', type: 'group', role: 'r', tasks: ['held'] },
    ]);

    expect(checkReferences(index).problems).toEqual([{ field: '[0]', message: "names no role and no groups: say where it runs (role: '*' for every node)" }]);
  });
});

describe('cycleProblems', () => {
  it('says whether the stages are in a cycle; one led by a default stage no item declares is named at `stages`', () => {
    const { index } = indexOf([{ id: 'pre_deployment', type: 'stage', requires: ['post_deployment'] }]);

    const cycles = cycleProblems(index, checkReferences(index).order);

    expect(cycles.stagesInCycle).toBe(true);
    expect(cycles.problems).toEqual([{ field: 'stages', message: 'stages in a cycle: deployment -> post_deployment -> pre_deployment -> deployment' }]);
  });

  it('names stages, then groups, then tasks, each cycle by its members in document order', () => {
    const { index } = indexOf([
      shell('b', { requires: ['a'] }),
      shell('a', { requires: ['b'] }),
      { id: 'g2', type: 'group', role: 'r', requires: ['g1'] },
      { id: 'g1', type: 'group', role: 'r', requires: ['g2'] },
    ]);

    const cycles = cycleProblems(index, checkReferences(index).order);

    expect(cycles.stagesInCycle).toBe(false);
    expect(cycles.problems.map((p) => `${p.field}: ${p.message}`)).toEqual(['[2]: groups in a cycle: g2 -> g1 -> g2', '[0]: tasks in a cycle: b -> a -> b']);
  });
});

describe('stageProblems', () => {
  it('refuses a task waiting for a task of a later stage, and leaves a task of an unknown stage to the references', () => {
    const { index } = indexOf([
      shell('early', { stage: 'pre_deployment', requires: ['late'] }),
      shell('late'),
      shell('lost', { stage: 'nowhere', requires: ['late'] }),
    ]);
    const { order } = checkReferences(index);

    const problems = stageProblems(index, order, ['pre_deployment', 'deployment', 'post_deployment']);

    expect(problems).toEqual([{ field: '[0]', message: "runs in stage pre_deployment but waits for 'late' of the later stage deployment" }]);
  });
});
