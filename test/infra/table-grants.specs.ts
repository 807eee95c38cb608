import { TABLE_ACTIONS } from '../../contracts';
import { getAttArn, type Resource, type TemplateQueries } from '../support/template-queries';

/** Least privilege on the sessions table: each function gets exactly the actions its stores call (contracts/table-access.ts). */
export function tableGrantSpecs(stack: TemplateQueries): void {
  const tableArn = () => getAttArn(stack.onlyOne('AWS::DynamoDB::Table')[0]);
  /** The table actions a function's role grants, each with the resources it is granted on. */
  const tableGrants = (name: string): Map<string, unknown[]> => {
    const grants = new Map<string, unknown[]>();
    for (const statement of stack.statementsOf(stack.resources[stack.functionId(name === 'Api' ? 'handler' : name)] as Resource)) {
      for (const action of [statement.Action].flat().filter((a) => a.startsWith('dynamodb:'))) {
        grants.set(action, [...(grants.get(action) ?? []), ...[statement.Resource].flat()]);
      }
    }
    return grants;
  };

  it.each(Object.entries(TABLE_ACTIONS))('%s: exactly the actions its stores call, on the table and its index', (name, actions) => {
    const grants = tableGrants(name);
    expect([...grants.keys()].sort()).toEqual(actions.map((action) => `dynamodb:${action}`).sort());
    for (const resources of grants.values()) expect(resources).toEqual([tableArn(), { 'Fn::Join': ['', [tableArn(), '/index/*']] }]);
  });

  it('gives no function Scan, and DeleteItem or BatchWriteItem only to those whose stores call them', () => {
    const holders = (action: string) => Object.keys(TABLE_ACTIONS).filter((name) => tableGrants(name).has(`dynamodb:${action}`));
    expect(holders('Scan')).toEqual([]);
    expect(holders('DeleteItem')).toEqual(['CloneSeed', 'Api']);
    // The REST API removes an ended session's or deployment's partition (DELETE /sessions|deployments/{id}) in batches.
    expect(holders('BatchWriteItem').sort()).toEqual(['AdvanceTaskRun', 'AdvanceWindow', 'Api', 'BootStep', 'CancelSession', 'CheckBoot', 'CheckQuiesce', 'CheckReturnToService', 'CleanUp', 'EvaluateBoot', 'OpenTaskRun', 'StartStep']);
    expect(holders('BatchWriteItem')).not.toContain('OpenSession');
  });
}
