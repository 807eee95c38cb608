import type { Construct } from 'constructs';
import type { RollingUpgradeFunctionName } from '../../contracts';
import { ContinuingWorkflow, type ContinuingWorkflowProps } from './continuing-workflow';

export type RollingUpgradeWorkflowProps = ContinuingWorkflowProps<RollingUpgradeFunctionName>;

/** The rolling-upgrade state machine, from statemachines/rolling-upgrade.asl.json. */
export class RollingUpgradeWorkflow extends ContinuingWorkflow<RollingUpgradeFunctionName> {
  constructor(scope: Construct, id: string, props: RollingUpgradeWorkflowProps) {
    super(scope, id, 'RollingUpgrade', props);
  }
}
