import { readFileSync } from 'node:fs';
import { ASL_FILES, ENVIRONMENT, TASK_GRAPH_FUNCTION_NAMES, aslPlaceholders } from '../../contracts';
import { deployedFunctionProperties, getAttArn, grantedOn, stackArn, taskTimeouts, type Resource, type TemplateQueries } from '../support/template-queries';

const asl = readFileSync(ASL_FILES.taskGraph, 'utf8');
const STATE_MACHINE_NAME = 'BaremetalRollout-TaskGraph';

/** The task-graph functions and state machine of the stack. */
export function taskGraphSpecs(stack: TemplateQueries): void {
  const stateMachine = () => stack.stateMachine(STATE_MACHINE_NAME);
  const environmentOf = (name: string) => (stack.resources[stack.functionId(name)]?.Properties.Environment as { Variables: Record<string, unknown> }).Variables;

  describe('functions', () => {
    it.each(TASK_GRAPH_FUNCTION_NAMES)('%s: Node 22 on arm64, traced, own log group, with the timeout of the Task that invokes it', (name) => {
      const timeout = taskTimeouts(asl).get(name);
      expect(timeout).toBeDefined();
      expect(stack.resources[stack.functionId(name)]?.Properties).toMatchObject(deployedFunctionProperties(timeout, 'TaskGraphFunctions'));
    });

    it.each(TASK_GRAPH_FUNCTION_NAMES)(
      '%s: gets the table and the site its tasks reach (Slurm for drain and resume, BOS for reboot, HSM for roles and gates)',
      (name) => {
        expect(environmentOf(name)).toMatchObject({
          [ENVIRONMENT.tableName]: { Ref: stack.onlyOne('AWS::DynamoDB::Table')[0] },
          [ENVIRONMENT.workloadManagerUrl]: { Ref: 'WorkloadManagerUrl' },
          [ENVIRONMENT.slurmTokenSecretArn]: { Ref: 'SlurmTokenSecretArn' },
          [ENVIRONMENT.bootServiceUrl]: { Ref: 'BootServiceUrl' },
          [ENVIRONMENT.inventoryUrl]: { Ref: 'InventoryUrl' },
        });
        expect(environmentOf(name)).not.toHaveProperty(ENVIRONMENT.provisionerUrl);
        expect(environmentOf(name)).not.toHaveProperty(ENVIRONMENT.slurmToken);
      },
    );

    it.each(TASK_GRAPH_FUNCTION_NAMES)('%s: may read and write the table (the run, its plan and its chunks)', (name) => {
      const statements = stack.statementsOf(stack.resources[stack.functionId(name)] as Resource);
      const tableArn = getAttArn(stack.onlyOne('AWS::DynamoDB::Table')[0]);
      for (const action of [
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:BatchGetItem',
        'dynamodb:Query',
      ]) {
        expect(grantedOn(statements, action)).toContainEqual(tableArn);
      }
    });
  });

  describe('state machine', () => {
    it('deploys the very ASL file the embedded engine runs, inline', () => {
      expect(stateMachine()[1].Properties).toMatchObject({ DefinitionString: asl, StateMachineType: 'STANDARD', TracingConfiguration: { Enabled: true } });
    });

    it("substitutes each ${<Name>FunctionArn} with that function's ARN, and nothing else", () => {
      const placeholders = aslPlaceholders(asl);
      expect(placeholders).toEqual(TASK_GRAPH_FUNCTION_NAMES.map((name) => `${name}FunctionArn`).sort());
      expect(stateMachine()[1].Properties.DefinitionSubstitutions).toEqual(
        Object.fromEntries(placeholders.map((key) => [key, getAttArn(stack.functionId(key.replace(/FunctionArn$/, '')))])),
      );
    });

    it('may invoke its own functions, and start executions of itself (continue-as-new) by its fixed name', () => {
      const statements = stack.statementsOf(stateMachine()[1]);
      const invokable = grantedOn(statements, 'lambda:InvokeFunction');
      for (const name of TASK_GRAPH_FUNCTION_NAMES) expect(invokable).toContainEqual(getAttArn(stack.functionId(name)));
      expect(invokable).toHaveLength(TASK_GRAPH_FUNCTION_NAMES.length);
      expect(grantedOn(statements, 'states:StartExecution')).toEqual([stackArn('states', `stateMachine:${STATE_MACHINE_NAME}`)]);
    });

    it('outputs its ARN', () => {
      stack.template.hasOutput('TaskGraphStateMachineArn', { Value: { Ref: stateMachine()[0] } });
    });
  });
}
