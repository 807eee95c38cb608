import jsep from 'jsep';
import { describeError } from '../errors';

/**
 * Task conditions: Fuel's option 4, a strict API inside a small expression language.
 *
 *   cluster.status == 'operational' and nodes_count() > 10
 *   role_in_deployment('ceph-osd') or not role_in_cluster('zabbix-server')
 *
 * jsep parses (no eval, no Function); this file walks the tree it gives, and accepts only what is
 * listed here: `cluster.status`, `nodes_count()`, `role_in_deployment('r')`, `role_in_cluster('r')`,
 * string, number and boolean literals, `==`, `!=`, `<`, `<=`, `>`, `>=`, `and`, `or`, `not` and
 * parentheses. Everything else (another name, function, member, operator) is refused when the graph
 * is validated, and the types are checked then too, so evaluation cannot fail.
 */

export interface ConditionContext {
  clusterStatus: string;
  /** Nodes in this deployment (after --nodes). */
  nodesCount: number;
  /** Roles of the nodes in this deployment. */
  deploymentRoles: ReadonlySet<string>;
  /** Roles of every node of the site. */
  clusterRoles: ReadonlySet<string>;
}

type ValueType = 'string' | 'number' | 'boolean';

/** A checked condition tree: only these shapes exist after `compileCondition`. */
export type ConditionNode =
  | { kind: 'literal'; value: string | number | boolean }
  | { kind: 'cluster-status' }
  | { kind: 'nodes-count' }
  | { kind: 'role-in'; scope: 'deployment' | 'cluster'; role: string }
  | { kind: 'not'; argument: ConditionNode }
  | { kind: 'logical'; operator: 'and' | 'or'; left: ConditionNode; right: ConditionNode }
  | { kind: 'compare'; operator: CompareOperator; left: ConditionNode; right: ConditionNode };

const COMPARE_OPERATORS = ['==', '!=', '<', '<=', '>', '>='] as const;
type CompareOperator = (typeof COMPARE_OPERATORS)[number];

class ConditionProblem extends Error {}

/** Parses with the word operators added for this call only: jsep's operator table is shared by the process. */
function parse(text: string): jsep.Expression {
  jsep.addBinaryOp('or', 1);
  jsep.addBinaryOp('and', 2);
  jsep.addUnaryOp('not');
  try {
    return jsep(text);
  } finally {
    jsep.removeBinaryOp('or');
    jsep.removeBinaryOp('and');
    jsep.removeUnaryOp('not');
  }
}

/** The checked tree, or the problem (as the message of a validation error). */
export function compileCondition(text: string): { condition: ConditionNode } | { problem: string } {
  let tree: jsep.Expression;
  try {
    tree = parse(text);
  } catch (err) {
    return { problem: `cannot parse the condition: ${describeError(err)}` };
  }
  try {
    const { node, type } = check(tree);
    if (type !== 'boolean') throw new ConditionProblem(`the condition gives a ${type}, not true or false`);
    return { condition: node };
  } catch (err) {
    if (err instanceof ConditionProblem) return { problem: err.message };
    throw err;
  }
}

