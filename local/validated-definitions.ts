import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

/**
 * Workflow definitions the local engine's validator has accepted, remembered across processes.
 * Validating compiles the validator's JSON schemas at every call (about a second for the six
 * machines on a loaded host): every `rollout` command and every test file that starts an embedded
 * runtime paid it, for the same files each time. A definition's text is as valid the next time, so
 * a marker per text (its hash, with the engine's version) in the temporary directory stands for a
 * validation done; without a writable directory every process simply validates again.
 */
const memory = new Set<string>();
const directory = path.join(os.tmpdir(), 'baremetal-rollout-validated-asl');

let engineVersion: string | undefined;
function version(): string {
  if (engineVersion === undefined) {
    try {
      const require = createRequire(import.meta.url);
      engineVersion = (JSON.parse(readFileSync(require.resolve('aws-local-stepfunctions/package.json'), 'utf8')) as { version: string }).version;
    } catch {
      engineVersion = 'unknown';
    }
  }
  return engineVersion;
}

function markerOf(text: string): string {
  return createHash('sha256').update(`aws-local-stepfunctions@${version()}\n${text}`).digest('hex');
}

export function wasValidated(text: string): boolean {
  const marker = markerOf(text);
  if (memory.has(marker)) return true;
  if (!existsSync(path.join(directory, marker))) return false;
  memory.add(marker);
  return true;
}

export function markValidated(text: string): void {
  const marker = markerOf(text);
  memory.add(marker);
  try {
    mkdirSync(directory, { recursive: true });
    writeFileSync(path.join(directory, marker), '');
  } catch {
    // Not writable here: the next process validates again.
  }
}
