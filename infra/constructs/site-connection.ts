import { Aws, CfnCondition, CfnParameter, Fn, Stack, Validations, type CfnParameterProps } from 'aws-cdk-lib';
import { Policy, PolicyStatement, type CfnPolicy, type IRole } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { ENVIRONMENT, type SiteService } from '../../contracts';
import { InvalidInputError, type FieldProblem } from '../../core/errors';
import { CSM_NID_NAME_PATTERN } from '../../core/site/node-names';
import {
  DEFAULT_SLURMRESTD_VERSION,
  SLURMRESTD_VERSIONS,
  TRANSPORT_USERS,
  type SecretReference,
  type SiteProfile,
  type TransportProfile,
} from '../../core/site/site-profile';

const SECRET_ARN = 'arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\\d{12}:secret:.+';
/** Tokens travel to every site service (Slurm's always; BOS, HSM and the provisioner's when given): https only, unless a lab allows http. */
const HTTPS_URL_PATTERN = '^https://.+';
const LAB_URL_PATTERN = '^https?://.+';
/** NodeNames: 'same', or a node-name prefix, {nid} or {nid:0N}, and a suffix (core/site/node-names.ts parses it again). */
const NODE_NAMES_PATTERN = '^(same|[A-Za-z][A-Za-z0-9._-]*\\{nid(:0[0-9])?\\}[A-Za-z0-9._-]*)$';

/**
 * The site services the functions talk to, as stack parameters, so that one synthesized template
 * deploys to any site. Each workflow's functions get only the services (and secrets) that workflow uses.
 */
export interface SiteConnectionProps {
  /** The site connection profile; without one, the site comes in as stack parameters. */
  profile?: SiteProfile;
  /** The instances the functions may command through SSM; default: those the profile's `ssm` transports name. */
  ssmTargets?: readonly SsmTarget[];
  /**
   * A lab: the URL parameters may be http://, and the functions send tokens over them. Default false:
   * CloudFormation refuses an http:// URL parameter, and the functions refuse one that would carry a token.
   * (A profile says it itself, with its `allowInsecureHttp`.)
   */
  allowInsecureHttp?: boolean;
}

/** Instances (EC2 `i-...` or managed `mi-...`) in one region that the functions may send commands to. */
export interface SsmTarget {
  region: string;
  instanceIds: readonly string[];
}

/** What a function needs of the site beyond its variables: the secrets and the SSM targets of the services it calls. */
export interface SiteAccess {
  /** Lets `role` read the secrets of `services` and command their SSM targets (contracts/site-access.ts names each function's). */
  grant(role: IRole, services: readonly SiteService[]): void;
}

