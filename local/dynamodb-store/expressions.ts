import { addNumbers, compareScalars, payloadOf, typeOf, valuesEqual, type AttributeType, type AttributeValue, type Item } from './attribute-values';
import { ValidationError } from './errors';
import { RESERVED_WORDS } from './reserved-words';

/**
 * DynamoDB's expression language, as the developer guide defines it
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.html): condition,
 * filter and key-condition expressions, update expressions and projection expressions. Text is
 * parsed once into a tree that keeps `#name` and `:value` references (cached by text: the same few
 * expressions come back on every request); a request binds them to its ExpressionAttributeNames and
 * ExpressionAttributeValues, with DynamoDB's checks (undefined or unused references, reserved words,
 * operand types).
 */

// ---- Trees ---------------------------------------------------------------------------------------

/** One step of a document path: an attribute name (literal or `#ref`) or a list index. */
export type PathStep = { name: string } | { ref: string } | number;
export type RawPath = PathStep[];

export type Operand =
  | { kind: 'path'; path: RawPath }
  | { kind: 'value'; ref: string }
  | { kind: 'size'; path: RawPath }
  | { kind: 'if_not_exists'; path: RawPath; fallback: Operand }
  | { kind: 'list_append'; first: Operand; second: Operand }
  | { kind: 'arithmetic'; op: '+' | '-'; left: Operand; right: Operand };

export type Comparator = '=' | '<>' | '<' | '<=' | '>' | '>=';
export type ConditionFunction = 'attribute_exists' | 'attribute_not_exists' | 'attribute_type' | 'begins_with' | 'contains';

export type Condition =
  | { kind: 'and' | 'or'; left: Condition; right: Condition }
  | { kind: 'not'; operand: Condition }
  | { kind: 'compare'; op: Comparator; left: Operand; right: Operand }
  | { kind: 'between'; operand: Operand; low: Operand; high: Operand }
  | { kind: 'in'; operand: Operand; list: Operand[] }
  | { kind: 'function'; name: ConditionFunction; args: Operand[] };

export type UpdateAction =
  | { kind: 'SET'; path: RawPath; value: Operand }
  | { kind: 'REMOVE'; path: RawPath }
  | { kind: 'ADD' | 'DELETE'; path: RawPath; value: Operand };

export interface UpdateTree {
  actions: UpdateAction[];
}

// ---- Tokens --------------------------------------------------------------------------------------

type Token =
  | { type: 'ident'; text: string; at: number }
  | { type: 'name'; text: string; at: number }
  | { type: 'value'; text: string; at: number }
  | { type: 'number'; text: string; at: number }
  | { type: 'punct'; text: string; at: number }
  | { type: 'end'; text: '<EOF>'; at: number };

const PUNCTUATION = ['<>', '<=', '>=', '(', ')', '[', ']', ',', '.', '=', '<', '>', '+', '-'];

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
      i++;
      continue;
    }
    const start = i;
    if (c === '#' || c === ':') {
      i++;
      while (i < text.length && /[A-Za-z0-9_]/.test(text[i]!)) i++;
      if (i === start + 1) throw syntaxError(text, c, start);
      tokens.push({ type: c === '#' ? 'name' : 'value', text: text.slice(start, i), at: start });
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      while (i < text.length && /[A-Za-z0-9_]/.test(text[i]!)) i++;
      tokens.push({ type: 'ident', text: text.slice(start, i), at: start });
      continue;
    }
    if (/[0-9]/.test(c)) {
      while (i < text.length && /[0-9]/.test(text[i]!)) i++;
      tokens.push({ type: 'number', text: text.slice(start, i), at: start });
      continue;
    }
    const punct = PUNCTUATION.find((p) => text.startsWith(p, i));
    if (!punct) throw syntaxError(text, c, start);
    tokens.push({ type: 'punct', text: punct, at: start });
    i += punct.length;
  }
  tokens.push({ type: 'end', text: '<EOF>', at: text.length });
  return tokens;
}

/** AWS's wording: `Syntax error; token: "x", near: "a x b"`. */
function syntaxError(text: string, token: string, at: number): ValidationError {
  const near = text.slice(Math.max(0, at - 8), Math.min(text.length, at + token.length + 8)).trim();
  return new ValidationError(`Syntax error; token: "${token}", near: "${near}"`);
}

class Parser {
  private position = 0;
  private readonly tokens: Token[];

  constructor(private readonly text: string) {
    this.tokens = tokenize(text);
  }

  peek(offset = 0): Token {
    return this.tokens[Math.min(this.position + offset, this.tokens.length - 1)]!;
  }

  next(): Token {
    const token = this.peek();
    if (token.type !== 'end') this.position++;
    return token;
  }

