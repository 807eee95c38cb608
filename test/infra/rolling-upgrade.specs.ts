import { readFileSync } from 'node:fs';
import { ASL_FILES, ENVIRONMENT, ROLLING_UPGRADE_FUNCTION_NAMES, aslPlaceholders } from '../../contracts';
import {
  deployedAslProperties,
  deployedFunctionProperties,
  getAttArn,
  grantedOn,
  stackArn,
  taskTimeouts,
  type TemplateQueries,
} from '../support/template-queries';

const asl = readFileSync(ASL_FILES.rollingUpgrade, 'utf8');
const STATE_MACHINE_NAME = 'BaremetalRollout-RollingUpgrade';

/** The rolling-upgrade functions and state machine of the stack. */
export function rollingUpgradeSpecs(stack: TemplateQueries): void {
  const stateMachine = () => stack.stateMachine(STATE_MACHINE_NAME);
  const tableId = () => stack.onlyOne('AWS::DynamoDB::Table')[0];
  const environmentOf = (name: string) => (stack.resources[stack.functionId(name)]?.Properties.Environment as { Variables: Record<string, unknown> }).Variables;

  describe('functions', () => {
    it.each(ROLLING_UPGRADE_FUNCTION_NAMES)('%s: Node 22 on arm64, traced, with the timeout of the Task that invokes it', (name) => {
      // AwaitOperator's Task waits for a task token (a day); the function itself only stores the token.
      const timeout = name === 'AwaitOperator' ? 120 : taskTimeouts(asl).get(name);
      expect(timeout).toBeDefined();
      expect(stack.resources[stack.functionId(name)]?.Properties).toMatchObject(deployedFunctionProperties(timeout, 'RollingUpgradeFunctions'));
    });

    it.each(ROLLING_UPGRADE_FUNCTION_NAMES)('%s: gets the table name and the site connection', (name) => {
      expect(environmentOf(name)).toMatchObject({
        [ENVIRONMENT.tableName]: { Ref: tableId() },
        [ENVIRONMENT.workloadManagerUrl]: { Ref: 'WorkloadManagerUrl' },
        [ENVIRONMENT.slurmApiVersion]: { Ref: 'SlurmApiVersion' },
        [ENVIRONMENT.slurmUserName]: { Ref: 'SlurmUserName' },
        [ENVIRONMENT.bootServiceUrl]: { Ref: 'BootServiceUrl' },
        [ENVIRONMENT.inventoryUrl]: { Ref: 'InventoryUrl' },
        [ENVIRONMENT.nodeNames]: { Ref: 'NodeNames' },
      });
      stack.template.hasParameter('SlurmApiVersion', { Default: 'v0.0.42' });
      stack.template.hasParameter('NodeNames', { Default: 'nid{nid:06}' });
    });

    // Which secrets each may read: test/infra/least-privilege.specs.ts.
    it.each(ROLLING_UPGRADE_FUNCTION_NAMES)('%s: gets the ARN of the Slurm JWT secret, never the token', (name) => {
      expect(environmentOf(name)[ENVIRONMENT.slurmTokenSecretArn]).toEqual({ Ref: 'SlurmTokenSecretArn' });
      expect(environmentOf(name)).not.toHaveProperty(ENVIRONMENT.slurmToken);
    });
  });

  describe('state machine', () => {
    it('deploys the very ASL file the embedded engine runs, inline', () => {
      expect(stateMachine()[1].Properties).toMatchObject(deployedAslProperties(asl));
    });

    it("substitutes each ${<Name>FunctionArn} with that function's ARN, and nothing else", () => {
      const placeholders = aslPlaceholders(asl);
      expect(placeholders).toEqual(ROLLING_UPGRADE_FUNCTION_NAMES.map((name) => `${name}FunctionArn`).sort());
      expect(stateMachine()[1].Properties.DefinitionSubstitutions).toEqual(
        Object.fromEntries(placeholders.map((key) => [key, getAttArn(stack.functionId(key.replace(/FunctionArn$/, '')))])),
      );
    });

    it('may invoke every function', () => {
      const invokable = grantedOn(stack.statementsOf(stateMachine()[1]), 'lambda:InvokeFunction');
      for (const name of ROLLING_UPGRADE_FUNCTION_NAMES) expect(invokable).toContainEqual(getAttArn(stack.functionId(name)));
    });

    it('may start executions of itself (continue-as-new), by an ARN built from its fixed name', () => {
      const startable = grantedOn(stack.statementsOf(stateMachine()[1]), 'states:StartExecution');
      expect(startable).toEqual([stackArn('states', `stateMachine:${STATE_MACHINE_NAME}`)]);
    });

    it('outputs its ARN', () => {
      stack.template.hasOutput('RollingUpgradeStateMachineArn', { Value: { Ref: stateMachine()[0] } });
    });
  });
}
