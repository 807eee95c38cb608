import { Template } from 'aws-cdk-lib/assertions';
import { parseSiteProfile, type SiteProfileInput } from '../../core/site/site-profile';
import { ENVIRONMENT } from '../../contracts';
import { RolloutStack } from '../../infra/rollout-stack';
import { testApp } from '../support/synth-stack';
import { grantedOn, type Statement } from '../support/template-queries';

const SLURM_SECRET = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:slurm-jwt-AbCdEf';
const PROFILE: SiteProfileInput = {
  workloadManager: { type: 'scontrol' },
  bootService: { type: 'bos', url: 'https://api-gw/apis/bos', token: { secretArn: SLURM_SECRET } },
  inventory: { type: 'hsm', url: 'https://api-gw/apis/smd' },
  transport: { type: 'ssm', instanceIds: ['i-0123456789abcdef0'], region: 'us-east-1' },
};

describe('RolloutStack with a site profile', () => {
  const template = Template.fromStack(new RolloutStack(testApp(), 'WithProfile', { siteProfile: parseSiteProfile(PROFILE) }));
  const allFunctions = Object.values(template.findResources('AWS::Lambda::Function')) as {
    Properties: { Handler: string; Environment: { Variables: Record<string, unknown> } };
  }[];
  // The workflow functions and the API Lambda (index.handler), which checks requests against the boot service and the inventory.
  const functions = allFunctions;
  const statements = JSON.stringify(template.findResources('AWS::IAM::Policy'));

  it('passes the profile, secrets still ARNs, to every function (the API Lambda included) instead of site parameters', () => {
    expect(functions.some((fn) => fn.Properties.Handler === 'index.handler')).toBe(true);
    expect(Object.keys(template.findParameters('*')).filter((p) => /Url|Secret|Slurm/.test(p))).toEqual([]);
    for (const fn of functions) {
      const variables = fn.Properties.Environment.Variables;
      expect(JSON.parse(variables[ENVIRONMENT.siteProfile] as string)).toMatchObject({ bootService: { token: { secretArn: SLURM_SECRET } } });
      expect(variables).not.toHaveProperty(ENVIRONMENT.slurmToken);
    }
  });

  it('lets the functions read just that secret and run commands on just those instances', () => {
    expect(statements).toContain('"Action":"secretsmanager:GetSecretValue","Effect":"Allow","Resource":"' + SLURM_SECRET + '"');
    expect(statements).toContain('"Action":"ssm:SendCommand"');
    expect(statements).toContain('document/AWS-RunShellScript');
    expect(statements).toContain('instance/i-0123456789abcdef0');
    expect(statements).toContain('"ssm:GetCommandInvocation"');
    expect(statements).toContain('"ssm:ListCommandInvocations"');
  });

  it('refuses what a Lambda cannot use, naming each field and why', () => {
    const local = parseSiteProfile({
      ...PROFILE,
      transport: { type: 'local' },
      bootService: { type: 'bos', url: 'https://b', token: { env: 'T' } },
      inventory: { type: 'file', path: 'inventory.yaml' },
    });
    expect(() => new RolloutStack(testApp(), 'Bad', { siteProfile: local })).toThrow(
      'Invalid site profile for the stack: bootService.token: a deployed stack reads tokens from Secrets Manager: give {secretArn: ARN}; inventory.type: a file inventory is not available to the deployed functions; transport: the deployed functions have no local cluster commands: use {type: ssm, ...}',
    );
    const localReboot = parseSiteProfile({ ...PROFILE, bootService: { type: 'slurm-reboot', transport: { type: 'local' } } });
    expect(() => new RolloutStack(testApp(), 'LocalReboot', { siteProfile: localReboot })).toThrow(
      'Invalid site profile for the stack: bootService.transport: the deployed functions have no local cluster commands: use {type: ssm, ...}',
    );
  });
});