  /** The next token is the keyword (case-insensitive, as DynamoDB reads them). */
  isKeyword(word: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token.type === 'ident' && token.text.toUpperCase() === word;
  }

  isPunct(text: string): boolean {
    const token = this.peek();
    return token.type === 'punct' && token.text === text;
  }

  expectPunct(text: string): void {
    if (!this.isPunct(text)) throw this.error();
    this.next();
  }

  expectKeyword(word: string): void {
    if (!this.isKeyword(word)) throw this.error();
    this.next();
  }

  error(token = this.peek()): ValidationError {
    return syntaxError(this.text, token.text, token.at);
  }

  atEnd(): boolean {
    return this.peek().type === 'end';
  }

  path(): RawPath {
    const first = this.next();
    const steps: RawPath = [];
    if (first.type === 'ident') steps.push({ name: first.text });
    else if (first.type === 'name') steps.push({ ref: first.text });
    else throw this.error(first);
    for (;;) {
      if (this.isPunct('.')) {
        this.next();
        const part = this.next();
        if (part.type === 'ident') steps.push({ name: part.text });
        else if (part.type === 'name') steps.push({ ref: part.text });
        else throw this.error(part);
      } else if (this.isPunct('[')) {
        this.next();
        const index = this.next();
        if (index.type !== 'number') throw this.error(index);
        this.expectPunct(']');
        steps.push(Number(index.text));
      } else {
        return steps;
      }
    }
  }

  // Conditions: OR < AND < NOT < the comparisons and functions (the guide's precedence).
  condition(): Condition {
    let left = this.conjunction();
    while (this.isKeyword('OR')) {
      this.next();
      left = { kind: 'or', left, right: this.conjunction() };
    }
    return left;
  }

  private conjunction(): Condition {
    let left = this.negation();
    while (this.isKeyword('AND')) {
      this.next();
      left = { kind: 'and', left, right: this.negation() };
    }
    return left;
  }

  private negation(): Condition {
    if (this.isKeyword('NOT')) {
      this.next();
      return { kind: 'not', operand: this.negation() };
    }
    return this.comparison();
  }

  private comparison(): Condition {
    if (this.isPunct('(')) {
      this.next();
      const inner = this.condition();
      this.expectPunct(')');
      return inner;
    }
    const head = this.peek();
    if (head.type === 'ident' && this.peek(1).type === 'punct' && this.peek(1).text === '(' && head.text !== 'size') {
      const fn = this.functionCall();
      if (fn.kind !== 'function') throw new ValidationError(`The function is not allowed to be used this way in an expression; function: ${head.text}`);
      return fn;
    }
    const operand = this.conditionOperand();
    const token = this.peek();
    if (token.type === 'punct' && ['=', '<>', '<', '<=', '>', '>='].includes(token.text)) {
      this.next();
      return { kind: 'compare', op: token.text as Comparator, left: operand, right: this.conditionOperand() };
    }
    if (this.isKeyword('BETWEEN')) {
      this.next();
      const low = this.conditionOperand();
      this.expectKeyword('AND');
      return { kind: 'between', operand, low, high: this.conditionOperand() };
    }
    if (this.isKeyword('IN')) {
      this.next();
      this.expectPunct('(');
      const list = [this.conditionOperand()];
      while (this.isPunct(',')) {
        this.next();
        list.push(this.conditionOperand());
      }
      this.expectPunct(')');
      if (list.length > 100) throw new ValidationError('Too many operands for IN: the maximum is 100');
      return { kind: 'in', operand, list };
    }
    if (operand.kind === 'size') throw new ValidationError('The function is not allowed to be used this way in an expression; function: size');
    throw this.error();
  }

  /** A condition function (a Condition) or size() (an operand). */
  private functionCall(): Condition | Operand {
    const name = this.next().text;
    this.expectPunct('(');
    const args: Operand[] = [];
    if (!this.isPunct(')')) {
      args.push(this.conditionOperand());
      while (this.isPunct(',')) {
        this.next();
        args.push(this.conditionOperand());
      }
    }
    this.expectPunct(')');
    const arity: Record<string, number> = { attribute_exists: 1, attribute_not_exists: 1, attribute_type: 2, begins_with: 2, contains: 2, size: 1 };
    if (!(name in arity)) {
      if (name === 'if_not_exists' || name === 'list_append')
        throw new ValidationError(`The function is not allowed in a condition expression; function: ${name}`);
      throw new ValidationError(`Invalid function name; function: ${name}`);
    }
    if (args.length !== arity[name])
      throw new ValidationError(`Incorrect number of operands for operator or function; operator or function: ${name}, number of operands: ${args.length}`);
    if (name !== 'begins_with' && name !== 'contains' && args[0]!.kind !== 'path') {
      throw new ValidationError(`Operator or function requires a document path; operator or function: ${name}`);
    }
    if (name === 'size') return { kind: 'size', path: (args[0] as { path: RawPath }).path };
    return { kind: 'function', name: name as ConditionFunction, args };
  }

