import { SITE_SERVICES, type FunctionName } from '../../contracts';
import { grantedOn, type Resource, type Statement, type TemplateQueries } from '../support/template-queries';

/**
 * Least privilege, deployed (the stack without a profile: its site as parameters): each function may read only the
 * secrets of the site services it calls (contracts/site-access.ts); the REST API authorises read and change apart
 * (each verb its own IAM-authorised method, a managed policy for each) and is throttled; the table cannot be deleted
 * while its deletion protection is on.
 */
export function leastPrivilegeSpecs(stack: TemplateQueries): void {
  const functionOf = (name: string) => stack.resources[stack.functionId(name === 'Api' ? 'handler' : name)] as Resource;
  const roleOf = (name: string) => (functionOf(name).Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  /** The site API token's conditional policy and the roles it is attached to. */
  const siteTokenPolicy = () =>
    stack.ofType('AWS::IAM::Policy').filter(([, policy]) => (policy as Resource & { Condition?: string }).Condition === 'HasSiteApiToken');

  describe('secrets', () => {
    it.each(Object.keys(SITE_SERVICES))('%s: may read the secrets of the services it calls, and no other', (name) => {
      const services = SITE_SERVICES[name as FunctionName | 'Api'];
      const secrets = grantedOn(stack.statementsOf(functionOf(name)), 'secretsmanager:GetSecretValue');
      expect(secrets).toEqual(services.includes('workloadManager') ? [{ Ref: 'SlurmTokenSecretArn' }] : []);
      const [[, policy]] = siteTokenPolicy() as [[string, Resource]];
      const readsSiteToken = (policy.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleOf(name));
      expect(readsSiteToken).toBe(services.some((service) => ['bootService', 'inventory', 'provisioner'].includes(service)));
    });

    it('grants the site API token only when the parameter names one (a policy of its own, under HasSiteApiToken)', () => {
      const policies = siteTokenPolicy();
      expect(policies).toHaveLength(1);
      const statements = (policies[0]![1].Properties.PolicyDocument as { Statement: Statement[] }).Statement;
      expect(statements).toEqual([expect.objectContaining({ Action: 'secretsmanager:GetSecretValue', Resource: { Ref: 'SiteApiTokenSecretArn' } })]);
    });

    it('leaves most functions without the Slurm JWT: only those that call the workload manager read it', () => {
      const readers = Object.keys(SITE_SERVICES).filter((name) => grantedOn(stack.statementsOf(functionOf(name)), 'secretsmanager:GetSecretValue').length > 0);
      expect(readers.sort()).toEqual(
        Object.keys(SITE_SERVICES)
          .filter((name) => SITE_SERVICES[name as FunctionName].includes('workloadManager'))
          .sort(),
      );
      expect(readers).not.toContain('Api');
      expect(readers).not.toContain('AwaitOperator');
      expect(readers.length).toBeLessThan(Object.keys(SITE_SERVICES).length / 2);
    });
  });

  describe('REST API access', () => {
    const methods = () => stack.ofType('AWS::ApiGateway::Method').map(([, method]) => method.Properties);

    it('is each verb the routes use as its own IAM-authorised method, on the root and on every path', () => {
      const verbs = methods().map((method) => method.HttpMethod as string);
      expect(verbs.sort()).toEqual(['DELETE', 'DELETE', 'GET', 'GET', 'HEAD', 'HEAD', 'POST', 'POST']);
      for (const method of methods()) expect(method.AuthorizationType).toBe('AWS_IAM');
    });

    it('has a read access policy (GET, HEAD) and a change access policy (POST, DELETE), output for operators to attach', () => {
      const [apiId] = stack.onlyOne('AWS::ApiGateway::RestApi');
      const managed = stack
        .ofType('AWS::IAM::ManagedPolicy')
        .map(([id, policy]) => ({ id, statements: (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement }));
      const verbsOf = (statements: Statement[]) => {
        expect(statements.map((statement) => statement.Action)).toEqual(['execute-api:Invoke']);
        return [statements[0]!.Resource].flat().map((resource) => {
          const text = JSON.stringify(resource);
          expect(text).toContain(apiId);
          const [, verb, all] = /\/v1\/(GET|HEAD|POST|DELETE)\/(\*?)/.exec(text) ?? [];
          return `${verb} /${all}`;
        });
      };
      const read = managed.find((policy) => policy.id.includes('ReadAccess'))!;
      const change = managed.find((policy) => policy.id.includes('ChangeAccess'))!;
      expect(verbsOf(read.statements).sort()).toEqual(['GET /', 'GET /*', 'HEAD /', 'HEAD /*']);
      expect(verbsOf(change.statements).sort()).toEqual(['DELETE /', 'DELETE /*', 'POST /', 'POST /*']);
      const outputs = (stack.template.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;
      expect(outputs['ApiReadAccessPolicyArn']?.Value).toEqual({ Ref: read.id });
      expect(outputs['ApiChangeAccessPolicyArn']?.Value).toEqual({ Ref: change.id });
    });

    it('throttles the stage', () => {
      const [, stage] = stack.onlyOne('AWS::ApiGateway::Stage');
      expect(stage.Properties.MethodSettings).toEqual([
        expect.objectContaining({ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 25, ThrottlingBurstLimit: 50 }),
      ]);
    });
  });

  it('protects the table from deletion', () => {
    expect(stack.onlyOne('AWS::DynamoDB::Table')[1].Properties.DeletionProtectionEnabled).toBe(true);
  });
}
