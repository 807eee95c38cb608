import { code, table } from './markdown';

/**
 * JSON Schema (as z.toJSONSchema and zod-to-openapi write it) as markdown tables: one table per
 * object, each row a field with its type, whether it is required, its default, its constraints and
 * its description. A field whose value is an object (or a list or map of objects, or a union of
 * object forms) points to that object's own table.
 */
export type JsonSchema = Record<string, unknown>;

export interface SchemaTable {
  /** The field path of the object (`healthCheck`, `maintenanceWindows[]`), or a named schema's name. */
  title: string;
  description?: string;
  rows: FieldRow[];
}

export interface FieldRow {
  field: string;
  type: string;
  required: boolean;
  defaultValue?: string;
  constraints: string;
  description: string;
}

/** Resolves `$ref`s (`#/$defs/X`, `#/components/schemas/X`) against the document they came from. */
export type Resolve = (ref: string) => JsonSchema;

export function resolverOf(root: JsonSchema): Resolve {
  return (ref) => {
    const found = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], root);
    if (found === undefined) throw new Error(`unresolved $ref ${ref}`);
    return found as JsonSchema;
  };
}

const refName = (ref: string) => ref.split('/').pop()!;

/**
 * The tables of `schema` (an object, or a union of object forms), titled from `title`. `named` are
 * the `$ref`s whose schema has a table of its own elsewhere in the document: a field of one links to
 * it by name instead of repeating it.
 */
export function schemaTables(schema: JsonSchema, title: string, resolve: Resolve, named: ReadonlySet<string> = new Set()): SchemaTable[] {
  const tables: SchemaTable[] = [];
  const queue: { title: string; schema: JsonSchema }[] = [{ title, schema }];
  const seenRefs = new Set<string>();
  // An object met again (one transport schema in five places) is tabled once; the later fields point to that table.
  const tabled = new Map<string, string>();
  while (queue.length > 0) {
    const next = queue.shift()!;
    for (const form of objectForms(next.schema, next.title, resolve, named)) {
      const required = new Set((form.schema.required as string[] | undefined) ?? []);
      const rows: FieldRow[] = [];
      for (const [name, property] of Object.entries((form.schema.properties as Record<string, JsonSchema> | undefined) ?? {})) {
        const path = form.title === '' ? name : `${form.title}.${name}`;
        const nested = nestedObjects(property, path, resolve, named, seenRefs);
        const earlier = nested.map((item) => tabled.get(shapeKey(item.schema))).find((title) => title !== undefined);
        for (const item of nested) if (!tabled.has(shapeKey(item.schema))) tabled.set(shapeKey(item.schema), item.title);
        if (earlier === undefined) queue.push(...nested);
        rows.push({
          field: name,
          type: `${typeText(property, resolve, named)}${earlier === undefined ? '' : `, as ${code(earlier)}`}`,
          required: required.has(name),
          ...(defaultOf(property, resolve) !== undefined ? { defaultValue: defaultOf(property, resolve) } : {}),
          constraints: constraintsOf(property, resolve),
          description: descriptionOf(property, resolve) ?? '',
        });
      }
      const values = mapValues(form.schema, resolve);
      if (rows.length === 0 && values) queue.push(...nestedObjects(values, `${form.title}.<name>`, resolve, named, seenRefs));
      else tables.push({ title: form.title, ...(form.description ? { description: form.description } : {}), rows });
    }
  }
  return tables;
}

/** A table as markdown: its heading, its description, its rows. */
export function tableMarkdown(found: SchemaTable, level: number, headingOf: (title: string) => string = (t) => code(t)): string {
  const heading = `${'#'.repeat(level)} ${headingOf(found.title)}`;
  const rows = found.rows.map((row) => [code(row.field), row.type, row.required ? 'yes' : 'no', row.defaultValue ?? '', row.constraints, row.description]);
  return [heading, ...(found.description ? [found.description] : []), table(['Field', 'Type', 'Required', 'Default', 'Constraints', 'Description'], rows)].join(
    '\n\n',
  );
}