  private conditionOperand(): Operand {
    const token = this.peek();
    if (token.type === 'value') {
      this.next();
      return { kind: 'value', ref: token.text };
    }
    if (token.type === 'ident' && this.peek(1).type === 'punct' && this.peek(1).text === '(') {
      const fn = this.functionCall();
      if (fn.kind !== 'size') throw new ValidationError(`The function is not allowed to be used this way in an expression; function: ${token.text}`);
      return fn;
    }
    return { kind: 'path', path: this.path() };
  }

  // Update expressions: SET, REMOVE, ADD and DELETE clauses, each at most once.
  update(): UpdateTree {
    const actions: UpdateAction[] = [];
    const seen = new Set<string>();
    if (this.atEnd()) throw this.error();
    while (!this.atEnd()) {
      const keyword = this.next();
      const clause = keyword.type === 'ident' ? keyword.text.toUpperCase() : '';
      if (!['SET', 'REMOVE', 'ADD', 'DELETE'].includes(clause)) throw this.error(keyword);
      if (seen.has(clause)) throw new ValidationError(`The "${clause}" section can only be used once in an update expression;`);
      seen.add(clause);
      do {
        if (actions.length > 0 && this.isPunct(',')) this.next();
        if (clause === 'SET') {
          const path = this.path();
          this.expectPunct('=');
          actions.push({ kind: 'SET', path, value: this.setValue() });
        } else if (clause === 'REMOVE') {
          actions.push({ kind: 'REMOVE', path: this.path() });
        } else {
          const path = this.path();
          const value = this.setOperand();
          actions.push({ kind: clause as 'ADD' | 'DELETE', path, value });
        }
      } while (this.isPunct(','));
    }
    return { actions };
  }

  private setValue(): Operand {
    const left = this.setOperand();
    if (this.isPunct('+') || this.isPunct('-')) {
      const op = this.next().text as '+' | '-';
      return { kind: 'arithmetic', op, left, right: this.setOperand() };
    }
    return left;
  }

  private setOperand(): Operand {
    const token = this.peek();
    if (token.type === 'value') {
      this.next();
      return { kind: 'value', ref: token.text };
    }
    if (token.type === 'ident' && this.peek(1).type === 'punct' && this.peek(1).text === '(') {
      this.next();
      this.next();
      if (token.text === 'if_not_exists') {
        const path = this.path();
        this.expectPunct(',');
        const fallback = this.setOperand();
        this.expectPunct(')');
        return { kind: 'if_not_exists', path, fallback };
      }
      if (token.text === 'list_append') {
        const first = this.setOperand();
        this.expectPunct(',');
        const second = this.setOperand();
        this.expectPunct(')');
        return { kind: 'list_append', first, second };
      }
      const known = ['attribute_exists', 'attribute_not_exists', 'attribute_type', 'begins_with', 'contains', 'size'];
      if (known.includes(token.text)) throw new ValidationError(`The function is not allowed in an update expression; function: ${token.text}`);
      throw new ValidationError(`Invalid function name; function: ${token.text}`);
    }
    return { kind: 'path', path: this.path() };
  }

  projection(): RawPath[] {
    const paths = [this.path()];
    while (this.isPunct(',')) {
      this.next();
      paths.push(this.path());
    }
    return paths;
  }
}

// ---- Parsing, cached by text ----------------------------------------------------------------------

const CACHE_LIMIT = 2_000;
const conditionCache = new Map<string, Condition>();
const updateCache = new Map<string, UpdateTree>();
const projectionCache = new Map<string, RawPath[]>();

function cached<T>(cache: Map<string, T>, text: string, parse: (parser: Parser) => T): T {
  const hit = cache.get(text);
  if (hit) return hit;
  if (text.trim() === '') throw new ValidationError('The expression can not be empty;');
  const parser = new Parser(text);
  const tree = parse(parser);
  if (!parser.atEnd()) throw parser.error();
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(text, tree);
  return tree;
}

export const parseCondition = (text: string): Condition => cached(conditionCache, text, (p) => p.condition());
export const parseUpdate = (text: string): UpdateTree => cached(updateCache, text, (p) => p.update());
export const parseProjection = (text: string): RawPath[] => cached(projectionCache, text, (p) => p.projection());

// ---- Binding to a request's names and values ---------------------------------------------------

export type Path = (string | number)[];

/**
 * A request's ExpressionAttributeNames and ExpressionAttributeValues, with what its expressions
 * used of them (DynamoDB refuses a request that leaves one unused).
 */
export class ExpressionContext {
  private readonly usedNames = new Set<string>();
  private readonly usedValues = new Set<string>();

