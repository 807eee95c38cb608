import { ENVIRONMENT } from '../../contracts';
import { getAttArn, grantedOn, type Resource, type TemplateQueries } from '../support/template-queries';

/** The REST API of the stack: API Gateway with IAM auth, proxied to the one API Lambda. */
export function restApiSpecs(stack: TemplateQueries): void {
  const apiFunction = () => stack.functionId('handler');

  it('is one REST API whose every method requires IAM auth (SigV4)', () => {
    stack.onlyOne('AWS::ApiGateway::RestApi');
    const methods = stack.ofType('AWS::ApiGateway::Method').map(([, r]) => r.Properties);
    // The routes' verbs on the root and on {proxy+}: every path reaches the router, which answers 404 and 405 itself.
    expect(methods).toHaveLength(8);
    for (const method of methods) expect(method.AuthorizationType).toBe('AWS_IAM');
    stack.template.hasResourceProperties('AWS::ApiGateway::Resource', { PathPart: '{proxy+}' });
  });

  it('proxies every method to the API Lambda, which API Gateway may invoke', () => {
    for (const [, method] of stack.ofType('AWS::ApiGateway::Method')) {
      const integration = method.Properties.Integration as { Type: string; IntegrationHttpMethod: string; Uri: unknown };
      expect(integration.Type).toBe('AWS_PROXY');
      expect(integration.IntegrationHttpMethod).toBe('POST');
      expect(JSON.stringify(integration.Uri)).toContain(JSON.stringify(getAttArn(apiFunction())));
    }
    const permissions = stack
      .ofType('AWS::Lambda::Permission')
      .filter(([, p]) => JSON.stringify(p.Properties.FunctionName) === JSON.stringify(getAttArn(apiFunction())));
    expect(permissions.length).toBeGreaterThan(0);
    for (const [, permission] of permissions) expect(permission.Properties.Principal).toBe('apigateway.amazonaws.com');
  });

  it('runs the API entry on Node 22 with the table, the workflows it starts and the site services it checks requests against', () => {
    const fn = stack.resources[apiFunction()] as Resource;
    const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const [tableId] = stack.onlyOne('AWS::DynamoDB::Table');
    const [rollingUpgradeId] = stack.stateMachine('BaremetalRollout-RollingUpgrade');
    const [groupDeploymentId] = stack.stateMachine('BaremetalRollout-GroupDeployment');
    expect(fn.Properties.Runtime).toBe('nodejs22.x');
    expect(variables[ENVIRONMENT.tableName]).toEqual({ Ref: tableId });
    expect(variables[ENVIRONMENT.rollingUpgradeStateMachineArn]).toEqual({ Ref: rollingUpgradeId });
    expect(variables[ENVIRONMENT.groupDeploymentStateMachineArn]).toEqual({ Ref: groupDeploymentId });
    // The boot service and the inventory: the API checks a request's template, nodes and groups before it answers.
    expect(variables[ENVIRONMENT.bootServiceUrl]).toEqual({ Ref: 'BootServiceUrl' });
    expect(variables[ENVIRONMENT.inventoryUrl]).toEqual({ Ref: 'InventoryUrl' });

    const statements = stack.statementsOf(fn);
    const [environmentUpgradeId] = stack.stateMachine('BaremetalRollout-EnvironmentUpgrade');
    const [taskGraphId] = stack.stateMachine('BaremetalRollout-TaskGraph');
    // Upgrades, deployments and task runs are started and resumed through it (a resume is a new execution), environment upgrades started.
    const started = grantedOn(statements, 'states:StartExecution');
    expect(started).toHaveLength(4);
    expect(started).toEqual(
      expect.arrayContaining([{ Ref: groupDeploymentId }, { Ref: rollingUpgradeId }, { Ref: taskGraphId }, { Ref: environmentUpgradeId }]),
    );
    // A cancel wakes a rolling upgrade parked for its operator.
    expect(grantedOn(statements, 'states:SendTaskSuccess')).toEqual([{ Ref: rollingUpgradeId }]);
    // Stop, cancel and the gate say whether an execution picks the request up: the workflows' running executions and their inputs; it aborts none.
    expect(variables[ENVIRONMENT.taskGraphStateMachineArn]).toEqual({ Ref: taskGraphId });
    expect(grantedOn(statements, 'states:ListExecutions')).toEqual(
      expect.arrayContaining([{ Ref: rollingUpgradeId }, { Ref: groupDeploymentId }, { Ref: taskGraphId }]),
    );
    expect(grantedOn(statements, 'states:ListExecutions')).toHaveLength(3);
    expect(grantedOn(statements, 'states:DescribeExecution')).toHaveLength(3);
    expect(grantedOn(statements, 'states:StopExecution')).toEqual([]);
    expect(grantedOn(statements, 'dynamodb:PutItem')).toContainEqual(getAttArn(tableId));
  });

  it('outputs the API URL', () => {
    const [apiId] = stack.onlyOne('AWS::ApiGateway::RestApi');
    expect(JSON.stringify((stack.template.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs['ApiUrl']?.Value)).toContain(apiId);
  });
}