function check(expr: jsep.Expression): { node: ConditionNode; type: ValueType } {
  switch (expr.type) {
    case 'Literal': {
      const { value, raw } = expr as jsep.Literal;
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
        return { node: { kind: 'literal', value }, type: typeof value as ValueType };
      }
      throw new ConditionProblem(`${raw} is not allowed: use strings, numbers, true or false`);
    }
    case 'MemberExpression': {
      const member = expr as jsep.MemberExpression;
      if (!member.computed && isIdentifier(member.object, 'cluster') && isIdentifier(member.property, 'status')) {
        return { node: { kind: 'cluster-status' }, type: 'string' };
      }
      throw new ConditionProblem(`unknown name ${describe(expr)}: the only attribute is cluster.status`);
    }
    case 'Identifier':
      throw new ConditionProblem(
        `unknown name '${(expr as jsep.Identifier).name}': names are cluster.status, nodes_count(), role_in_deployment('r'), role_in_cluster('r')`,
      );
    case 'CallExpression':
      return checkCall(expr as jsep.CallExpression);
    case 'UnaryExpression': {
      const unary = expr as jsep.UnaryExpression;
      if (unary.operator !== 'not') throw new ConditionProblem(`operator '${unary.operator}' is not allowed: use and, or, not`);
      const argument = check(unary.argument);
      if (argument.type !== 'boolean') throw new ConditionProblem(`not applies to true or false, not a ${argument.type}: write not (a == b)`);
      return { node: { kind: 'not', argument: argument.node }, type: 'boolean' };
    }
    case 'BinaryExpression': {
      const binary = expr as jsep.BinaryExpression;
      const left = check(binary.left);
      const right = check(binary.right);
      if (binary.operator === 'and' || binary.operator === 'or') {
        if (left.type !== 'boolean' || right.type !== 'boolean')
          throw new ConditionProblem(`${binary.operator} joins true or false values, not a ${left.type === 'boolean' ? right.type : left.type}`);
        return { node: { kind: 'logical', operator: binary.operator, left: left.node, right: right.node }, type: 'boolean' };
      }
      if (!(COMPARE_OPERATORS as readonly string[]).includes(binary.operator)) {
        throw new ConditionProblem(`operator '${binary.operator}' is not allowed: use ==, !=, <, <=, >, >=, and, or, not`);
      }
      const operator = binary.operator as CompareOperator;
      if (left.type !== right.type) throw new ConditionProblem(`${operator} compares a ${left.type} with a ${right.type}`);
      if (operator !== '==' && operator !== '!=' && left.type !== 'number') throw new ConditionProblem(`${operator} compares numbers, not ${left.type}s`);
      return { node: { kind: 'compare', operator, left: left.node, right: right.node }, type: 'boolean' };
    }
    case 'Compound':
      throw new ConditionProblem('the condition is several expressions side by side: join them with and, or');
    default:
      throw new ConditionProblem(`${expr.type} is not allowed in a condition`);
  }
}

function checkCall(call: jsep.CallExpression): { node: ConditionNode; type: ValueType } {
  const name = call.callee.type === 'Identifier' ? (call.callee as jsep.Identifier).name : undefined;
  if (name === 'nodes_count') {
    if (call.arguments.length > 0) throw new ConditionProblem('nodes_count() takes no argument');
    return { node: { kind: 'nodes-count' }, type: 'number' };
  }
  if (name === 'role_in_deployment' || name === 'role_in_cluster') {
    const [argument] = call.arguments;
    const role = argument?.type === 'Literal' ? (argument as jsep.Literal).value : undefined;
    if (call.arguments.length !== 1 || typeof role !== 'string') throw new ConditionProblem(`${name}() takes one role name in quotes`);
    return { node: { kind: 'role-in', scope: name === 'role_in_deployment' ? 'deployment' : 'cluster', role }, type: 'boolean' };
  }
  throw new ConditionProblem(`unknown function ${describe(call.callee)}: functions are nodes_count(), role_in_deployment('r'), role_in_cluster('r')`);
}

function isIdentifier(expr: jsep.Expression, name: string): boolean {
  return expr.type === 'Identifier' && (expr as jsep.Identifier).name === name;
}

function describe(expr: jsep.Expression): string {
  if (expr.type === 'Identifier') return `'${(expr as jsep.Identifier).name}'`;
  if (expr.type === 'MemberExpression') {
    const member = expr as jsep.MemberExpression;
    const property = member.computed ? '[...]' : `.${(member.property as jsep.Identifier).name}`;
    return `${describe(member.object).replace(/'$/, '')}${property}'`;
  }
  return expr.type === 'ThisExpression' ? "'this" : expr.type;
}

export function evaluateCondition(node: ConditionNode, context: ConditionContext): boolean {
  return value(node, context) === true;
}

function value(node: ConditionNode, context: ConditionContext): string | number | boolean {
  switch (node.kind) {
    case 'literal':
      return node.value;
    case 'cluster-status':
      return context.clusterStatus;
    case 'nodes-count':
      return context.nodesCount;
    case 'role-in':
      return (node.scope === 'deployment' ? context.deploymentRoles : context.clusterRoles).has(node.role);
    case 'not':
      return !value(node.argument, context);
    case 'logical':
      return node.operator === 'and'
        ? value(node.left, context) === true && value(node.right, context) === true
        : value(node.left, context) === true || value(node.right, context) === true;
    case 'compare': {
      const left = value(node.left, context);
      const right = value(node.right, context);
      switch (node.operator) {
        case '==':
          return left === right;
        case '!=':
          return left !== right;
        case '<':
          return left < right;
        case '<=':
          return left <= right;
        case '>':
          return left > right;
        case '>=':
          return left >= right;
      }
    }
  }
}
