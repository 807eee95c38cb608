import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { RollingUpgradeFunctions } from './constructs/rolling-upgrade-functions';
import { RollingUpgradeWorkflow } from './constructs/rolling-upgrade-workflow';
import { SessionsTable } from './constructs/sessions-table';
import { SiteConnection } from './constructs/site-connection';

/** The deployed rollout service for one site: the session table, the stage functions and the rolling-upgrade workflow. */
export class RolloutStack extends Stack {
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const site = new SiteConnection(this, 'Site');
    const { table } = new SessionsTable(this, 'Sessions');
    const { functions } = new RollingUpgradeFunctions(this, 'RollingUpgradeFunctions', { table, environment: site.environment });
    const { stateMachine } = new RollingUpgradeWorkflow(this, 'RollingUpgrade', { functions });

    new CfnOutput(this, 'RollingUpgradeStateMachineArn', { value: stateMachine.stateMachineArn });
    new CfnOutput(this, 'SessionsTableName', { value: table.tableName });
  }
}