/** The stack's parameters of a site without a profile: the services' URLs, the Slurm API version and user, the secrets' ARNs. */
function siteParameters(scope: Construct, allowInsecureHttp: boolean) {
  // The scope is the stack, so the parameters keep their plain logical ids (WorkloadManagerUrl, ...).
  const parameter = (name: string, props: CfnParameterProps) => new CfnParameter(scope, name, { type: 'String', ...props }).valueAsString;
  const URL_PATTERN = allowInsecureHttp ? LAB_URL_PATTERN : HTTPS_URL_PATTERN;

  const workloadManagerUrl = parameter('WorkloadManagerUrl', { description: 'Base URL of slurmrestd.', allowedPattern: URL_PATTERN });
  const slurmApiVersion = parameter('SlurmApiVersion', {
    description: `slurmrestd's data_parser version: ${SLURMRESTD_VERSIONS.join(', ')} (Slurm 22.05's v0.0.38 cannot update nodes).`,
    default: DEFAULT_SLURMRESTD_VERSION,
    allowedValues: [...SLURMRESTD_VERSIONS],
  });
  const slurmUserName = parameter('SlurmUserName', {
    description: 'Sent as X-SLURM-USER-NAME; leave empty unless the token is a SlurmUser token acting for this user.',
    default: '',
  });
  const slurmTokenSecretArn = parameter('SlurmTokenSecretArn', {
    description: 'ARN of the Secrets Manager secret whose SecretString is the Slurm JWT (sent as X-SLURM-USER-TOKEN).',
    allowedPattern: `^${SECRET_ARN}`,
  });
  const siteApiTokenSecretArn = parameter('SiteApiTokenSecretArn', {
    description: 'ARN of the Secrets Manager secret whose SecretString is sent as a Bearer token to BOS, HSM and the provisioner; empty: no token.',
    default: '',
    allowedPattern: `^(${SECRET_ARN})?$`,
  });
  // The names trip the "looks like a password" check, but the values are ARNs: NoEcho would only hide which
  // secret is used. The check reports on the stack, not the parameter, so that is where it is acknowledged.
  Validations.of(Stack.of(scope)).acknowledge({
    id: 'CloudFormation-Validate::W2509',
    reason: 'SlurmTokenSecretArn and SiteApiTokenSecretArn hold the ARN of a secret, not the secret.',
  });
  const bootServiceUrl = parameter('BootServiceUrl', { description: 'Base URL of the boot service (BOS).', allowedPattern: URL_PATTERN });
  const inventoryUrl = parameter('InventoryUrl', { description: 'Base URL of the hardware inventory (HSM).', allowedPattern: URL_PATTERN });
  const nodeNames = parameter('NodeNames', {
    description: "Slurm's node names, from HSM's NID: a pattern such as nid{nid:06} (CSM's), or 'same' where Slurm uses HSM's xnames.",
    default: CSM_NID_NAME_PATTERN,
    allowedPattern: NODE_NAMES_PATTERN,
  });
  const provisionerUrl = parameter('ProvisionerUrl', { description: 'Base URL of the provisioner (group deployments).', allowedPattern: URL_PATTERN });
  return {
    workloadManagerUrl,
    slurmApiVersion,
    slurmUserName,
    slurmTokenSecretArn,
    siteApiTokenSecretArn,
    bootServiceUrl,
    inventoryUrl,
    nodeNames,
    provisionerUrl,
  };
}

export class SiteConnection extends Construct implements SiteAccess {
  /** Slurm, BOS and HSM. */
  readonly rollingUpgradeEnvironment: Record<string, string>;
  /** HSM and the provisioner. */
  readonly groupDeploymentEnvironment: Record<string, string>;
  /** The statements a function calling these services needs (its secrets, SSM). */
  private readonly statementsFor: (services: ReadonlySet<SiteService>) => PolicyStatement[];
  /** Without a profile: the site API token's secret, whose grant exists only when the parameter names one. */
  private siteApiTokenReaders?: Policy;
  private readonly siteApiTokenGrant?: () => Policy;

