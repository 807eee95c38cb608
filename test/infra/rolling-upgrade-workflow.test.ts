import { Stack } from 'aws-cdk-lib';
import { ROLLING_UPGRADE_FUNCTION_NAMES, type RollingUpgradeFunctionName } from '../../contracts';
import { RollingUpgradeWorkflow } from '../../infra/constructs/rolling-upgrade-workflow';
import { importedFunctions, testApp } from '../support/synth-stack';

describe('RollingUpgradeWorkflow', () => {
  it('builds with every function of the workflow', () => {
    const stack = new Stack(testApp(), 'Complete');
    expect(() => new RollingUpgradeWorkflow(stack, 'Workflow', { functions: importedFunctions(stack, ROLLING_UPGRADE_FUNCTION_NAMES) })).not.toThrow();
  });

  it('fails the synth, naming the ASL file and the placeholder, when a function is missing', () => {
    const stack = new Stack(testApp(), 'Incomplete');
    const functions = importedFunctions<RollingUpgradeFunctionName>(
      stack,
      ROLLING_UPGRADE_FUNCTION_NAMES.filter((name) => name !== 'CleanUp'),
    );
    expect(() => new RollingUpgradeWorkflow(stack, 'Workflow', { functions })).toThrow(
      'statemachines/rolling-upgrade.asl.json: no value for ${CleanUpFunctionArn}',
    );
  });
});
