import { TABLE_ACTIONS, tableGrants, type TableUser } from '../../contracts';
import { getAttArn, type Resource, type Statement, type TemplateQueries } from '../support/template-queries';

/** The table's users every stack deploys: all but CommandEnds, which only a profile with SSM command notifications brings. */
export const TABLE_USERS_OF_EVERY_STACK: readonly string[] = Object.keys(TABLE_ACTIONS).filter((name) => name !== 'CommandEnds');

/**
 * Least privilege on the sessions table (contracts/table-access.ts): each function gets exactly the actions its
 * stores call, on the partitions they reach only (dynamodb:LeadingKeys), on node locks reads and conditional
 * updates only, and Query on the index when it lists. `users`: the functions of TABLE_ACTIONS the stack deploys.
 */
export function tableGrantSpecs(stack: TemplateQueries, users: readonly string[] = TABLE_USERS_OF_EVERY_STACK): void {
  const tableArn = () => getAttArn(stack.onlyOne('AWS::DynamoDB::Table')[0]);
  const indexArn = () => ({ 'Fn::Join': ['', [tableArn(), '/index/*']] });
  const functionOf = (name: string) => stack.resources[stack.functionId(name === 'Api' ? 'handler' : name)] as Resource;
  /** The statements of a function's role that name DynamoDB actions. */
  const tableStatements = (name: string): Statement[] =>
    stack.statementsOf(functionOf(name)).filter((statement) => [statement.Action].flat().some((action) => action.startsWith('dynamodb:')));
  const leadingKeys = (statement: Statement) => statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];

  it.each(users)('%s: exactly the actions its stores call, on the partitions they reach; Query on the index', (name) => {
    const grants = tableGrants(name as TableUser);
    const statements = tableStatements(name);
    const onTable = statements.filter((statement) => JSON.stringify(statement.Resource) === JSON.stringify(tableArn()));
    const onIndex = statements.filter((statement) => JSON.stringify(statement.Resource) === JSON.stringify(indexArn()));
    expect(onTable.length + onIndex.length).toBe(statements.length);
    expect(onTable.map((statement) => ({ actions: [statement.Action].flat().sort(), partitions: leadingKeys(statement) }))).toEqual(
      grants.table.map((grant) => ({ actions: grant.actions.map((action) => `dynamodb:${action}`).sort(), partitions: grant.partitions })),
    );
    // Every statement on the table names its partitions: none reaches the whole table.
    for (const statement of onTable) expect(leadingKeys(statement)?.length).toBeGreaterThan(0);
    expect(onIndex.map((statement) => statement.Action)).toEqual(grants.indexQuery ? ['dynamodb:Query'] : []);
  });

  it('gives no function Scan, and no function a way to put over or delete a node lock', () => {
    for (const name of users) {
      for (const statement of tableStatements(name)) {
        const actions = [statement.Action].flat();
        expect(actions).not.toContain('dynamodb:Scan');
        if (leadingKeys(statement)?.includes('LOCK#*')) {
          expect({ name, writes: actions.filter((a) => ['dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'].includes(a)) }).toEqual({
            name,
            writes: [],
          });
          expect({ name, partitions: leadingKeys(statement) }).toEqual({ name, partitions: ['LOCK#*'] });
        }
      }
    }
  });

  it('lets the REST API function delete sessions, run starts, environments and environment upgrades, never a lock', () => {
    const deletes = tableStatements('Api').filter((statement) => [statement.Action].flat().includes('dynamodb:DeleteItem'));
    expect(deletes.flatMap((statement) => leadingKeys(statement) ?? ['(anything)'])).not.toContain('LOCK#*');
    expect(deletes.flatMap((statement) => leadingKeys(statement) ?? [])).toEqual(
      expect.arrayContaining(['SESSION#*', 'RUN#*', 'ENVIRONMENTS', 'ENVUPGRADE#*']),
    );
    const holders = (action: string) =>
      users.filter((name) => tableStatements(name).some((statement) => [statement.Action].flat().includes(`dynamodb:${action}`)));
    expect(holders('DeleteItem')).toEqual(['CloneSeed', 'Api']);
    // The REST API removes an ended session's or deployment's partition (DELETE /sessions|deployments/{id}) in batches.
    expect(holders('BatchWriteItem').sort()).toEqual([
      'AdvanceTaskRun',
      'AdvanceWindow',
      'Api',
      'BootStep',
      'CancelSession',
      'CheckBoot',
      'CheckQuiesce',
      'CheckReturnToService',
      'CleanUp',
      'EvaluateBoot',
      'OpenTaskRun',
      'StartStep',
    ]);
    expect(holders('BatchWriteItem')).not.toContain('OpenSession');
  });
}
