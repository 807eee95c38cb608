import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { STAGES } from '../../../core/rolling-upgrade/session';
import { ROLLING_UPGRADE_STAGE_FUNCTIONS } from '../../../lambdas/activities/rolling-upgrade/handlers';

/** The ASL as these checks read it. */
interface Asl {
  States: Record<string, { Type: string; Choices?: { Variable: string; StringEquals: string; Next: string }[]; Parameters?: { FunctionName?: string } }>;
}

const ASL_PATH = join(__dirname, '../../../statemachines/rolling-upgrade.asl.json');
const readAsl = (): Asl => JSON.parse(readFileSync(ASL_PATH, 'utf8')) as Asl;

/** Stage -> function name, from the one stage table. */
const TABLE = new Map(Object.entries(ROLLING_UPGRADE_STAGE_FUNCTIONS).map(([name, { stage }]) => [stage as string, name]));

/**
 * Where Dispatch Stage and the stage table disagree. A stage routed to the wrong function would
 * find the session elsewhere and point back at Dispatch Stage: a silent loop, not an error.
 */
function dispatchProblems(asl: Asl): string[] {
  const problems: string[] = [];
  const dispatch = asl.States['Dispatch Stage'];
  if (dispatch?.Type !== 'Choice') return ['no Choice state named Dispatch Stage'];
  const routed = new Map<string, string>();
  for (const choice of dispatch.Choices ?? []) {
    if (choice.Variable !== '$.stage') problems.push(`a choice tests ${choice.Variable}, not $.stage`);
    routed.set(choice.StringEquals, choice.Next);
  }
  for (const [stage, name] of TABLE) {
    const next = routed.get(stage);
    if (next === undefined) {
      problems.push(`stage ${stage} is not routed`);
      continue;
    }
    const task = asl.States[next];
    const invoked = task?.Type === 'Task' ? task.Parameters?.FunctionName : undefined;
    if (invoked !== `\${${name}FunctionArn}`) problems.push(`stage ${stage} goes to ${next}, which invokes ${invoked}, not ${name}`);
  }
  for (const stage of routed.keys()) if (!TABLE.has(stage)) problems.push(`stage ${stage} is routed but not in the stage table`);
  return problems;
}

describe('the stage table and the workflow', () => {
  it("routes every stage of the table to the Task that invokes exactly that stage's function, and no other stage", () => {
    expect(dispatchProblems(readAsl())).toEqual([]);
  });

  it('names every stage but COMPLETE and STOPPED (where the workflow ends)', () => {
    expect([...TABLE.keys(), 'COMPLETE', 'STOPPED'].sort()).toEqual([...STAGES].sort());
  });

  it('catches a swapped route, a missing stage and a stage the table lacks', () => {
    const asl = readAsl();
    const choices = asl.States['Dispatch Stage']!.Choices!;
    const [first, second] = [choices[0]!, choices[1]!];
    [first.Next, second.Next] = [second.Next, first.Next];
    choices.pop();
    choices.push({ Variable: '$.stage', StringEquals: 'REBOOTING', Next: 'Clean Up' });
    const problems = dispatchProblems(asl);
    expect(problems).toContain(
      `stage ${first.StringEquals} goes to ${first.Next}, which invokes ${asl.States[first.Next]!.Parameters!.FunctionName}, not ${TABLE.get(first.StringEquals)}`,
    );
    expect(problems).toContain('stage CLEANUP is not routed');
    expect(problems).toContain('stage REBOOTING is routed but not in the stage table');
  });
});
