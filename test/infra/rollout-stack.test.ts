import { readFileSync } from 'node:fs';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { createTableInput, TTL_ATTRIBUTE } from '../../lambdas/adapters/dynamodb/table-design';
import { ENVIRONMENT } from '../../lambdas/entrypoints/environment';
import { ROLLING_UPGRADE_FUNCTION_NAMES } from '../../lambdas/handlers/rolling-upgrade/handlers';
import { WORKFLOW_FILES } from '../../engine/workflow-files';
import { aslPlaceholders } from '../../infra/asl-substitutions';
import { synthRolloutStack } from './synth-stack';

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
}
interface Statement {
  Action: string | string[];
  Resource: unknown;
}

const asl = readFileSync(WORKFLOW_FILES.rollingUpgrade, 'utf8');
const tableDesign = createTableInput('unused');
const STATE_MACHINE_NAME = 'BaremetalRollout-RollingUpgrade';

let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  template = synthRolloutStack();
  resources = (template.toJSON() as { Resources: Record<string, Resource> }).Resources;
});

const ofType = (type: string): [string, Resource][] => Object.entries(resources).filter(([, r]) => r.Type === type);
const onlyOne = (type: string): [string, Resource] => {
  const found = ofType(type);
  expect(found).toHaveLength(1);
  return found[0] as [string, Resource];
};
const stateMachine = () => onlyOne('AWS::StepFunctions::StateMachine');
/** The logical id of the one Lambda that runs the named export of the rolling-upgrade bundle. */
const functionId = (name: string): string => {
  const found = ofType('AWS::Lambda::Function').filter(([, r]) => r.Properties.Handler === `index.${name}`);
  expect(found).toHaveLength(1);
  return (found[0] as [string, Resource])[0];
};
const getAttArn = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });
/** Every statement of the policies attached to the role a resource runs as (`Role` or `RoleArn`: GetAtt of the role). */
const statementsOf = (resource: Resource): Statement[] => {
  const roleArn = (resource.Properties.Role ?? resource.Properties.RoleArn) as { 'Fn::GetAtt': [string, string] };
  const roleId = roleArn['Fn::GetAtt'][0];
  return ofType('AWS::IAM::Policy')
    .filter(([, p]) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
};
const grantedOn = (statements: Statement[], action: string): unknown[] =>
  statements.filter((s) => [s.Action].flat().includes(action)).flatMap((s) => [s.Resource].flat());
/** TimeoutSeconds of the Task that invokes each function, read from the ASL. */
const taskTimeouts = (): Map<string, number> => {
  const states = Object.values((JSON.parse(asl) as { States: Record<string, Record<string, unknown>> }).States);
  return new Map(
    states.flatMap((state) => {
      const functionName = (state.Parameters as Record<string, unknown> | undefined)?.FunctionName;
      const match = typeof functionName === 'string' ? functionName.match(/^\$\{(\w+)FunctionArn\}$/) : null;
      return match ? [[match[1] as string, state.TimeoutSeconds as number] as const] : [];
    }),
  );
};

describe('RolloutStack', () => {
  describe('sessions table', () => {
    it('has the keys, the sessions index and the TTL attribute of table-design.ts', () => {
      template.hasResourceProperties('AWS::DynamoDB::Table', {
        KeySchema: tableDesign.KeySchema,
        AttributeDefinitions: Match.arrayEquals(tableDesign.AttributeDefinitions ?? []),
        GlobalSecondaryIndexes: tableDesign.GlobalSecondaryIndexes,
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
    });

    it('is retained when the stack goes', () => {
      expect(onlyOne('AWS::DynamoDB::Table')[1].DeletionPolicy).toBe('Retain');
    });
  });

  describe('functions', () => {
    it('deploys exactly one Lambda per rolling-upgrade function, each running its own export', () => {
      const handlers = ofType('AWS::Lambda::Function').map(([, r]) => r.Properties.Handler);
      expect(handlers.sort()).toEqual(ROLLING_UPGRADE_FUNCTION_NAMES.map((name) => `index.${name}`).sort());
    });

    it.each(ROLLING_UPGRADE_FUNCTION_NAMES)('%s: Node 22 on arm64, traced, with the timeout of the Task that invokes it', (name) => {
      const timeout = taskTimeouts().get(name);
      expect(timeout).toBeDefined();
      expect(resources[functionId(name)]?.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        MemorySize: 512,
        Timeout: timeout,
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogGroup: { Ref: expect.any(String) } },
      });
    });

    it('gives every function the table name and the site connection', () => {
      template.allResourcesProperties('AWS::Lambda::Function', {
        Environment: {
          Variables: Match.objectLike({
            [ENVIRONMENT.tableName]: { Ref: onlyOne('AWS::DynamoDB::Table')[0] },
            [ENVIRONMENT.workloadManagerUrl]: { Ref: 'WorkloadManagerUrl' },
            [ENVIRONMENT.slurmApiVersion]: { Ref: 'SlurmApiVersion' },
            [ENVIRONMENT.slurmUserName]: { Ref: 'SlurmUserName' },
            [ENVIRONMENT.slurmToken]: Match.anyValue(),
            [ENVIRONMENT.bootServiceUrl]: { Ref: 'BootServiceUrl' },
            [ENVIRONMENT.inventoryUrl]: { Ref: 'InventoryUrl' },
          }),
        },
      });
      template.hasParameter('SlurmApiVersion', { Default: 'v0.0.41' });
    });

    it('passes the Slurm JWT as a dynamic reference to the secret, never as a value in the template', () => {
      for (const [, fn] of ofType('AWS::Lambda::Function')) {
        const token = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables[ENVIRONMENT.slurmToken];
        expect(token).toEqual({
          'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: 'SlurmTokenSecretArn' }, ':SecretString:::}}']],
        });
      }
    });

    it.each(ROLLING_UPGRADE_FUNCTION_NAMES)('%s: may read and write the table and its index', (name) => {
      const statements = statementsOf(resources[functionId(name)] as Resource);
      const tableArn = getAttArn(onlyOne('AWS::DynamoDB::Table')[0]);
      for (const action of ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']) {
        expect(grantedOn(statements, action)).toContainEqual(tableArn);
      }
      expect(grantedOn(statements, 'dynamodb:Query')).toContainEqual({ 'Fn::Join': ['', [tableArn, '/index/*']] });
    });
  });

  describe('rolling-upgrade state machine', () => {
    it('deploys the very ASL file the embedded engine runs, inline', () => {
      expect(stateMachine()[1].Properties).toMatchObject({
        DefinitionString: asl,
        StateMachineName: STATE_MACHINE_NAME,
        StateMachineType: 'STANDARD',
        TracingConfiguration: { Enabled: true },
        LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
      });
    });

    it("substitutes each ${<Name>FunctionArn} with that function's ARN, and nothing else", () => {
      const placeholders = aslPlaceholders(asl);
      expect(placeholders).toEqual(ROLLING_UPGRADE_FUNCTION_NAMES.map((name) => `${name}FunctionArn`).sort());
      template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
        DefinitionSubstitutions: Match.exact(
          Object.fromEntries(placeholders.map((key) => [key, getAttArn(functionId(key.replace(/FunctionArn$/, '')))])),
        ),
      });
    });

    it('may invoke every function', () => {
      const invokable = grantedOn(statementsOf(stateMachine()[1]), 'lambda:InvokeFunction');
      for (const name of ROLLING_UPGRADE_FUNCTION_NAMES) expect(invokable).toContainEqual(getAttArn(functionId(name)));
    });

    it('may start executions of itself (continue-as-new), by an ARN built from its fixed name', () => {
      const startable = grantedOn(statementsOf(stateMachine()[1]), 'states:StartExecution');
      expect(startable).toEqual([
        {
          'Fn::Join': [
            '',
            ['arn:', { Ref: 'AWS::Partition' }, ':states:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:stateMachine:${STATE_MACHINE_NAME}`],
          ],
        },
      ]);
    });

    it('outputs its ARN and the table name', () => {
      template.hasOutput('RollingUpgradeStateMachineArn', { Value: { Ref: stateMachine()[0] } });
      template.hasOutput('SessionsTableName', { Value: { Ref: onlyOne('AWS::DynamoDB::Table')[0] } });
    });
  });
});