  constructor(
    readonly names: Readonly<Record<string, string>> | undefined,
    readonly values: Readonly<Record<string, AttributeValue>> | undefined,
  ) {}

  /** The attribute names of a path, `#refs` substituted; reserved words refused. */
  path(raw: RawPath): Path {
    return raw.map((step) => {
      if (typeof step === 'number') return step;
      if ('name' in step) {
        if (RESERVED_WORDS.has(step.name.toUpperCase())) throw new ValidationError(`Attribute name is a reserved keyword; reserved keyword: ${step.name}`);
        return step.name;
      }
      const name = this.names?.[step.ref];
      if (name === undefined) throw new ValidationError(`An expression attribute name used in the document path is not defined; attribute name: ${step.ref}`);
      this.usedNames.add(step.ref);
      return name;
    });
  }

  value(ref: string): AttributeValue {
    const value = this.values?.[ref];
    if (value === undefined) throw new ValidationError(`An expression attribute value used in expression is not defined; attribute value: ${ref}`);
    this.usedValues.add(ref);
    return value;
  }

  /** After every expression of the request is bound: none of the names or values may be left unused. */
  checkAllUsed(): void {
    const names = Object.keys(this.names ?? {}).filter((k) => !this.usedNames.has(k));
    if (names.length > 0) throw new ValidationError(`Value provided in ExpressionAttributeNames unused in expressions: keys: {${names.join(', ')}}`);
    const values = Object.keys(this.values ?? {}).filter((k) => !this.usedValues.has(k));
    if (values.length > 0) throw new ValidationError(`Value provided in ExpressionAttributeValues unused in expressions: keys: {${values.join(', ')}}`);
  }
}

/** An operand bound to a request: paths resolved to names, values looked up. */
export type BoundOperand =
  | { kind: 'path'; path: Path }
  | { kind: 'value'; value: AttributeValue }
  | { kind: 'size'; path: Path }
  | { kind: 'if_not_exists'; path: Path; fallback: BoundOperand }
  | { kind: 'list_append'; first: BoundOperand; second: BoundOperand }
  | { kind: 'arithmetic'; op: '+' | '-'; left: BoundOperand; right: BoundOperand };

export type BoundCondition =
  | { kind: 'and' | 'or'; left: BoundCondition; right: BoundCondition }
  | { kind: 'not'; operand: BoundCondition }
  | { kind: 'compare'; op: Comparator; left: BoundOperand; right: BoundOperand }
  | { kind: 'between'; operand: BoundOperand; low: BoundOperand; high: BoundOperand }
  | { kind: 'in'; operand: BoundOperand; list: BoundOperand[] }
  | { kind: 'function'; name: ConditionFunction; args: BoundOperand[] };

export type BoundUpdateAction =
  | { kind: 'SET'; path: Path; value: BoundOperand }
  | { kind: 'REMOVE'; path: Path }
  | { kind: 'ADD' | 'DELETE'; path: Path; value: AttributeValue };

const TYPE_NAMES: Record<string, string> = {
  S: 'STRING',
  N: 'NUMBER',
  B: 'BINARY',
  BOOL: 'BOOLEAN',
  NULL: 'NULL',
  SS: 'SS',
  NS: 'NS',
  BS: 'BS',
  L: 'LIST',
  M: 'MAP',
};
const VALID_TYPES = ['B', 'NULL', 'SS', 'BOOL', 'L', 'BS', 'N', 'NS', 'S', 'M'];

function bindOperand(operand: Operand, context: ExpressionContext): BoundOperand {
  switch (operand.kind) {
    case 'path':
      return { kind: 'path', path: context.path(operand.path) };
    case 'size':
      return { kind: 'size', path: context.path(operand.path) };
    case 'value':
      return { kind: 'value', value: context.value(operand.ref) };
    case 'if_not_exists':
      return { kind: 'if_not_exists', path: context.path(operand.path), fallback: bindOperand(operand.fallback, context) };
    case 'list_append': {
      const bound: BoundOperand = { kind: 'list_append', first: bindOperand(operand.first, context), second: bindOperand(operand.second, context) };
      for (const side of [bound.first, bound.second]) {
        if (side.kind === 'value' && typeOf(side.value) !== 'L') throw incorrectOperand('list_append', side.value);
      }
      return bound;
    }
    case 'arithmetic': {
      const bound: BoundOperand = { kind: 'arithmetic', op: operand.op, left: bindOperand(operand.left, context), right: bindOperand(operand.right, context) };
      for (const side of [bound.left, bound.right]) {
        if (side.kind === 'value' && typeOf(side.value) !== 'N') throw incorrectOperand(operand.op, side.value);
      }
      return bound;
    }
  }
}

