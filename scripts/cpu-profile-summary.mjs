// Where a `node --cpu-prof` profile's time went: `node scripts/cpu-profile-summary.mjs FILE.cpuprofile [TOP]`.
// Each sample goes to the innermost frame of its stack that belongs to one of the parts below (a partition of the
// busy time), then the functions with the most self time.
import { readFileSync } from 'node:fs';

const [file, top = '15'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const ours = (dir) => (url) => !url.includes('/node_modules/') && url.includes(`/${dir}/`);
const dependency = (pattern) => (url) => pattern.test(url);
const PARTS = [
  ['DynamoDB: dynalite (and its LevelDB stack)', dependency(/\/node_modules\/(dynalite|levelup|memdown|leveldown|abstract-leveldown|lazy|once|async)\//)],
  ['DynamoDB: the embedded store (local/dynamodb-store)', ours('local/dynamodb-store')],
  ['the local stand-ins for AWS (local/)', ours('local')],
  ['ASL interpreter (aws-local-stepfunctions, jsonpath-plus)', dependency(/\/node_modules\/(aws-local-stepfunctions|jsonpath-plus)\//)],
  ['AWS SDK (serialise, sign, send, parse)', dependency(/\/node_modules\/@(aws-sdk|smithy)\//)],
  ['zod validation', dependency(/\/node_modules\/zod\//)],
  ['module loading (tsx, ESM loader)', (url) => /\/node_modules\/tsx\/|^node:internal\/modules|cjs-module-lexer/.test(url)],
  ['loopback HTTP (node:http, net)', (url) => /^node:(_http|http|net)|^node:internal\/(http|stream_base_commons|net)/.test(url)],
  ['DynamoDB stores (adapters/dynamodb)', ours('adapters/dynamodb')],
  ['site connectors (adapters/site)', ours('adapters/site')],
  ['simulator (site models and routes)', ours('simulator')],
  ['activities (lambdas/)', ours('lambdas')],
  ['scheduling and domain core (core/)', ours('core')],
  ['the bench itself (bench/)', ours('bench')],
];
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
const partOf = new Map();
const part = (id) => {
  if (partOf.has(id)) return partOf.get(id);
  const url = nodes.get(id).callFrame.url.replace(/^file:\/\//, '');
  const own = PARTS.find(([, test]) => url && test(url))?.[0];
  const result = own ?? (parent.has(id) ? part(parent.get(id)) : 'other (node internals, timers, promises)');
  partOf.set(id, result);
  return result;
};
const byPart = new Map();
const byFunction = new Map();
let busy = 0;
let idle = 0;
profile.samples.forEach((id, i) => {
  const micros = profile.timeDeltas[i] ?? 0;
  const frame = nodes.get(id).callFrame;
  if (frame.functionName === '(idle)') return void (idle += micros);
  busy += micros;
  const name = frame.functionName === '(garbage collector)' ? 'garbage collection' : part(id);
  byPart.set(name, (byPart.get(name) ?? 0) + micros);
  const fn = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^file:\/\//, '').replace(/.*\/node_modules\//, '')}:${frame.lineNumber + 1}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + micros);
});
const row = ([name, micros]) => `${(micros / 1e6).toFixed(1).padStart(8)} s ${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${name}`;
console.log(`${file}: ${(busy / 1e6).toFixed(1)} s busy, ${(idle / 1e6).toFixed(1)} s idle`);
for (const entry of [...byPart].sort((a, b) => b[1] - a[1])) console.log(row(entry));
console.log(`-- the ${top} functions with the most self time`);
for (const entry of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(row(entry));
