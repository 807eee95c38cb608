import { ValidationError } from './errors';

import type { AttributeType, AttributeValue, Item } from './attribute-types';

export type { AttributeType, AttributeValue, Item } from './attribute-types';

const TYPES: ReadonlySet<string> = new Set(['S', 'N', 'B', 'BOOL', 'NULL', 'SS', 'NS', 'BS', 'L', 'M']);
const EMPTY_SET: Record<string, string> = {
  SS: 'An string set  may not be empty',
  NS: 'An number set  may not be empty',
  BS: 'Binary sets should not be empty',
};

/** The type key of a value the store holds (validated on the way in, so exactly one). */
export function typeOf(value: AttributeValue): AttributeType {
  for (const key in value) return key as AttributeType;
  throw new Error('empty AttributeValue');
}

/** The payload of a value, whatever its type. */
export function payloadOf(value: AttributeValue): unknown {
  for (const key in value) return (value as Record<string, unknown>)[key];
  return undefined;
}

// ---- Numbers ---------------------------------------------------------------------------------
// DynamoDB numbers: up to 38 significant digits, magnitudes from 1E-130 to below 1E+126, kept
// without leading or trailing zeros. A number is held here as its canonical decimal string.

const NUMBER = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;
const SAFE_INTEGER = /^-?(?:0|[1-9]\d{0,14})$/;

interface Decimal {
  negative: boolean;
  /** Significant digits, without leading or trailing zeros ('' for zero). */
  digits: string;
  /** value = digits × 10^scale */
  scale: number;
}

function parseDecimal(text: string): Decimal {
  const match = NUMBER.exec(text);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) throw new ValidationError(`The parameter cannot be converted to a numeric value: ${text}`);
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  let digits = whole + fraction;
  let scale = Number(exponent) - fraction.length;
  const leading = /^0*/.exec(digits)![0].length;
  digits = digits.slice(leading);
  const trailing = /0*$/.exec(digits)![0].length;
  if (trailing > 0) {
    digits = digits.slice(0, digits.length - trailing);
    scale += trailing;
  }
  if (digits === '') return { negative: false, digits: '', scale: 0 };
  return { negative: sign === '-', digits, scale };
}

function checkRange(d: Decimal): void {
  if (d.digits === '') return;
  if (d.digits.length > 38) throw new ValidationError('Attempting to store more than 38 significant digits in a Number');
  // Position of the most significant digit: 10^(magnitude - 1) <= |value| < 10^magnitude.
  const magnitude = d.digits.length + d.scale;
  if (magnitude > 126) throw new ValidationError('Number overflow. Attempting to store a number with magnitude larger than supported range');
  if (magnitude < -129) throw new ValidationError('Number underflow. Attempting to store a number with magnitude smaller than supported range');
}

function formatDecimal(d: Decimal): string {
  if (d.digits === '') return '0';
  const sign = d.negative ? '-' : '';
  if (d.scale >= 0) return sign + d.digits + '0'.repeat(d.scale);
  const point = d.digits.length + d.scale;
  if (point > 0) return `${sign}${d.digits.slice(0, point)}.${d.digits.slice(point)}`;
  return `${sign}0.${'0'.repeat(-point)}${d.digits}`;
}

/** The canonical form DynamoDB stores and returns ("1.50" -> "1.5", "1E+3" -> "1000", "-0" -> "0"); refuses what it refuses. */
export function canonicalNumber(text: string): string {
  if (SAFE_INTEGER.test(text)) return text === '-0' ? '0' : text;
  const d = parseDecimal(text);
  checkRange(d);
  return formatDecimal(d);
}

function toBigInt(d: Decimal, scale: number): bigint {
  const magnitude = BigInt(d.digits === '' ? '0' : d.digits) * 10n ** BigInt(d.scale - scale);
  return d.negative ? -magnitude : magnitude;
}

/** Compares two canonical numbers: negative, zero or positive. */
export function compareNumbers(a: string, b: string): number {
  if (SAFE_INTEGER.test(a) && SAFE_INTEGER.test(b)) return Number(a) - Number(b);
  const x = parseDecimal(a);
  const y = parseDecimal(b);
  const scale = Math.min(x.scale, y.scale);
  const diff = toBigInt(x, scale) - toBigInt(y, scale);
  return diff < 0n ? -1 : diff > 0n ? 1 : 0;
}

