import { z } from 'zod';
import { resolverOf, schemaTables, tableMarkdown, undescribedFields, type JsonSchema } from './json-schema-tables';
import { code } from './markdown';

/** One object document of a reference (a request, a file): its heading, what it is, where it comes from, and its JSON Schema. */
export interface SchemaSection {
  heading: string;
  intro: string;
  /** The zod schema's name and file, said under the heading. */
  source: string;
  schema: JsonSchema;
}

/** JSON Schema of what a zod schema accepts (its input: fields with defaults are optional). */
export function inputJsonSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any' }) as JsonSchema;
}

/** A section as markdown (its tables one heading level below it) and the fields it leaves undescribed. */
export function schemaSection(section: SchemaSection): { markdown: string; undescribed: string[]; fields: number } {
  const resolve = resolverOf(section.schema);
  // A named part ($defs: a zod schema with an id) is one table, which the fields holding it name.
  const named = new Set(Object.keys((section.schema.$defs as Record<string, unknown> | undefined) ?? {}));
  const tables = [
    ...schemaTables(section.schema, '', resolve, named),
    ...[...named].sort().flatMap((name) => schemaTables({ $ref: `#/$defs/${name}` }, name, resolve, named)),
  ];
  const blocks = [`## ${section.heading}`, section.intro, `Defined by ${section.source}.`];
  for (const found of tables) blocks.push(tableMarkdown(found, 3, (title) => (title === '' ? `${section.heading}: top level` : code(title))));
  return {
    markdown: blocks.join('\n\n'),
    fields: tables.reduce((sum, found) => sum + found.rows.length, 0),
    undescribed: undescribedFields(tables).map((field) => `${section.heading}: ${field || '(top level)'}`),
  };
}
