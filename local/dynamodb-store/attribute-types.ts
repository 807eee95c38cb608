/**
 * DynamoDB's AttributeValue in its wire (JSON) form: exactly one type key; numbers as decimal
 * strings, binaries as base64 strings. The store keeps items in this form, whoever sent them.
 */
export type AttributeValue =
  | { S: string }
  | { N: string }
  | { B: string }
  | { BOOL: boolean }
  | { NULL: true }
  | { SS: string[] }
  | { NS: string[] }
  | { BS: string[] }
  | { L: AttributeValue[] }
  | { M: Item };

export type Item = Record<string, AttributeValue>;
export type AttributeType = 'S' | 'N' | 'B' | 'BOOL' | 'NULL' | 'SS' | 'NS' | 'BS' | 'L' | 'M';
