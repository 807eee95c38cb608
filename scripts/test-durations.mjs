#!/usr/bin/env node
// Writes test/support/test-durations.json from a jest log on stdin (the lines `PASS <file> (<seconds> s)` jest prints
// for a file that took 5 s or more): `node scripts/test-durations.mjs < ci.log`. The test sequencer runs those files
// longest first on a fresh clone, where jest has no timings of its own yet.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const seconds = {};
for (const line of readFileSync(0, 'utf8').split('\n')) {
  const match = /^(?:PASS|FAIL) (\S+\.test\.ts) \(([\d.]+) s\)/.exec(line.trim());
  if (match) seconds[match[1]] = Math.round(Number(match[2]));
}
if (Object.keys(seconds).length === 0) {
  console.error('no `PASS <file> (<seconds> s)` line on stdin: give it the output of `npm test` or .ci/run');
  process.exit(1);
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([, a], [, b]) => b - a));
const file = path.join(import.meta.dirname, '..', 'test', 'support', 'test-durations.json');
writeFileSync(file, `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`${Object.keys(sorted).length} files' seconds written to ${path.relative(process.cwd(), file)}`);