function incorrectOperand(operator: string, value: AttributeValue): ValidationError {
  return new ValidationError(`Incorrect operand type for operator or function; operator or function: ${operator}, operand type: ${TYPE_NAMES[typeOf(value)]}`);
}

const SCALAR = new Set(['S', 'N', 'B']);

export function bindCondition(condition: Condition, context: ExpressionContext): BoundCondition {
  switch (condition.kind) {
    case 'and':
    case 'or':
      return { kind: condition.kind, left: bindCondition(condition.left, context), right: bindCondition(condition.right, context) };
    case 'not':
      return { kind: 'not', operand: bindCondition(condition.operand, context) };
    case 'compare': {
      const bound: BoundCondition = {
        kind: 'compare',
        op: condition.op,
        left: bindOperand(condition.left, context),
        right: bindOperand(condition.right, context),
      };
      if (condition.op !== '=' && condition.op !== '<>') {
        for (const side of [bound.left, bound.right])
          if (side.kind === 'value' && !SCALAR.has(typeOf(side.value))) throw incorrectOperand(condition.op, side.value);
      }
      return bound;
    }
    case 'between': {
      const bound = {
        kind: 'between' as const,
        operand: bindOperand(condition.operand, context),
        low: bindOperand(condition.low, context),
        high: bindOperand(condition.high, context),
      };
      for (const side of [bound.operand, bound.low, bound.high])
        if (side.kind === 'value' && !SCALAR.has(typeOf(side.value))) throw incorrectOperand('BETWEEN', side.value);
      if (bound.low.kind === 'value' && bound.high.kind === 'value') {
        const [low, high] = [bound.low.value, bound.high.value];
        if (typeOf(low) === typeOf(high) && compareScalars(typeOf(low) as 'S', payloadOf(low) as string, payloadOf(high) as string) > 0) {
          throw new ValidationError(
            `The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower operand: AttributeValue: {${typeOf(low)}:${String(payloadOf(low))}}, upper operand: AttributeValue: {${typeOf(high)}:${String(payloadOf(high))}}`,
          );
        }
      }
      return bound;
    }
    case 'in':
      return { kind: 'in', operand: bindOperand(condition.operand, context), list: condition.list.map((o) => bindOperand(o, context)) };
    case 'function': {
      const args = condition.args.map((a) => bindOperand(a, context));
      if (condition.name === 'attribute_type') {
        const type = args[1]!;
        if (type.kind !== 'value' || typeOf(type.value) !== 'S')
          throw new ValidationError(
            'Incorrect operand type for operator or function; operator or function: attribute_type, operand type: ' +
              (type.kind === 'value' ? TYPE_NAMES[typeOf(type.value)] : 'PATH'),
          );
        const name = (type.value as { S: string }).S;
        if (!VALID_TYPES.includes(name))
          throw new ValidationError(`Invalid attribute type name found; type: ${name}, valid types: { ${VALID_TYPES.join(', ')} }`);
      }
      if (condition.name === 'begins_with') {
        for (const side of args)
          if (side.kind === 'value' && typeOf(side.value) !== 'S' && typeOf(side.value) !== 'B') throw incorrectOperand('begins_with', side.value);
      }
      return { kind: 'function', name: condition.name, args };
    }
  }
}

export function bindUpdate(tree: UpdateTree, context: ExpressionContext): BoundUpdateAction[] {
  const actions: BoundUpdateAction[] = tree.actions.map((action) => {
    const path = context.path(action.path);
    if (action.kind === 'REMOVE') return { kind: 'REMOVE', path };
    if (action.kind === 'SET') return { kind: 'SET', path, value: bindOperand(action.value, context) };
    if (action.value.kind !== 'value') throw new ValidationError(`Syntax error; the ${action.kind} action takes a value, not a path or a function`);
    const value = context.value(action.value.ref);
    const type = typeOf(value);
    const allowed = action.kind === 'ADD' ? ['N', 'SS', 'NS', 'BS'] : ['SS', 'NS', 'BS'];
    if (!allowed.includes(type)) throw incorrectOperand(action.kind, value);
    return { kind: action.kind, path, value };
  });
  // No two actions may touch the same path or a path inside another.
  for (let i = 0; i < actions.length; i++) {
    for (let j = i + 1; j < actions.length; j++) {
      const a = actions[i]!.path;
      const b = actions[j]!.path;
      const shorter = Math.min(a.length, b.length);
      if (a.slice(0, shorter).every((step, k) => step === b[k])) {
        const describe = (p: Path) => `[${p.join(', ')}]`;
        const what = a.length === b.length ? 'conflict' : 'overlap';
        throw new ValidationError(
          `Two document paths ${what} with each other; must remove or rewrite one of these paths; path one: ${describe(a)}, path two: ${describe(b)}`,
        );
      }
    }
  }
  return actions;
}