/** The fields of `tables` with no description, as `title.field`. */
export function undescribedFields(tables: readonly SchemaTable[]): string[] {
  return tables.flatMap((found) =>
    found.rows.filter((row) => row.description.trim() === '').map((row) => (found.title ? `${found.title}.${row.field}` : row.field)),
  );
}

/** What makes two objects the same table: their fields, not what each place that holds one says of it. */
function shapeKey(schema: JsonSchema): string {
  const { description: _description, default: _default, ...shape } = schema;
  return JSON.stringify(shape);
}

function deref(schema: JsonSchema, resolve: Resolve): JsonSchema {
  return typeof schema.$ref === 'string' ? { ...resolve(schema.$ref), ...withoutRef(schema) } : schema;
}

function withoutRef(schema: JsonSchema): JsonSchema {
  const { $ref: _ref, ...rest } = schema;
  return rest;
}

function branches(schema: JsonSchema): JsonSchema[] | undefined {
  return (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
}

function isObjectWithFields(schema: JsonSchema): boolean {
  return schema.type === 'object' && schema.properties !== undefined;
}

function mapValues(schema: JsonSchema, resolve: Resolve): JsonSchema | undefined {
  if (schema.type !== 'object' || schema.properties !== undefined) return undefined;
  const values = schema.additionalProperties;
  return typeof values === 'object' && values !== null ? deref(values as JsonSchema, resolve) : undefined;
}

/** The object forms of a schema: itself, or each object branch of a union (titled by its `type` constant, if it has one). */
function objectForms(
  schema: JsonSchema,
  title: string,
  resolve: Resolve,
  named: ReadonlySet<string>,
): { title: string; description?: string; schema: JsonSchema }[] {
  const whole = deref(schema, resolve);
  const description = typeof whole.description === 'string' ? whole.description : undefined;
  if (isObjectWithFields(whole)) return [{ title, ...(description ? { description } : {}), schema: whole }];
  if (mapValues(whole, resolve)) return [{ title, schema: whole }];
  // A form that is a named schema has its own table.
  const own = (branches(whole) ?? []).filter((branch) => typeof branch.$ref !== 'string' || !named.has(refName(branch.$ref)));
  const forms = own.map((branch) => deref(branch, resolve)).filter(isObjectWithFields);
  return forms.map((form, index) => {
    const tag = Object.entries((form.properties as Record<string, JsonSchema>) ?? {}).find(([, value]) => value.const !== undefined);
    const base = title === '' ? '' : `${title} `;
    const formTitle = forms.length === 1 ? title : tag ? `${base}(${tag[0]}: ${String(tag[1].const)})` : `${base}(form ${index + 1})`;
    const formDescription = typeof form.description === 'string' ? form.description : index === 0 ? description : undefined;
    return { title: formTitle, ...(formDescription ? { description: formDescription } : {}), schema: form };
  });
}

/** The objects a field holds (itself, its list's items, its map's values, its union's forms), each to get a table. */
function nestedObjects(
  property: JsonSchema,
  path: string,
  resolve: Resolve,
  named: ReadonlySet<string>,
  seenRefs: Set<string>,
): { title: string; schema: JsonSchema }[] {
  if (typeof property.$ref === 'string') {
    const name = refName(property.$ref);
    if (named.has(name)) return [];
    if (seenRefs.has(property.$ref)) return [];
    seenRefs.add(property.$ref);
  }
  const schema = deref(property, resolve);
  if (isObjectWithFields(schema)) return [{ title: path, schema }];
  if (schema.type === 'array' && typeof schema.items === 'object') return nestedObjects(schema.items as JsonSchema, `${path}[]`, resolve, named, seenRefs);
  const values = mapValues(schema, resolve);
  if (values) return nestedObjects(values, `${path}.<name>`, resolve, named, seenRefs);
  const forms = branches(schema);
  if (!forms) return [];
  const objects = forms.map((form) => deref(form, resolve)).filter(isObjectWithFields);
  if (objects.length === 0) {
    // A union of lists or maps of objects (a list of objects, or one): the objects get their table.
    return forms.flatMap((form) =>
      deref(form, resolve).type === 'array' || mapValues(deref(form, resolve), resolve) ? nestedObjects(form, path, resolve, named, seenRefs) : [],
    );
  }
  return [{ title: path, schema: { ...schema, oneOf: forms.filter((form) => isObjectWithFields(deref(form, resolve))) } }];
}

/** A field's type in words: `string`, `integer`, `"lockstep"`, `list of string`, `map of string`, `A or B`, a named schema. */
export function typeText(property: JsonSchema, resolve: Resolve, named: ReadonlySet<string> = new Set()): string {
  if (typeof property.$ref === 'string') {
    const name = refName(property.$ref);
    if (named.has(name)) return name;
    return typeText(deref(property, resolve), resolve, named);
  }
  if (property.const !== undefined) return JSON.stringify(property.const);
  const forms = branches(property);
  if (forms) return [...new Set(forms.map((form) => typeText(form, resolve, named)))].join(' or ');
  if (Array.isArray(property.type)) return property.type.join(' or ');
  if (property.type === 'array') {
    const items = property.items as JsonSchema | undefined;
    return `list of ${items ? typeText(items, resolve, named) : 'any'}`;
  }
  if (property.type === 'object') {
    if (property.properties) return 'object';
    const values = property.additionalProperties;
    return typeof values === 'object' && values !== null ? `map of ${typeText(values as JsonSchema, resolve, named)}` : 'object';
  }
  if (typeof property.type === 'string') return property.type;
  return 'any';
}

function defaultOf(property: JsonSchema, resolve: Resolve): string | undefined {
  const schema = deref(property, resolve);
  return schema.default === undefined ? undefined : code(JSON.stringify(schema.default));
}

function descriptionOf(property: JsonSchema, resolve: Resolve): string | undefined {
  if (typeof property.description === 'string') return property.description;
  const schema = deref(property, resolve);
  if (typeof schema.description === 'string') return schema.description;
  // A union whose forms each say what they are.
  const forms = branches(schema)
    ?.map((form) => deref(form, resolve).description)
    .filter((text): text is string => typeof text === 'string');
  return forms && forms.length > 0 && forms.length === branches(schema)!.length ? forms.join('; or ') : undefined;
}

/** Bounds, lengths, patterns and allowed values, as one short text. */
export function constraintsOf(property: JsonSchema, resolve: Resolve): string {
  const schema = deref(property, resolve);
  const parts: string[] = [];
  const say = (key: string, text: (value: unknown) => string) => {
    if (schema[key] !== undefined) parts.push(text(schema[key]));
  };
  say('enum', (values) => `one of ${(values as unknown[]).map((value) => code(String(value))).join(', ')}`);
  // A whole number's own bounds (zod's int is a safe integer) say nothing.
  if (schema.minimum !== -Number.MAX_SAFE_INTEGER) say('minimum', (value) => `>= ${String(value)}`);
  say('exclusiveMinimum', (value) => `> ${String(value)}`);
  if (schema.maximum !== Number.MAX_SAFE_INTEGER) say('maximum', (value) => `<= ${String(value)}`);
  say('exclusiveMaximum', (value) => `< ${String(value)}`);
  say('minLength', (value) => (value === 1 ? 'not empty' : `at least ${String(value)} characters`));
  say('maxLength', (value) => `at most ${String(value)} characters`);
  say('minItems', (value) => (value === 1 ? 'not empty' : `at least ${String(value)} items`));
  say('maxItems', (value) => `at most ${String(value)} items`);
  say('pattern', (value) => `matches ${code(String(value))}`);
  say('format', (value) => `format ${String(value)}`);
  if (schema.type === 'array' && typeof schema.items === 'object') {
    const items = constraintsOf(schema.items as JsonSchema, resolve);
    if (items) parts.push(`each: ${items}`);
  }
  const forms = branches(schema);
  if (forms) {
    const each = forms.map((form) => constraintsOf(form, resolve)).filter((text) => text !== '');
    if (each.length > 0) parts.push(each.join('; '));
  }
  return parts.join(', ');
}
