import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REFERENCE_DIR, generateReferences } from './references';

// `npm run docs:generate`: writes docs/reference/ from the code (test/docs/references.test.ts keeps them equal).
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const folder = path.join(root, REFERENCE_DIR);
const { files, undescribed, counts } = generateReferences();
await mkdir(folder, { recursive: true });
// A reference the script no longer makes is removed, so that none lingers stale.
for (const name of await readdir(folder)) if (!files.has(name)) await rm(path.join(folder, name));
for (const [name, text] of files) await writeFile(path.join(folder, name), text);
process.stdout.write(
  `wrote ${REFERENCE_DIR}/: ${counts.commands} commands, ${counts.options} options, ${counts.requestFields} request fields, ${counts.siteFields} site file and profile keys, ${counts.routes} routes\n`,
);
if (undescribed.length > 0)
  process.stderr.write(`${undescribed.length} without a description (give them one in the code):\n${undescribed.map((where) => `  ${where}`).join('\n')}\n`);
