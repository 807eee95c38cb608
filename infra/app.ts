import { App } from 'aws-cdk-lib';
import { RolloutStack } from './rollout-stack';

// Environment-agnostic on purpose: site URLs and the token come in as parameters, account and region from the deploy.
const app = new App();
new RolloutStack(app, 'BaremetalRollout', {
  description: 'Rolling upgrades of bare-metal fleets: Step Functions workflows over DynamoDB session state.',
});
app.synth();
