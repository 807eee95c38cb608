import { readFileSync } from 'node:fs';
import { ASL_FILES, ENVIRONMENT, GROUP_DEPLOYMENT_FUNCTION_NAMES, aslPlaceholders } from '../../contracts';
import { SYNC_EVENTS_RULE_NAME } from '../../infra/constructs/asl-state-machine';
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

/** The three machines, children first, each with the children it starts with startExecution.sync:2 (a deploy phase may run a task graph). */
const MACHINES = [
  { name: 'RunNodeBatches', file: ASL_FILES.runNodeBatches, children: [] },
  { name: 'DeployGroup', file: ASL_FILES.deployGroup, children: ['RunNodeBatches', 'TaskGraph'] },
  { name: 'GroupDeployment', file: ASL_FILES.groupDeployment, children: ['DeployGroup'] },
] as const;
const stateMachineName = (name: string) => `BaremetalRollout-${name}`;
const aslOf = (file: string) => readFileSync(file, 'utf8');

/** The group-deployment functions and state machines of the stack. */
export function groupDeploymentSpecs(stack: TemplateQueries): void {
  const machine = (name: string) => stack.stateMachine(stateMachineName(name));
  const machineStatements = (name: string) => stack.statementsOf(machine(name)[1]);
  const functionProperties = (name: string) => (stack.resources[stack.functionId(name)] as Resource).Properties;
  /** The placeholders of a file that name functions, as function names. */
  const functionsOf = (file: string) => aslPlaceholders(aslOf(file)).flatMap((key) => (key.endsWith('FunctionArn') ? [key.replace(/FunctionArn$/, '')] : []));

  describe.each(MACHINES)('$name state machine', ({ name, file, children }) => {
    it('deploys its ASL file inline, under a fixed name', () => {
      expect(machine(name)[1].Properties).toMatchObject(deployedAslProperties(aslOf(file)));
    });

    it("substitutes each ${<Name>FunctionArn} with that function's ARN and ${<Child>StateMachineArn} with the child's, and nothing else", () => {
      const expected = Object.fromEntries([
        ...functionsOf(file).map((fn) => [`${fn}FunctionArn`, getAttArn(stack.functionId(fn))]),
        ...children.map((child) => [`${child}StateMachineArn`, { Ref: machine(child)[0] }]),
      ]);
      expect(Object.keys(expected).sort()).toEqual(aslPlaceholders(aslOf(file)));
      expect(machine(name)[1].Properties.DefinitionSubstitutions).toEqual(expected);
    });

    it('may invoke its own functions and no other', () => {
      const invokable = grantedOn(machineStatements(name), 'lambda:InvokeFunction');
      for (const fn of GROUP_DEPLOYMENT_FUNCTION_NAMES) {
        const arn = getAttArn(stack.functionId(fn));
        if (functionsOf(file).includes(fn)) expect(invokable).toContainEqual(arn);
        else expect(invokable).not.toContainEqual(arn);
      }
    });

    if (children.length > 0) {
      it(`may start ${children.join(' and ')}, and describe and stop their executions (startExecution.sync:2)`, () => {
        const statements = machineStatements(name);
        expect(grantedOn(statements, 'states:StartExecution')).toEqual(children.map((child) => ({ Ref: machine(child)[0] })));
        // Every execution of each child, by its fixed name (the stack is BaremetalRollout).
        const childExecutions = children.map((child) => stackArn('states', `execution:BaremetalRollout-${child}:*`));
        expect(grantedOn(statements, 'states:DescribeExecution')).toEqual(childExecutions);
        expect(grantedOn(statements, 'states:StopExecution')).toEqual(childExecutions);
      });

      it('may manage the EventBridge rule through which Step Functions learns that a child has finished', () => {
        const statements = machineStatements(name);
        for (const action of ['events:PutTargets', 'events:PutRule', 'events:DescribeRule']) {
          expect(grantedOn(statements, action)).toEqual([stackArn('events', `rule/${SYNC_EVENTS_RULE_NAME}`)]);
        }
      });
    } else {
      it('may start no execution and touch no EventBridge rule', () => {
        const statements = machineStatements(name);
        for (const action of ['states:StartExecution', 'states:StopExecution', 'events:PutRule']) expect(grantedOn(statements, action)).toEqual([]);
      });
    }

    it('outputs its ARN', () => {
      stack.template.hasOutput(`${name}StateMachineArn`, { Value: { Ref: machine(name)[0] } });
    });
  });

  describe('functions', () => {
    it('are all invoked by exactly one of the three files', () => {
      expect(MACHINES.flatMap(({ file }) => functionsOf(file)).sort()).toEqual([...GROUP_DEPLOYMENT_FUNCTION_NAMES].sort());
    });

    it.each(GROUP_DEPLOYMENT_FUNCTION_NAMES)('%s: Node 22 on arm64, traced, own log group, with the timeout of the Task that invokes it', (name) => {
      const timeout = MACHINES.map(({ file }) => taskTimeouts(aslOf(file)).get(name)).find((seconds) => seconds !== undefined);
      expect(timeout).toBeDefined();
      expect(functionProperties(name)).toMatchObject(deployedFunctionProperties(timeout, 'GroupDeploymentFunctions'));
    });

    it('each log to a log group of their own', () => {
      const logGroups = GROUP_DEPLOYMENT_FUNCTION_NAMES.map((name) =>
        JSON.stringify((functionProperties(name).LoggingConfig as { LogGroup: unknown }).LogGroup),
      );
      expect(new Set(logGroups).size).toBe(GROUP_DEPLOYMENT_FUNCTION_NAMES.length);
    });

    // Slurm's URL and token are there to read only: a batch's nodes whose Slurm reason shows another control plane's claim are left alone.
    it.each(GROUP_DEPLOYMENT_FUNCTION_NAMES)('%s: gets the table, HSM, the provisioner and Slurm (to read claims), and not the boot service', (name) => {
      const variables = (functionProperties(name).Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables).toMatchObject({
        [ENVIRONMENT.tableName]: { Ref: stack.onlyOne('AWS::DynamoDB::Table')[0] },
        [ENVIRONMENT.inventoryUrl]: { Ref: 'InventoryUrl' },
        [ENVIRONMENT.provisionerUrl]: { Ref: 'ProvisionerUrl' },
        [ENVIRONMENT.siteApiTokenSecretArn]: { Ref: 'SiteApiTokenSecretArn' },
        [ENVIRONMENT.workloadManagerUrl]: { Ref: 'WorkloadManagerUrl' },
        [ENVIRONMENT.slurmTokenSecretArn]: { Ref: 'SlurmTokenSecretArn' },
      });
      for (const unused of [ENVIRONMENT.slurmToken, ENVIRONMENT.bootServiceUrl]) {
        expect(variables).not.toHaveProperty(unused);
      }
      stack.template.hasParameter('ProvisionerUrl', { AllowedPattern: '^https://.+' });
    });
  });
}
