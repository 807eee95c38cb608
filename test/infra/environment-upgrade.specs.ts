import { readFileSync } from 'node:fs';
import { ASL_FILES, ENVIRONMENT, ENVIRONMENT_UPGRADE_FUNCTION_NAMES, TABLE_ACTIONS, aslPlaceholders } from '../../contracts';
import {
  deployedAslProperties,
  deployedFunctionProperties,
  getAttArn,
  grantedOn,
  stackArn,
  taskTimeouts,
  type Resource,
  type TemplateQueries,
} from '../support/template-queries';

const asl = readFileSync(ASL_FILES.environmentUpgrade, 'utf8');
const STATE_MACHINE_NAME = 'BaremetalRollout-EnvironmentUpgrade';

/** The environment-upgrade functions and state machine of the stack. */
export function environmentUpgradeSpecs(stack: TemplateQueries): void {
  const stateMachine = () => stack.stateMachine(STATE_MACHINE_NAME);
  const rollingUpgrade = () => stack.stateMachine('BaremetalRollout-RollingUpgrade');
  const tableId = () => stack.onlyOne('AWS::DynamoDB::Table')[0];
  const environmentOf = (name: string) => (stack.resources[stack.functionId(name)]?.Properties.Environment as { Variables: Record<string, unknown> }).Variables;

  describe('functions', () => {
    it.each(ENVIRONMENT_UPGRADE_FUNCTION_NAMES)('%s: Node 22 on arm64, traced, with the timeout of the Task that invokes it', (name) => {
      const timeout = taskTimeouts(asl).get(name);
      expect(timeout).toBeDefined();
      expect(stack.resources[stack.functionId(name)]?.Properties).toMatchObject(deployedFunctionProperties(timeout, 'EnvironmentUpgradeFunctions'));
    });

    it.each(ENVIRONMENT_UPGRADE_FUNCTION_NAMES)('%s: gets the table, the boot service and the inventory, and may read and write the table', (name) => {
      expect(environmentOf(name)).toMatchObject({
        [ENVIRONMENT.tableName]: { Ref: tableId() },
        [ENVIRONMENT.bootServiceUrl]: { Ref: 'BootServiceUrl' },
        [ENVIRONMENT.inventoryUrl]: { Ref: 'InventoryUrl' },
      });
      const statements = stack.statementsOf(stack.resources[stack.functionId(name)] as Resource);
      // Least privilege: the actions contracts/table-access.ts names for it (table-grants.specs.ts holds every function to exactly those).
      for (const action of TABLE_ACTIONS[name]) expect(grantedOn(statements, `dynamodb:${action}`)).toContainEqual(getAttArn(tableId()));
      expect(grantedOn(statements, 'dynamodb:Query')).toContainEqual({ 'Fn::Join': ['', [getAttArn(tableId()), '/index/*']] });
      expect(grantedOn(statements, 'dynamodb:Scan')).toEqual([]);
    });
  });

  describe('state machine', () => {
    it('deploys the very ASL file the embedded engine runs, inline', () => {
      expect(stateMachine()[1].Properties).toMatchObject(deployedAslProperties(asl));
    });

    it("substitutes each function's ARN and the rolling-upgrade machine's, and nothing else", () => {
      const placeholders = aslPlaceholders(asl);
      expect(placeholders).toEqual([...ENVIRONMENT_UPGRADE_FUNCTION_NAMES.map((name) => `${name}FunctionArn`), 'RollingUpgradeStateMachineArn'].sort());
      expect(stateMachine()[1].Properties.DefinitionSubstitutions).toEqual({
        ...Object.fromEntries(ENVIRONMENT_UPGRADE_FUNCTION_NAMES.map((name) => [`${name}FunctionArn`, getAttArn(stack.functionId(name))])),
        RollingUpgradeStateMachineArn: { Ref: rollingUpgrade()[0] },
      });
    });

    it('may invoke its functions and nothing else', () => {
      const invokable = grantedOn(stack.statementsOf(stateMachine()[1]), 'lambda:InvokeFunction');
      expect(invokable).toHaveLength(ENVIRONMENT_UPGRADE_FUNCTION_NAMES.length);
      expect(invokable).toEqual(expect.arrayContaining(ENVIRONMENT_UPGRADE_FUNCTION_NAMES.map((name) => getAttArn(stack.functionId(name)))));
    });

    it('may start the rolling upgrade (a child it polls, never stops) and itself (continue-as-new)', () => {
      const statements = stack.statementsOf(stateMachine()[1]);
      expect(grantedOn(statements, 'states:StartExecution')).toEqual(
        expect.arrayContaining([{ Ref: rollingUpgrade()[0] }, stackArn('states', `stateMachine:${STATE_MACHINE_NAME}`)]),
      );
      expect(grantedOn(statements, 'states:StartExecution')).toHaveLength(2);
      expect(grantedOn(statements, 'states:StopExecution')).toEqual([]);
    });

    it('is what the API Lambda starts, and outputs its ARN', () => {
      const api = stack.resources[stack.functionId('handler')] as Resource;
      expect((api.Properties.Environment as { Variables: Record<string, unknown> }).Variables[ENVIRONMENT.environmentUpgradeStateMachineArn]).toEqual({
        Ref: stateMachine()[0],
      });
      expect(grantedOn(stack.statementsOf(api), 'states:StartExecution')).toContainEqual({ Ref: stateMachine()[0] });
      stack.template.hasOutput('EnvironmentUpgradeStateMachineArn', { Value: { Ref: stateMachine()[0] } });
    });
  });
}
