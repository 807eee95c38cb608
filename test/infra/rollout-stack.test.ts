import { Match, Template } from 'aws-cdk-lib/assertions';
import { AccountPrincipal } from 'aws-cdk-lib/aws-iam';
import { createTableInput, TTL_ATTRIBUTE } from '../../adapters/dynamodb/table-design';
import {
  ENVIRONMENT,
  ENVIRONMENT_UPGRADE_FUNCTION_NAMES,
  GROUP_DEPLOYMENT_FUNCTION_NAMES,
  ROLLING_UPGRADE_FUNCTION_NAMES,
  TASK_GRAPH_FUNCTION_NAMES,
} from '../../contracts';
import { environmentUpgradeSpecs } from './environment-upgrade.specs';
import { groupDeploymentSpecs } from './group-deployment.specs';
import { restApiSpecs } from './rest-api.specs';
import { rollingUpgradeSpecs } from './rolling-upgrade.specs';
import { taskGraphSpecs } from './task-graph.specs';
import { tableGrantSpecs } from './table-grants.specs';
import { leastPrivilegeSpecs } from './least-privilege.specs';
import { siteRelaySpecs } from './site-relay.specs';
import { siteRelayPrincipalFrom } from '../../infra/constructs/rollout-api';
import { RolloutStack } from '../../infra/rollout-stack';
import { synthRolloutStack, testApp } from '../support/synth-stack';
import { TemplateQueries } from '../support/template-queries';

const tableDesign = createTableInput('unused');
const ALL_FUNCTION_NAMES = [
  ...ROLLING_UPGRADE_FUNCTION_NAMES,
  ...GROUP_DEPLOYMENT_FUNCTION_NAMES,
  ...TASK_GRAPH_FUNCTION_NAMES,
  ...ENVIRONMENT_UPGRADE_FUNCTION_NAMES,
];

// One synthesis for every spec below, the workflow specs included.
const stack = new TemplateQueries(synthRolloutStack);
beforeAll(() => stack.template);

describe('RolloutStack', () => {
  describe('sessions table', () => {
    it('has the keys, the sessions index and the TTL attribute of table-design.ts', () => {
      stack.template.hasResourceProperties('AWS::DynamoDB::Table', {
        KeySchema: tableDesign.KeySchema,
        AttributeDefinitions: Match.arrayEquals(tableDesign.AttributeDefinitions ?? []),
        GlobalSecondaryIndexes: tableDesign.GlobalSecondaryIndexes,
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
    });

    it('is retained when the stack goes', () => {
      expect(stack.onlyOne('AWS::DynamoDB::Table')[1].DeletionPolicy).toBe('Retain');
    });

    it('outputs its name', () => {
      stack.template.hasOutput('SessionsTableName', { Value: { Ref: stack.onlyOne('AWS::DynamoDB::Table')[0] } });
    });
  });

  it('deploys exactly one Lambda per function of every workflow, each running its own export, and the API Lambda', () => {
    const handlers = stack.ofType('AWS::Lambda::Function').map(([, r]) => r.Properties.Handler);
    expect(handlers.sort()).toEqual([...ALL_FUNCTION_NAMES.map((name) => `index.${name}`), 'index.handler'].sort());
  });

  describe('site API token', () => {
    it('is optional: an empty SiteApiTokenSecretArn means no token, any other value must be a secret ARN', () => {
      stack.template.hasParameter('SiteApiTokenSecretArn', { Default: '', AllowedPattern: Match.stringLikeRegexp('^\\^\\(arn:') });
      stack.template.hasCondition('HasSiteApiToken', { 'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'SiteApiTokenSecretArn' }, ''] }] });
    });

    it.each(ALL_FUNCTION_NAMES)('%s: gets the ARN of its secret (empty: none), never the token', (name) => {
      const variables = (stack.resources[stack.functionId(name)]?.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables[ENVIRONMENT.siteApiTokenSecretArn]).toEqual({ Ref: 'SiteApiTokenSecretArn' });
      expect(variables).not.toHaveProperty(ENVIRONMENT.siteApiToken);
    });
  });

  it('takes https:// site URLs only (tokens travel to them), and tells no function that http is allowed', () => {
    for (const name of ['WorkloadManagerUrl', 'BootServiceUrl', 'InventoryUrl', 'ProvisionerUrl'])
      stack.template.hasParameter(name, { AllowedPattern: '^https://.+' });
    for (const name of ALL_FUNCTION_NAMES)
      expect(stack.resources[stack.functionId(name)]?.Properties.Environment).not.toHaveProperty(`Variables.${ENVIRONMENT.allowInsecureHttp}`);
  });

  it('resolves no secret at deploy time: the functions read them at cold start', () => {
    expect(JSON.stringify(stack.template.toJSON())).not.toContain('{{resolve:secretsmanager');
  });

  describe('rolling upgrade', () => rollingUpgradeSpecs(stack));
  describe('group deployment', () => groupDeploymentSpecs(stack));
  describe('task graph', () => taskGraphSpecs(stack));
  describe('REST API', () => restApiSpecs(stack));
  describe('table grants', () => tableGrantSpecs(stack));
  describe('least privilege', () => leastPrivilegeSpecs(stack));
  describe('environment upgrade', () => environmentUpgradeSpecs(stack));
  describe('site relay', () => siteRelaySpecs(stack));
});

describe('a lab stack (allowInsecureHttp)', () => {
  it('takes http:// URL parameters, and tells the functions so', () => {
    const lab = new TemplateQueries(() => Template.fromStack(new RolloutStack(testApp(), 'Lab', { allowInsecureHttp: true })));
    for (const name of ['WorkloadManagerUrl', 'BootServiceUrl', 'InventoryUrl', 'ProvisionerUrl'])
      lab.template.hasParameter(name, { AllowedPattern: '^https?://.+' });
    for (const name of ALL_FUNCTION_NAMES)
      expect(lab.resources[lab.functionId(name)]?.Properties.Environment).toHaveProperty(`Variables.${ENVIRONMENT.allowInsecureHttp}`, 'true');
  });
});

describe('the site relay principal (-c siteRelayPrincipal, or the prop)', () => {
  const trustOf = (template: Template) => {
    const roles = Object.entries(template.findResources('AWS::IAM::Role')).filter(([id]) => id.includes('SiteRelayRole'));
    expect(roles).toHaveLength(1);
    return (roles[0]![1] as { Properties: { AssumeRolePolicyDocument: { Statement: { Principal: unknown }[] } } }).Properties.AssumeRolePolicyDocument
      .Statement;
  };

  it("an IAM ARN (the slurmctld host's role) is the one principal SiteRelayRole trusts", () => {
    const head = 'arn:aws:iam::123456789012:role/slurmctld-head';
    const template = Template.fromStack(new RolloutStack(testApp(), 'Relay', { siteRelayPrincipal: siteRelayPrincipalFrom(head) }));
    expect(trustOf(template)).toEqual([{ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: head } }]);
  });

  it('an account id is that account; anything else is refused naming siteRelayPrincipal', () => {
    const account = siteRelayPrincipalFrom('210987654321');
    expect(account).toBeInstanceOf(AccountPrincipal);
    expect((account as AccountPrincipal).accountId).toBe('210987654321');
    for (const bad of ['head-node', '1234', 'arn:aws:s3:::bucket', 'arn:aws:iam::12345:role/x'])
      expect(() => siteRelayPrincipalFrom(bad)).toThrow(
        new RegExp(`siteRelayPrincipal: must be an account id .* got '${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'`),
      );
  });
});