  constructor(scope: Construct, id: string, props: SiteConnectionProps = {}) {
    super(scope, id);
    if (props.profile) {
      const profile = checkDeployable(props.profile, props.ssmTargets);
      // The profile travels whole; secrets stay ARNs in it, read by a function when it first calls their connector.
      const environment = { [ENVIRONMENT.siteProfile]: JSON.stringify(profile) };
      this.rollingUpgradeEnvironment = environment;
      this.groupDeploymentEnvironment = environment;
      this.statementsFor = (services) => sitePolicies(profile, services);
      return;
    }
    const site = siteParameters(scope, props.allowInsecureHttp === true);
    const insecure: Record<string, string> = props.allowInsecureHttp ? { [ENVIRONMENT.allowInsecureHttp]: 'true' } : {};

    // Only the ARNs reach the functions; each reads a secret when it first calls its connector, through Powertools
    // parameters (lambdas/entrypoints/environment.ts), so a token is in no template, environment or execution input,
    // and a rotated token reaches warm containers without a deploy. Each function may read only the secrets of the
    // services it calls: the Slurm JWT for the workload manager, the site API token for BOS, HSM and the provisioner.
    // The latter's grant is a policy of its own that exists only when the parameter names a secret.
    const hasSiteApiToken = new CfnCondition(scope, 'HasSiteApiToken', { expression: Fn.conditionNot(Fn.conditionEquals(site.siteApiTokenSecretArn, '')) });
    this.statementsFor = (services) =>
      services.has('workloadManager') ? [new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [site.slurmTokenSecretArn] })] : [];
    this.siteApiTokenGrant = () => {
      if (!this.siteApiTokenReaders) {
        this.siteApiTokenReaders = new Policy(this, 'SiteApiTokenReaders', {
          statements: [new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [site.siteApiTokenSecretArn] })],
        });
        (this.siteApiTokenReaders.node.defaultChild as CfnPolicy).cfnOptions.condition = hasSiteApiToken;
      }
      return this.siteApiTokenReaders;
    };
    const workloadManager = {
      [ENVIRONMENT.workloadManagerUrl]: site.workloadManagerUrl,
      [ENVIRONMENT.slurmApiVersion]: site.slurmApiVersion,
      // Empty counts as unset for the functions (dependenciesFromEnvironment tests truthiness).
      [ENVIRONMENT.slurmUserName]: site.slurmUserName,
      [ENVIRONMENT.slurmTokenSecretArn]: site.slurmTokenSecretArn,
    };
    this.rollingUpgradeEnvironment = {
      ...workloadManager,
      [ENVIRONMENT.bootServiceUrl]: site.bootServiceUrl,
      [ENVIRONMENT.inventoryUrl]: site.inventoryUrl,
      [ENVIRONMENT.nodeNames]: site.nodeNames,
      [ENVIRONMENT.siteApiTokenSecretArn]: site.siteApiTokenSecretArn,
      ...insecure,
    };
    this.groupDeploymentEnvironment = {
      // Read only: a batch's nodes the site shows claimed by another control plane's run are left alone.
      ...workloadManager,
      [ENVIRONMENT.inventoryUrl]: site.inventoryUrl,
      [ENVIRONMENT.provisionerUrl]: site.provisionerUrl,
      [ENVIRONMENT.siteApiTokenSecretArn]: site.siteApiTokenSecretArn,
      ...insecure,
    };
  }

  grant(role: IRole, services: readonly SiteService[]): void {
    const used = new Set(services);
    for (const statement of this.statementsFor(used)) role.addToPrincipalPolicy(statement);
    if (this.siteApiTokenGrant && (['bootService', 'inventory', 'provisioner'] as const).some((service) => used.has(service)))
      this.siteApiTokenGrant().attachToRole(role);
  }
}

type Service = 'workloadManager' | 'bootService' | 'inventory' | 'provisioner';
const SERVICES: readonly Service[] = ['workloadManager', 'bootService', 'inventory', 'provisioner'];

/**
 * What a Lambda cannot use: tokens from its own environment or files (only Secrets Manager reaches
 * it), commands on "this host" (a Lambda has no scontrol: use SSM), and a file inventory (the
 * function has no site files). slurm-reboot and the command provisioner are deployable: they keep
 * their boot sessions and actions in the rollout table, which every function can already write.
 */
function checkDeployable(profile: SiteProfile, ssmTargets: readonly SsmTarget[] | undefined): SiteProfile {
  const problems: FieldProblem[] = [];
  for (const key of SERVICES) {
    const service = profile[key] as { type: string; token?: SecretReference } | undefined;
    if (!service) continue;
    if (service.token && service.token.secretArn === undefined)
      problems.push({ field: `${key}.token`, message: 'a deployed stack reads tokens from Secrets Manager: give {secretArn: ARN}' });
    if (service.type === 'file') problems.push({ field: `${key}.type`, message: 'a file inventory is not available to the deployed functions' });
  }
  const allowed = new Set((ssmTargets ?? []).flatMap(({ region, instanceIds }) => instanceIds.map((id) => `${region}/${id}`)));
  for (const [field, transport] of profileTransports(profile)) {
    if (transport.type === 'local') problems.push({ field, message: 'the deployed functions have no local cluster commands: use {type: ssm, ...}' });
    if (transport.type === 'ssm' && ssmTargets) {
      const outside = transport.instanceIds.filter((id) => !allowed.has(`${transport.region}/${id}`));
      if (outside.length > 0)
        problems.push({ field: `${field}.instanceIds`, message: `${outside.join(', ')} (${transport.region}) not in the construct's ssmTargets` });
    }
  }
  if (problems.length > 0) throw new InvalidInputError('site profile for the stack', problems);
  return profile;
}