/** A ProjectionExpression's paths, bound; like update paths, no two may overlap. */
export function bindProjection(paths: readonly RawPath[], context: ExpressionContext): Path[] {
  const bound = paths.map((p) => context.path(p));
  for (let i = 0; i < bound.length; i++) {
    for (let j = i + 1; j < bound.length; j++) {
      const a = bound[i]!;
      const b = bound[j]!;
      const shorter = Math.min(a.length, b.length);
      if (a.slice(0, shorter).every((step, k) => step === b[k])) {
        const what = a.length === b.length ? 'conflict' : 'overlap';
        throw new ValidationError(
          `Two document paths ${what} with each other; must remove or rewrite one of these paths; path one: [${a.join(', ')}], path two: [${b.join(', ')}]`,
        );
      }
    }
  }
  return bound;
}

// ---- Evaluation --------------------------------------------------------------------------------

/** The value at a document path, or undefined when any step is missing or of the wrong kind. */
export function valueAt(item: Item, path: Path): AttributeValue | undefined {
  let current: AttributeValue | undefined = item[path[0] as string];
  for (let i = 1; i < path.length && current !== undefined; i++) {
    const step = path[i]!;
    if (typeof step === 'number') current = 'L' in current ? current.L[step] : undefined;
    else current = 'M' in current ? current.M[step] : undefined;
  }
  return current;
}

function sizeOf(value: AttributeValue | undefined): AttributeValue | undefined {
  if (value === undefined) return undefined;
  const type = typeOf(value);
  const payload = payloadOf(value);
  let size: number;
  if (type === 'S') size = [...(payload as string)].length;
  else if (type === 'B') size = Buffer.byteLength(payload as string, 'base64');
  else if (type === 'SS' || type === 'NS' || type === 'BS' || type === 'L') size = (payload as unknown[]).length;
  else if (type === 'M') size = Object.keys(payload as Item).length;
  else return undefined;
  return { N: String(size) };
}

function operandValue(operand: BoundOperand, item: Item): AttributeValue | undefined {
  switch (operand.kind) {
    case 'value':
      return operand.value;
    case 'path':
      return valueAt(item, operand.path);
    case 'size':
      return sizeOf(valueAt(item, operand.path));
    default:
      return undefined;
  }
}

function compareOrdered(a: AttributeValue | undefined, b: AttributeValue | undefined): number | undefined {
  if (a === undefined || b === undefined) return undefined;
  const type = typeOf(a);
  if (type !== typeOf(b) || !SCALAR.has(type)) return undefined;
  return compareScalars(type as 'S', payloadOf(a) as string, payloadOf(b) as string);
}

/** Whether the condition holds on `item` (an empty item when none exists). */
export function evaluate(condition: BoundCondition, item: Item): boolean {
  switch (condition.kind) {
    case 'and':
      return evaluate(condition.left, item) && evaluate(condition.right, item);
    case 'or':
      return evaluate(condition.left, item) || evaluate(condition.right, item);
    case 'not':
      return !evaluate(condition.operand, item);
    case 'compare': {
      const left = operandValue(condition.left, item);
      const right = operandValue(condition.right, item);
      switch (condition.op) {
        case '=':
          return valuesEqual(left, right);
        case '<>':
          // A missing attribute is "not equal" to any value, as in DynamoDB.
          return !(left === undefined && right === undefined) && !valuesEqual(left, right);
        default: {
          const order = compareOrdered(left, right);
          if (order === undefined) return false;
          return condition.op === '<' ? order < 0 : condition.op === '<=' ? order <= 0 : condition.op === '>' ? order > 0 : order >= 0;
        }
      }
    }
    case 'between': {
      const value = operandValue(condition.operand, item);
      const low = compareOrdered(value, operandValue(condition.low, item));
      const high = compareOrdered(value, operandValue(condition.high, item));
      return low !== undefined && high !== undefined && low >= 0 && high <= 0;
    }
    case 'in': {
      const value = operandValue(condition.operand, item);
      return value !== undefined && condition.list.some((o) => valuesEqual(value, operandValue(o, item)));
    }
    case 'function': {
      const [first, second] = condition.args;
      const value = operandValue(first!, item);
      switch (condition.name) {
        case 'attribute_exists':
          return value !== undefined;
        case 'attribute_not_exists':
          return value === undefined;
        case 'attribute_type':
          return value !== undefined && typeOf(value) === (operandValue(second!, item) as { S: string }).S;
        case 'begins_with': {
          const prefix = operandValue(second!, item);
          if (value === undefined || prefix === undefined || typeOf(value) !== typeOf(prefix)) return false;
          if (typeOf(value) === 'S') return (value as { S: string }).S.startsWith((prefix as { S: string }).S);
          if (typeOf(value) === 'B')
            return Buffer.from((value as { B: string }).B, 'base64')
              .subarray(0, Buffer.byteLength((prefix as { B: string }).B, 'base64'))
              .equals(Buffer.from((prefix as { B: string }).B, 'base64'));
          return false;
        }
        case 'contains':
          return contains(value, operandValue(second!, item));
      }
    }
  }
}

