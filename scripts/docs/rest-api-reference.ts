import { buildOpenApiDocument } from '../../api/openapi';
import { DETAIL_TYPES, EVENT_SOURCE, schemaFileOf, statusEventJsonSchema } from '../../core/events/status-events';
import { resolverOf, schemaTables, tableMarkdown, typeText, undescribedFields, type JsonSchema } from './json-schema-tables';
import { anchor, code, document, generatedNotice, table } from './markdown';

interface Operation {
  summary?: string;
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: JsonSchema }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: JsonSchema }> }>;
}

/**
 * docs/reference/rest-api.md: every route of the OpenAPI document (api/openapi.ts) with its request
 * and responses, the document's named schemas as tables, and the status events' details (core/events).
 */
export function restApiReference(): { markdown: string; undescribed: string[]; routes: number } {
  const openapi = buildOpenApiDocument() as unknown as JsonSchema & {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, JsonSchema> };
  };
  const resolve = resolverOf(openapi);
  const named = new Set(Object.keys(openapi.components.schemas));
  const schemaName = (schema: JsonSchema | undefined) => (schema ? typeText(schema, resolve, named) : '');
  const link = (text: string) => text.replace(/\b[A-Z][A-Za-z]+\b/g, (name) => (named.has(name) ? `[${name}](#${anchor(name)})` : name));

  const routes: string[][] = [];
  const details: string[] = [];
  const undescribed: string[] = [];
  for (const [route, operations] of Object.entries(openapi.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const title = `${method.toUpperCase()} ${route}`;
      const body = Object.values(operation.requestBody?.content ?? {})[0]?.schema;
      routes.push([`[${code(title)}](#${anchor(title)})`, operation.summary ?? '']);
      if (!operation.summary?.trim()) undescribed.push(`${title} (summary)`);
      const blocks = [`### ${title}`, operation.summary ?? ''];
      const parameters = operation.parameters ?? [];
      if (parameters.length > 0) {
        blocks.push(
          table(
            ['Parameter', 'In', 'Description', 'Constraints'],
            parameters.map((p) => [code(p.name), p.in, p.description ?? '', p.schema?.pattern ? `matches ${code(String(p.schema.pattern))}` : '']),
          ),
        );
      }
      if (body) blocks.push(`Request body (${code('application/json')}): ${link(schemaName(body))}`);
      const responses = Object.entries(operation.responses ?? {}).sort(([a], [b]) => Number(a) - Number(b));
      blocks.push(
        table(
          ['Status', 'Description', 'Body'],
          responses.map(([status, response]) => {
            const [type, content] = Object.entries(response.content ?? {})[0] ?? [];
            return [code(status), response.description ?? '', content?.schema ? `${link(schemaName(content.schema))} (${code(type!)})` : ''];
          }),
        ),
      );
      details.push(blocks.join('\n\n'));
    }
  }

  const schemas = Object.keys(openapi.components.schemas).sort();
  const schemaBlocks: string[] = [];
  for (const name of schemas) {
    const tables = schemaTables({ $ref: `#/components/schemas/${name}` }, name, resolve, named);
    undescribed.push(...undescribedFields(tables).map((field) => `schema ${field}`));
    schemaBlocks.push(...tables.map((found) => tableMarkdown(found, 3, (title) => title)));
  }

  const eventBlocks: string[] = [];
  for (const detailType of Object.values(DETAIL_TYPES)) {
    const schema = statusEventJsonSchema(detailType) as JsonSchema;
    const tables = schemaTables(schema, '', resolverOf(schema));
    undescribed.push(...undescribedFields(tables).map((field) => `event ${detailType}: ${field}`));
    eventBlocks.push(
      [
        `### ${detailType}`,
        `JSON Schema: schemas/events/${schemaFileOf(detailType)}`,
        ...tables.map((found) => tableMarkdown(found, 4, (title) => (title === '' ? 'detail' : code(`detail.${title}`)))),
      ].join('\n\n'),
    );
  }

  const markdown = document([
    generatedNotice('the OpenAPI document (api/openapi.ts, the zod schemas the handlers validate with) and the status events (core/events/status-events.ts)'),
    '# REST API reference',
    `The routes \`rollout serve\` and the stack's API Gateway answer, as the OpenAPI 3.1 document (\`GET /openapi.json\`) describes them. Errors are RFC 9457 problems (${code('application/problem+json')}): see [Problem](#problem).`,
    '## Routes',
    table(['Route', 'Summary'], routes),
    ...details,
    '## Schemas',
    'The request and response bodies the routes name.',
    ...schemaBlocks,
    '## Status events',
    `What a run sends to EventBridge (source ${code(EVENT_SOURCE)}), one detail-type each; \`rollout events\` lists them.`,
    ...eventBlocks,
  ]);
  return { markdown, undescribed, routes: routes.length };
}