/** a + b (or a - b), exactly, in canonical form; refused past DynamoDB's range as DynamoDB refuses it. */
export function addNumbers(a: string, b: string, subtract = false): string {
  if (SAFE_INTEGER.test(a) && SAFE_INTEGER.test(b)) {
    const sum = subtract ? Number(a) - Number(b) : Number(a) + Number(b);
    if (Number.isSafeInteger(sum)) return String(sum === 0 ? 0 : sum);
  }
  const x = parseDecimal(a);
  const y = parseDecimal(b);
  const scale = Math.min(x.scale, y.scale);
  const sum = toBigInt(x, scale) + (subtract ? -toBigInt(y, scale) : toBigInt(y, scale));
  const text = sum < 0n ? (-sum).toString() : sum.toString();
  const d = parseDecimal(`${sum < 0n ? '-' : ''}${text}e${scale}`);
  checkRange(d);
  return formatDecimal(d);
}

// ---- Strings and binaries ----------------------------------------------------------------------

/** DynamoDB orders strings by their UTF-8 bytes, i.e. by code point; JavaScript's `<` compares UTF-16 units. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Below the surrogates UTF-16 order is code point order; a surrogate pair stands for a code point above every BMP unit.
    if (x < 0xd800 && y < 0xd800) return x - y;
    return (a.codePointAt(i) ?? x) - (b.codePointAt(i) ?? y);
  }
  return a.length - b.length;
}

export function compareBinaries(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'base64'), Buffer.from(b, 'base64'));
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Orders two scalar values of one type (S, N or B), as keys and comparisons order them. */
export function compareScalars(type: 'S' | 'N' | 'B', a: string, b: string): number {
  return type === 'S' ? compareStrings(a, b) : type === 'N' ? compareNumbers(a, b) : compareBinaries(a, b);
}

// ---- Validation and normalisation --------------------------------------------------------------

/**
 * Checks a value as DynamoDB checks it on the way in and returns its canonical copy (numbers
 * canonical, sets without order significance checked for duplicates and emptiness).
 */
export function normalizeValue(value: unknown, where = ''): AttributeValue {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ValidationError(`Supplied AttributeValue is empty, must contain exactly one of the supported datatypes${where}`);
  const keys = Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] !== undefined && (value as Record<string, unknown>)[k] !== null);
  if (keys.length === 0) throw new ValidationError(`Supplied AttributeValue is empty, must contain exactly one of the supported datatypes${where}`);
  if (keys.length > 1)
    throw new ValidationError(`Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes${where}`);
  const type = keys[0]!;
  const payload = (value as Record<string, unknown>)[type];
  if (!TYPES.has(type)) throw new ValidationError(`Supplied AttributeValue is empty, must contain exactly one of the supported datatypes${where}`);
  switch (type) {
    case 'S':
      if (typeof payload !== 'string') throw new ValidationError(`Supplied AttributeValue has a string type that is not a string${where}`);
      return { S: payload };
    case 'N':
      if (typeof payload !== 'string') throw new ValidationError(`The parameter cannot be converted to a numeric value${where}`);
      return { N: canonicalNumber(payload) };
    case 'B':
      return { B: base64Of(payload) };
    case 'BOOL':
      if (typeof payload !== 'boolean') throw new ValidationError(`Supplied AttributeValue has a BOOL type that is not a boolean${where}`);
      return { BOOL: payload };
    case 'NULL':
      if (payload !== true)
        throw new ValidationError(`One or more parameter values were invalid: Null attribute value types must have the value of true${where}`);
      return { NULL: true };
    case 'SS':
    case 'NS':
    case 'BS': {
      // AWS's own wording, double space included.
      if (!Array.isArray(payload) || payload.length === 0) throw new ValidationError(`One or more parameter values were invalid: ${EMPTY_SET[type]}${where}`);
      const members = payload.map((m) => (type === 'SS' ? stringMember(m) : type === 'NS' ? canonicalNumber(numberMember(m)) : base64Of(m)));
      if (new Set(members).size !== members.length)
        throw new ValidationError(`One or more parameter values were invalid: Input collection [${members.join(', ')}] contains duplicates.`);
      return { [type]: members } as AttributeValue;
    }
    case 'L':
      if (!Array.isArray(payload)) throw new ValidationError(`Supplied AttributeValue has a list type that is not a list${where}`);
      return { L: payload.map((v) => normalizeValue(v, where)) };
    default: {
      if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
        throw new ValidationError(`Supplied AttributeValue has a map type that is not a map${where}`);
      return { M: normalizeItem(payload as Record<string, unknown>, where) };
    }
  }
}

function stringMember(m: unknown): string {
  if (typeof m !== 'string') throw new ValidationError('Supplied AttributeValue has a string set member that is not a string');
  return m;
}

