import { compileCondition, evaluateCondition, type ConditionContext } from '../../../core/task-graph';

const context: ConditionContext = {
  clusterStatus: 'operational',
  nodesCount: 12,
  deploymentRoles: new Set(['ceph-osd', 'compute']),
  clusterRoles: new Set(['ceph-osd', 'compute', 'zabbix-server']),
};

function evaluate(text: string, ctx = context): boolean {
  const compiled = compileCondition(text);
  if ('problem' in compiled) throw new Error(compiled.problem);
  return evaluateCondition(compiled.condition, ctx);
}

describe('task conditions', () => {
  it.each([
    ["cluster.status == 'operational' and nodes_count() > 10", true],
    ["cluster.status == 'new' and nodes_count() > 10", false],
    ["cluster.status == 'new' or nodes_count() <= 12", true],
    ["role_in_deployment('ceph-osd')", true],
    ["role_in_deployment('zabbix-server')", false],
    ["role_in_cluster('zabbix-server') and not role_in_deployment('zabbix-server')", true],
    ["not (cluster.status != 'operational')", true],
    ['nodes_count() >= 12 and nodes_count() < 13 and true', true],
    // and binds tighter than or
    ['false and false or true', true],
    ['true or false and false', true],
  ])('%s is %s', (text, expected) => {
    expect(evaluate(text)).toBe(expected);
  });

  it.each([
    ['nodes_count', "unknown name 'nodes_count'"],
    ["nodes_count('x') > 1", 'nodes_count() takes no argument'],
    ["role_in_cluster('a', 'b')", 'role_in_cluster() takes one role name in quotes'],
    ["cluster.__proto__ == 'x'", "unknown name 'cluster.__proto__'"],
    ["cluster['status'] == 'x'", "unknown name 'cluster[...]'"],
    ['nodes_count() + 1 > 2', "operator '+' is not allowed"],
    ["cluster.status == 'a' ? true : false", 'ConditionalExpression is not allowed'],
    ['cluster.status', 'the condition gives a string, not true or false'],
    ["cluster.status < 'b'", '< compares numbers, not strings'],
    ['!true', "operator '!' is not allowed: use and, or, not"],
    ['true && true', "operator '&&' is not allowed"],
    ['[1] == [1]', 'ArrayExpression is not allowed'],
    ['(', 'cannot parse the condition'],
  ])('refuses %s', (text, problem) => {
    const compiled = compileCondition(text);
    expect('problem' in compiled && compiled.problem).toContain(problem);
  });

  it('leaves the shared parser without its word operators', async () => {
    compileCondition('true and true');
    const jsep = (await import('jsep')).default;
    expect(jsep('a and b').type).toBe('Compound');
  });
});
