import { writeFile } from 'node:fs/promises';
import { DETAIL_TYPES, schemaFileOf, statusEventJsonSchema } from '../core/events/status-events';

// Writes schemas/events/*.schema.json from the zod schemas (test/core/events/status-events.test.ts keeps them equal).
for (const detailType of Object.values(DETAIL_TYPES)) {
  await writeFile(new URL(`../schemas/events/${schemaFileOf(detailType)}`, import.meta.url), `${JSON.stringify(statusEventJsonSchema(detailType), null, 2)}\n`);
}
