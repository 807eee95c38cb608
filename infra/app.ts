import { App } from 'aws-cdk-lib';
import { loadSiteProfileFile } from '../adapters/site/site-profile-file';
import { RolloutError } from '../core/errors';
import { siteRelayPrincipalFrom } from './constructs/rollout-api';
import { RolloutStack } from './rollout-stack';

// Environment-agnostic on purpose: the site comes from `-c siteProfile=FILE`, or else as parameters
// (site URLs and token secret ARNs); account and region from the deploy.
const app = new App();
const profileFile = app.node.tryGetContext('siteProfile') as string | undefined;
// `-c allowInsecureHttp=true`: a lab whose site services have no TLS (tokens then travel in the clear).
const allowInsecureHttp = String(app.node.tryGetContext('allowInsecureHttp')) === 'true';
// `-c siteRelayPrincipal=<account id or IAM ARN>`: who may assume SiteRelayRole (the slurmctld host); default this account.
const relayPrincipal = app.node.tryGetContext('siteRelayPrincipal') as string | undefined;
new RolloutStack(app, 'BaremetalRollout', {
  description: 'Rolling upgrades of bare-metal fleets: Step Functions workflows over DynamoDB session state.',
  ...(allowInsecureHttp ? { allowInsecureHttp } : {}),
  ...(profileFile ? { siteProfile: await readOrExit(() => loadSiteProfileFile(profileFile)).then((file) => file.profile) } : {}),
  ...(relayPrincipal ? { siteRelayPrincipal: await readOrExit(async () => siteRelayPrincipalFrom(String(relayPrincipal))) } : {}),
});
app.synth();

/** What `read` reads, or (a profile or context value that is not one) one `error:` line naming the problem, as the CLI says it, instead of a stack trace. */
async function readOrExit<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (!(err instanceof RolloutError)) throw err;
    process.stderr.write(`error: ${err.message}\n`);
    process.exit(2);
  }
}