function contains(container: AttributeValue | undefined, member: AttributeValue | undefined): boolean {
  if (container === undefined || member === undefined) return false;
  const type = typeOf(container);
  const memberType = typeOf(member);
  if (type === 'S') return memberType === 'S' && (container as { S: string }).S.includes((member as { S: string }).S);
  if (type === 'B')
    return memberType === 'B' && Buffer.from((container as { B: string }).B, 'base64').includes(Buffer.from((member as { B: string }).B, 'base64'));
  if (type === 'SS' || type === 'NS' || type === 'BS') {
    if (memberType !== type.slice(0, 1)) return false;
    return (payloadOf(container) as string[]).some((m) => valuesEqual({ [memberType]: m } as AttributeValue, member));
  }
  if (type === 'L') return (container as { L: AttributeValue[] }).L.some((v) => valuesEqual(v, member));
  return false;
}

// ---- Updates ---------------------------------------------------------------------------------------

const INCORRECT_TYPE = 'An operand in the update expression has an incorrect data type';

function resolveSetValue(operand: BoundOperand, original: Item): AttributeValue {
  switch (operand.kind) {
    case 'value':
      return operand.value;
    case 'path': {
      const value = valueAt(original, operand.path);
      if (value === undefined) throw new ValidationError('The provided expression refers to an attribute that does not exist in the item');
      return value;
    }
    case 'if_not_exists':
      return valueAt(original, operand.path) ?? resolveSetValue(operand.fallback, original);
    case 'list_append': {
      const first = resolveSetValue(operand.first, original);
      const second = resolveSetValue(operand.second, original);
      if (!('L' in first) || !('L' in second)) throw new ValidationError(INCORRECT_TYPE);
      return { L: [...first.L, ...second.L] };
    }
    case 'arithmetic': {
      const left = resolveSetValue(operand.left, original);
      const right = resolveSetValue(operand.right, original);
      if (!('N' in left) || !('N' in right)) throw new ValidationError(INCORRECT_TYPE);
      return { N: addNumbers(left.N, right.N, operand.op === '-') };
    }
    case 'size':
      throw new ValidationError('The function is not allowed in an update expression; function: size');
  }
}

/** The container a path's last step lives in (the item, a map or a list), made writable along the way; undefined if a step is missing. */
function writableParent(item: Item, path: Path): { map: Item } | { list: AttributeValue[] } | undefined {
  if (path.length === 1) return { map: item };
  let container: { map: Item } | { list: AttributeValue[] } = { map: item };
  for (let i = 0; i < path.length - 1; i++) {
    const step = path[i]!;
    let child: AttributeValue | undefined;
    if ('map' in container) {
      if (typeof step !== 'string') return undefined;
      child = container.map[step];
    } else {
      if (typeof step !== 'number') return undefined;
      child = container.list[step];
    }
    if (child === undefined) return undefined;
    // Copy on write: stored values are shared with earlier readers.
    let copy: AttributeValue;
    if ('M' in child) copy = { M: { ...child.M } };
    else if ('L' in child) copy = { L: [...child.L] };
    else return undefined;
    if ('map' in container) container.map[step as string] = copy;
    else container.list[step as number] = copy;
    container = 'M' in copy ? { map: copy.M } : { list: (copy as { L: AttributeValue[] }).L };
  }
  const last = path[path.length - 1]!;
  if ('map' in container && typeof last !== 'string') return undefined;
  if ('list' in container && typeof last !== 'number') return undefined;
  return container;
}

const INVALID_PATH = 'The document path provided in the update expression is invalid for update';

/**
 * Applies bound update actions to a copy of `original` (the empty item with the key when there is
 * none) and returns the new item. Every operand is read from the original item, as DynamoDB reads them.
 */