function numberMember(m: unknown): string {
  if (typeof m !== 'string') throw new ValidationError('The parameter cannot be converted to a numeric value');
  return m;
}

/** A binary as DynamoDB's JSON carries it: base64 text (an in-process caller may hand bytes). */
function base64Of(payload: unknown): string {
  if (payload instanceof Uint8Array) return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('base64');
  if (typeof payload !== 'string' || !BASE64.test(payload)) throw new ValidationError('Invalid Binary value: not base64');
  return payload;
}

/** Every attribute of an item (or a map) normalised; attribute names must not be empty. */
export function normalizeItem(item: Record<string, unknown>, where = ''): Item {
  const out: Item = {};
  for (const name of Object.keys(item)) {
    if (item[name] === undefined) continue;
    if (name === '') throw new ValidationError('One or more parameter values were invalid: An AttributeValue may not contain an empty attribute name');
    out[name] = normalizeValue(item[name], where);
  }
  return out;
}

// ---- Equality and sizes ------------------------------------------------------------------------

/** DynamoDB equality: same type and value; sets compare as sets; numbers by value. */
export function valuesEqual(a: AttributeValue | undefined, b: AttributeValue | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  const type = typeOf(a);
  if (type !== typeOf(b)) return false;
  const x = payloadOf(a);
  const y = payloadOf(b);
  switch (type) {
    case 'S':
    case 'B':
    case 'BOOL':
    case 'NULL':
      return x === y;
    case 'N':
      return x === y || compareNumbers(x as string, y as string) === 0;
    case 'SS':
    case 'BS':
    case 'NS': {
      const xs = x as string[];
      const ys = y as string[];
      if (xs.length !== ys.length) return false;
      if (type === 'NS') return xs.every((m) => ys.some((n) => compareNumbers(m, n) === 0));
      const set = new Set(ys);
      return xs.every((m) => set.has(m));
    }
    case 'L': {
      const xs = x as AttributeValue[];
      const ys = y as AttributeValue[];
      return xs.length === ys.length && xs.every((v, i) => valuesEqual(v, ys[i]));
    }
    default: {
      const xm = x as Item;
      const ym = y as Item;
      const keys = Object.keys(xm);
      return keys.length === Object.keys(ym).length && keys.every((k) => valuesEqual(xm[k], ym[k]));
    }
  }
}

/** Bytes of a value as DynamoDB counts them toward the 400 KB item limit (numbers approximately, as AWS documents). */
export function valueSize(value: AttributeValue): number {
  const type = typeOf(value);
  const payload = payloadOf(value);
  switch (type) {
    case 'S':
      return Buffer.byteLength(payload as string);
    case 'B':
      return Buffer.byteLength(payload as string, 'base64');
    case 'N':
      return numberSize(payload as string);
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'SS':
      return (payload as string[]).reduce((sum, s) => sum + Buffer.byteLength(s), 0);
    case 'BS':
      return (payload as string[]).reduce((sum, s) => sum + Buffer.byteLength(s, 'base64'), 0);
    case 'NS':
      return (payload as string[]).reduce((sum, s) => sum + numberSize(s), 0);
    case 'L':
      return 3 + (payload as AttributeValue[]).reduce((sum, v) => sum + 1 + valueSize(v), 0);
    default:
      return 3 + itemSize(payload as Item) + Object.keys(payload as Item).length;
  }
}

function numberSize(text: string): number {
  const digits = text.replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '').length;
  return digits === 0 ? 1 : 1 + Math.ceil(digits / 2) + (text.startsWith('-') ? 1 : 0);
}

/** An item's size: each attribute's name (UTF-8 bytes) plus its value. */
export function itemSize(item: Item): number {
  let size = 0;
  for (const name in item) size += Buffer.byteLength(name) + valueSize(item[name]!);
  return size;
}

/** A deep copy: stored items are never shared with callers that might change them. */
export function cloneValue(value: AttributeValue): AttributeValue {
  const type = typeOf(value);
  switch (type) {
    case 'SS':
    case 'NS':
    case 'BS':
      return { [type]: [...(payloadOf(value) as string[])] } as AttributeValue;
    case 'L':
      return { L: (value as { L: AttributeValue[] }).L.map(cloneValue) };
    case 'M':
      return { M: cloneItem((value as { M: Item }).M) };
    default:
      return value;
  }
}

export function cloneItem(item: Item): Item {
  const out: Item = {};
  for (const name in item) out[name] = cloneValue(item[name]!);
  return out;
}
