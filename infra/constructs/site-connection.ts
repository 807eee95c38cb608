import { CfnCondition, CfnParameter, Fn, SecretValue, Stack, Validations, type CfnParameterProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { ENVIRONMENT } from '../../contracts';

const SECRET_ARN = 'arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\\d{12}:secret:.+';
const URL_PATTERN = '^https?://.+';

/**
 * The site services the functions talk to, as stack parameters, so that one synthesized template
 * deploys to any site. Each workflow's functions get only the services (and secrets) that workflow uses.
 */
export class SiteConnection extends Construct {
  /** Slurm, BOS and HSM. */
  readonly rollingUpgradeEnvironment: Record<string, string>;
  /** HSM and the provisioner. */
  readonly groupDeploymentEnvironment: Record<string, string>;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    // The scope is the stack, so the parameters keep their plain logical ids (WorkloadManagerUrl, ...).
    const parameter = (name: string, props: CfnParameterProps) => new CfnParameter(scope, name, { type: 'String', ...props }).valueAsString;

    const workloadManagerUrl = parameter('WorkloadManagerUrl', { description: 'Base URL of slurmrestd.', allowedPattern: URL_PATTERN });
    const slurmApiVersion = parameter('SlurmApiVersion', {
      description: "slurmrestd's data_parser version (v0.0.40 is gone from Slurm 25.11).",
      default: 'v0.0.41',
      allowedPattern: '^v\\d+\\.\\d+\\.\\d+$',
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
    Validations.of(Stack.of(this)).acknowledge({
      id: 'CloudFormation-Validate::W2509',
      reason: 'SlurmTokenSecretArn and SiteApiTokenSecretArn hold the ARN of a secret, not the secret.',
    });
    const bootServiceUrl = parameter('BootServiceUrl', { description: 'Base URL of the boot service (BOS).', allowedPattern: URL_PATTERN });
    const inventoryUrl = parameter('InventoryUrl', { description: 'Base URL of the hardware inventory (HSM).', allowedPattern: URL_PATTERN });
    const provisionerUrl = parameter('ProvisionerUrl', { description: 'Base URL of the provisioner (group deployments).', allowedPattern: URL_PATTERN });

    // The functions read tokens from their environment only. A CloudFormation dynamic reference keeps a token
    // out of the template and out of cdk.out: CloudFormation resolves it at deploy time. The resolved value
    // still lands in the function configuration (KMS-encrypted at rest, readable with
    // lambda:GetFunctionConfiguration), and a rotated token reaches the functions only on the next deploy.
    // Reading the secret at cold start instead needs a change in lambdas/entrypoints/environment.ts.
    const slurmToken = SecretValue.secretsManager(slurmTokenSecretArn).unsafeUnwrap();
    // Fn::If, so that a site without a token deploys without a secret: the functions read an empty value as unset.
    const hasSiteApiToken = new CfnCondition(scope, 'HasSiteApiToken', { expression: Fn.conditionNot(Fn.conditionEquals(siteApiTokenSecretArn, '')) });
    const siteApiToken = Fn.conditionIf(hasSiteApiToken.logicalId, SecretValue.secretsManager(siteApiTokenSecretArn).unsafeUnwrap(), '').toString();

    this.rollingUpgradeEnvironment = {
      [ENVIRONMENT.workloadManagerUrl]: workloadManagerUrl,
      [ENVIRONMENT.slurmApiVersion]: slurmApiVersion,
      // Empty counts as unset for the functions (dependenciesFromEnvironment tests truthiness).
      [ENVIRONMENT.slurmUserName]: slurmUserName,
      [ENVIRONMENT.slurmToken]: slurmToken,
      [ENVIRONMENT.bootServiceUrl]: bootServiceUrl,
      [ENVIRONMENT.inventoryUrl]: inventoryUrl,
      [ENVIRONMENT.siteApiToken]: siteApiToken,
    };
    this.groupDeploymentEnvironment = {
      [ENVIRONMENT.inventoryUrl]: inventoryUrl,
      [ENVIRONMENT.provisionerUrl]: provisionerUrl,
      [ENVIRONMENT.siteApiToken]: siteApiToken,
    };
  }
}