export function applyUpdate(original: Item, actions: BoundUpdateAction[]): Item {
  const item: Item = { ...original };
  const values = actions.map((a) => (a.kind === 'SET' ? resolveSetValue(a.value, original) : undefined));
  // List removals shift later elements: remove the highest indices first, so each index names the original element.
  const order = actions
    .map((_, i) => i)
    .sort((i, j) => {
      const a = actions[i]!;
      const b = actions[j]!;
      if (a.kind === 'REMOVE' && b.kind === 'REMOVE' && typeof a.path[a.path.length - 1] === 'number' && typeof b.path[b.path.length - 1] === 'number') {
        return (b.path[b.path.length - 1] as number) - (a.path[a.path.length - 1] as number);
      }
      return 0;
    });
  for (const i of order) {
    const action = actions[i]!;
    const parent = writableParent(item, action.path);
    const last = action.path[action.path.length - 1]!;
    if (action.kind === 'REMOVE') {
      if (!parent) continue;
      if ('map' in parent) delete parent.map[last as string];
      else if ((last as number) < parent.list.length) parent.list.splice(last as number, 1);
      continue;
    }
    if (!parent) throw new ValidationError(INVALID_PATH);
    const existing = 'map' in parent ? parent.map[last as string] : parent.list[last as number];
    let next: AttributeValue | undefined;
    if (action.kind === 'SET') {
      next = values[i]!;
    } else if (action.kind === 'ADD') {
      const type = typeOf(action.value);
      if (existing === undefined) next = action.value;
      else if (typeOf(existing) !== type) throw new ValidationError(INCORRECT_TYPE);
      else if (type === 'N') next = { N: addNumbers((existing as { N: string }).N, (action.value as { N: string }).N) };
      else next = { [type]: union(type, payloadOf(existing) as string[], payloadOf(action.value) as string[]) } as AttributeValue;
    } else {
      if (existing === undefined) continue;
      const type = typeOf(action.value);
      if (typeOf(existing) !== type) throw new ValidationError(INCORRECT_TYPE);
      const remaining = difference(type, payloadOf(existing) as string[], payloadOf(action.value) as string[]);
      next = remaining.length > 0 ? ({ [type]: remaining } as AttributeValue) : undefined;
    }
    if ('map' in parent) {
      if (next === undefined) delete parent.map[last as string];
      else parent.map[last as string] = next;
    } else if (next === undefined) {
      parent.list.splice(last as number, 1);
    } else if ((last as number) >= parent.list.length) {
      // Past the end: appended, as DynamoDB does.
      parent.list.push(next);
    } else {
      parent.list[last as number] = next;
    }
  }
  return item;
}

function sameMember(type: AttributeType, a: string, b: string): boolean {
  return type === 'NS' ? compareScalars('N', a, b) === 0 : a === b;
}

function union(type: AttributeType, existing: string[], added: string[]): string[] {
  return [...existing, ...added.filter((m) => !existing.some((e) => sameMember(type, e, m)))];
}

function difference(type: AttributeType, existing: string[], removed: string[]): string[] {
  return existing.filter((e) => !removed.some((m) => sameMember(type, e, m)));
}

/** The attributes at these paths only, nested as in the item (ProjectionExpression, UPDATED_OLD/NEW). */
export function project(item: Item, paths: readonly Path[]): Item {
  const out: Item = {};
  for (const path of paths) {
    const value = valueAt(item, path);
    if (value === undefined) continue;
    if (path.length === 1) {
      out[path[0] as string] = value;
      continue;
    }
    // Rebuild the containers down to the value; list elements keep their order, gaps closed.
    let target: { M: Item } | { L: AttributeValue[] } = { M: out };
    for (let i = 0; i < path.length - 1; i++) {
      const step = path[i]!;
      const nextIsIndex = typeof path[i + 1] === 'number';
      const container: { M: Item } | { L: (AttributeValue & { __index?: number })[] } = target;
      let child: AttributeValue | undefined;
      if ('M' in container) {
        child = container.M[step as string];
        if (!child) {
          child = nextIsIndex ? { L: [] } : { M: {} };
          container.M[step as string] = child;
        }
      } else {
        child = listSlot(container.L, step as number, () => (nextIsIndex ? { L: [] } : { M: {} }));
      }
      target = child as { M: Item } | { L: AttributeValue[] };
    }
    const last = path[path.length - 1]!;
    if ('M' in target) target.M[last as string] = value;
    else listSlot(target.L, last as number, () => value);
  }
  return stripIndexes(out);
}

const INDEX = Symbol('index');
type Slotted = AttributeValue & { [INDEX]?: number };

/** The projected element standing for original index `index` in a projected list (kept in index order). */
function listSlot(list: Slotted[], index: number, make: () => AttributeValue): AttributeValue {
  const found = list.find((v) => v[INDEX] === index);
  if (found) return found;
  const value: Slotted = { ...make() };
  value[INDEX] = index;
  const at = list.findIndex((v) => (v[INDEX] ?? 0) > index);
  if (at === -1) list.push(value);
  else list.splice(at, 0, value);
  return value;
}

function stripIndexes(item: Item): Item {
  for (const name in item) item[name] = stripValue(item[name]!);
  return item;
}

function stripValue(value: AttributeValue): AttributeValue {
  if (INDEX in value) {
    const copy = { ...value } as Slotted;
    delete copy[INDEX];
    value = copy;
  }
  if ('M' in value) return { M: stripIndexes({ ...value.M }) };
  if ('L' in value) return { L: value.L.map(stripValue) };
  return value;
}