/** Every transport the profile names, by its field: the profile's own, the tasks', and each service's. */
export function profileTransports(profile: SiteProfile): [string, TransportProfile][] {
  const named: [string, TransportProfile | undefined][] = [
    ['transport', profile.transport],
    ['tasks.transport', profile.tasks?.transport],
    ...SERVICES.map((key): [string, TransportProfile | undefined] => [
      `${key}.transport`,
      (profile[key] as { transport?: TransportProfile } | undefined)?.transport,
    ]),
  ];
  return named.filter((entry): entry is [string, TransportProfile] => entry[1] !== undefined);
}

/**
 * A function's statements for the services it calls: the secrets of those services' connectors, and SSM on the
 * targets of the transports it reaches: each command-driven service's (its own or the profile's), slurm-reboot's
 * inventory (it reads a boot limit's group members), and for `commands` the head node (health checks) and the
 * tasks' transport.
 */
function sitePolicies(profile: SiteProfile, services: ReadonlySet<SiteService>): PolicyStatement[] {
  const reached = new Set<Service>(SERVICES.filter((service) => services.has(service) && profile[service] !== undefined));
  if (reached.has('bootService') && profile.bootService.type === 'slurm-reboot') reached.add('inventory');
  const secretArns = new Set<string>();
  const transports: TransportProfile[] = [];
  for (const key of reached) {
    const service = profile[key] as { type: string; token?: SecretReference; transport?: TransportProfile };
    if (service.token?.secretArn) secretArns.add(service.token.secretArn);
    const commandDriven = TRANSPORT_USERS.some(([user, type]) => user === key && type === service.type);
    const transport = commandDriven ? (service.transport ?? profile.transport) : undefined;
    if (transport) transports.push(transport);
  }
  if (services.has('commands'))
    transports.push(...[profile.transport, profile.tasks?.transport ?? profile.transport].filter((t): t is TransportProfile => t !== undefined));
  const policies: PolicyStatement[] = [];
  if (secretArns.size > 0) policies.push(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [...secretArns] }));
  const ssmTransports = transports.filter((t): t is Extract<TransportProfile, { type: 'ssm' }> => t.type === 'ssm');
  // The instances its transports name (within the construct's ssmTargets allow-list: checkDeployable holds the profile to it).
  const ssm: readonly SsmTarget[] = ssmTransports;
  if (ssm.length > 0) {
    const resources = new Set<string>();
    for (const { region, instanceIds } of ssm) {
      resources.add(`arn:${Aws.PARTITION}:ssm:${region}::document/AWS-RunShellScript`);
      for (const id of instanceIds) {
        resources.add(
          id.startsWith('mi-')
            ? `arn:${Aws.PARTITION}:ssm:${region}:${Aws.ACCOUNT_ID}:managed-instance/${id}`
            : `arn:${Aws.PARTITION}:ec2:${region}:${Aws.ACCOUNT_ID}:instance/${id}`,
        );
      }
    }
    policies.push(new PolicyStatement({ actions: ['ssm:SendCommand'], resources: [...resources] }));
    // Polling (GetCommandInvocation) and finding a command an earlier attempt started (ListCommandInvocations) take no resource narrower than the account.
    policies.push(new PolicyStatement({ actions: ['ssm:GetCommandInvocation', 'ssm:ListCommandInvocations'], resources: ['*'] }));
  }
  return policies;
}
