import { Template } from 'aws-cdk-lib/assertions';
import { parseSiteProfile, type SiteProfileInput } from '../../core/site/site-profile';
import { ENVIRONMENT } from '../../contracts';
import { RolloutStack } from '../../infra/rollout-stack';
import { testApp } from '../support/synth-stack';

const SLURM_SECRET = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:slurm-jwt-AbCdEf';
const PROFILE: SiteProfileInput = {
  workloadManager: { type: 'scontrol' },
  bootService: { type: 'bos', url: 'https://api-gw/apis/bos', token: { secretArn: SLURM_SECRET } },
  inventory: { type: 'hsm', url: 'https://api-gw/apis/smd' },
  transport: { type: 'ssm', instanceIds: ['i-0123456789abcdef0'], region: 'us-east-1' },
};

describe('RolloutStack with a site profile', () => {
  const template = Template.fromStack(new RolloutStack(testApp(), 'WithProfile', { siteProfile: parseSiteProfile(PROFILE) }));
  const allFunctions = Object.values(template.findResources('AWS::Lambda::Function')) as { Properties: { Handler: string; Environment: { Variables: Record<string, unknown> } } }[];
  // The workflow functions; the API Lambda (index.handler) never talks to the site.
  const functions = allFunctions.filter((fn) => fn.Properties.Handler !== 'index.handler');
  const statements = JSON.stringify(template.findResources('AWS::IAM::Policy'));

  it('passes the profile, secrets still ARNs, to every workflow function instead of site parameters, and not to the API', () => {
    expect(allFunctions.find((fn) => fn.Properties.Handler === 'index.handler')?.Properties.Environment.Variables).not.toHaveProperty(ENVIRONMENT.siteProfile);
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
    expect(statements).toContain('"ssm:GetCommandInvocation","ssm:ListCommandInvocations"');
  });

  it('refuses what a Lambda cannot use, naming each field', () => {
    const local = parseSiteProfile({ ...PROFILE, transport: { type: 'local' }, bootService: { type: 'bos', url: 'https://b', token: { env: 'T' } } });
    expect(() => new RolloutStack(testApp(), 'Bad', { siteProfile: local })).toThrow(
      'Invalid site profile for the stack: bootService.token: a deployed stack reads tokens from Secrets Manager: give {secretArn: ARN}; transport: the deployed functions have no local cluster commands: use {type: ssm, ...}',
    );
    const inMemory = parseSiteProfile({
      ...PROFILE,
      bootService: { type: 'slurm-reboot', prepareCommand: 'wwctl node set --image {template} {nodes}' },
      provisioner: { type: 'command', commands: { prepare: 'provision prepare {nodes}', deploy: 'provision deploy {nodes}' } },
    });
    expect(() => new RolloutStack(testApp(), 'InMemory', { siteProfile: inMemory })).toThrow(
      "Invalid site profile for the stack: bootService.type: 'slurm-reboot' keeps its sessions in process memory and is not yet available to the deployed functions; provisioner.type: 'command' keeps its sessions in process memory and is not yet available to the deployed functions",
    );
  });
});