describe('RolloutStack with a plain Slurm site: scontrol, slurm-reboot, slurm inventory and the command provisioner over SSM', () => {
  const HEAD_NODES = ['i-0123456789abcdef0', 'mi-0123456789abcdef1'];
  const commandSite = parseSiteProfile({
    transport: { type: 'ssm', instanceIds: HEAD_NODES, region: 'eu-west-1' },
    workloadManager: { type: 'scontrol' },
    bootService: { type: 'slurm-reboot', prepareCommand: 'wwctl node set --yes --image {template} {nodes}' },
    inventory: { type: 'slurm' },
    provisioner: { type: 'command', commands: { prepare: 'provision prepare {nodes}', deploy: 'provision deploy {nodes}' } },
  });
  // Their sessions and actions live in the table, so the stack now takes them.
  const template = Template.fromStack(new RolloutStack(testApp(), 'CommandSite', { siteProfile: commandSite }));
  const policies = Object.values(template.findResources('AWS::IAM::Policy')) as { Properties: { PolicyDocument: { Statement: Statement[] } } }[];
  const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement);
  const ssmActions = new Set(statements.flatMap((s) => [s.Action].flat()).filter((a) => a.startsWith('ssm:')));

  it("passes the profile to every workflow function (the REST API's function reaches no site)", () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function')) as {
      Properties: { Handler: string; Environment: { Variables: Record<string, string> } };
    }[];
    for (const fn of functions.filter((f) => f.Properties.Handler !== 'index.handler')) {
      expect(JSON.parse(fn.Properties.Environment.Variables[ENVIRONMENT.siteProfile]!)).toMatchObject({
        bootService: { type: 'slurm-reboot' },
        provisioner: { type: 'command' },
      });
    }
  });

  it('grants exactly SendCommand on AWS-RunShellScript and the named head nodes, and Get/ListCommandInvocations', () => {
    expect([...ssmActions].sort()).toEqual(['ssm:GetCommandInvocation', 'ssm:ListCommandInvocations', 'ssm:SendCommand']);
    const sendOn = grantedOn(statements, 'ssm:SendCommand').map((r) => JSON.stringify(r));
    expect(sendOn.join('\n')).toMatch(/ssm:eu-west-1::document\/AWS-RunShellScript/);
    expect(sendOn.join('\n')).toMatch(/ec2:eu-west-1:.*:instance\/i-0123456789abcdef0/);
    expect(sendOn.join('\n')).toMatch(/ssm:eu-west-1:.*:managed-instance\/mi-0123456789abcdef1/);
    // Every function's role names the same three: the document and the two head nodes, nothing else.
    expect(new Set(sendOn).size).toBe(3);
    expect(grantedOn(statements, 'ssm:GetCommandInvocation')).toEqual(expect.arrayContaining(['*']));
    expect(grantedOn(statements, 'ssm:ListCommandInvocations')).toEqual(expect.arrayContaining(['*']));
    expect(statements.some((s) => [s.Action].flat().includes('secretsmanager:GetSecretValue'))).toBe(false);
  });

  it('lets every function write its records to the table with single-item conditional writes', () => {
    const tableId = Object.keys(template.findResources('AWS::DynamoDB::Table'))[0]!;
    for (const action of ['dynamodb:GetItem', 'dynamodb:PutItem']) {
      expect(grantedOn(statements, action)).toContainEqual({ 'Fn::GetAtt': [tableId, 'Arn'] });
    }
  });
});

describe('RolloutStack with a site profile: each function reads the secrets and commands the instances of the services it calls, no others', () => {
  const secret = (name: string) => `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${name}-AbCdEf`;
  const tasksHost = 'i-0fedcba9876543210';
  const profile = parseSiteProfile({
    workloadManager: { type: 'slurmrestd', url: 'https://slurm:6820', token: { secretArn: secret('slurm') } },
    bootService: { type: 'bos', url: 'https://api-gw/apis/bos', token: { secretArn: secret('bos') } },
    inventory: { type: 'hsm', url: 'https://api-gw/apis/smd', token: { secretArn: secret('hsm') } },
    provisioner: { type: 'http', url: 'https://provisioner', token: { secretArn: secret('provisioner') } },
    tasks: { transport: { type: 'ssm', instanceIds: [tasksHost], region: 'eu-west-1' } },
  });
  const template = Template.fromStack(new RolloutStack(testApp(), 'PerFunction', { siteProfile: profile }));
  const resources = (template.toJSON() as { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> }).Resources;
  const grants = (handler: string) => {
    const [, fn] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties['Handler'] === handler)!;
    const role = (fn.Properties['Role'] as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    const statements = Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties['Roles']).includes(`"${role}"`))
      .flatMap((r) => (r.Properties['PolicyDocument'] as { Statement: Statement[] }).Statement);
    const secrets = grantedOn(statements, 'secretsmanager:GetSecretValue').map((arn) => String(arn).replace(/^.*secret:(\w+)-AbCdEf$/, '$1'));
    return { secrets: secrets.sort(), commands: grantedOn(statements, 'ssm:SendCommand').some((r) => JSON.stringify(r).includes(tasksHost)) };
  };

  it.each([
    ['index.AwaitOperator', [], false],
    ['index.OpenSession', ['bos', 'hsm'], false],
    ['index.StartStep', ['bos', 'hsm', 'slurm'], true],
    ['index.PickReadyGroups', [], false],
    ['index.StartDeployment', ['hsm'], false],
    ['index.StartBatch', ['provisioner', 'slurm'], false],
    ['index.AdvanceTaskRun', ['bos', 'hsm', 'slurm'], true],
    ['index.CloneSeed', [], false],
    ['index.OpenEnvironmentUpgrade', ['bos', 'hsm'], false],
    ['index.handler', ['bos', 'hsm'], false],
  ] as const)('%s reads %j, commands the tasks host: %s', (handler, secrets, commands) => {
    expect(grants(handler)).toEqual({ secrets: [...secrets], commands });
  });

  it("counts slurm-reboot's own use of the inventory (a boot limit's group) and of its transport", () => {
    const rebootSite = parseSiteProfile({
      transport: { type: 'ssm', instanceIds: [tasksHost], region: 'eu-west-1' },
      workloadManager: { type: 'scontrol' },
      bootService: { type: 'slurm-reboot' },
      inventory: { type: 'hsm', url: 'https://api-gw/apis/smd', token: { secretArn: secret('hsm') } },
    });
    const rebootTemplate = Template.fromStack(new RolloutStack(testApp(), 'RebootSite', { siteProfile: rebootSite })).toJSON() as {
      Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    };
    const [, open] = Object.entries(rebootTemplate.Resources).find(
      ([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties['Handler'] === 'index.OpenSession',
    )!;
    const role = (open.Properties['Role'] as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    const text = JSON.stringify(
      Object.values(rebootTemplate.Resources).filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties['Roles']).includes(`"${role}"`)),
    );
    expect(text).toContain(secret('hsm'));
    expect(text).toContain(`instance/${tasksHost}`);
  });
});
