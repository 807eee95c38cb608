import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { z } from 'zod';
import { describeCommand } from '../../cli/command-spec';
import { cliReference } from '../../scripts/docs/cli-reference';
import { REFERENCE_DIR, generateReferences, type References } from '../../scripts/docs/references';
import { inputJsonSchema, schemaSection } from '../../scripts/docs/schema-reference';

/**
 * docs/reference/ is generated from the code (`npm run docs:generate`): the CLI's command tree, the
 * zod schemas of the requests and the site, the OpenAPI document. This keeps the committed files
 * equal to what the code says, every option and field described, and the output the same on any machine.
 */
const ROOT = path.join(__dirname, '..', '..');
const FIX = 'run npm run docs:generate and commit docs/reference/';

let generated: References;
beforeAll(() => {
  generated = generateReferences();
});

describe('docs/reference/', () => {
  it('holds exactly the files the script generates', () => {
    const committed = readdirSync(path.join(ROOT, REFERENCE_DIR)).sort();
    const made = [...generated.files.keys()].sort();
    if (committed.join() !== made.join()) throw new Error(`${REFERENCE_DIR}/ has ${committed.join(', ')}; the script makes ${made.join(', ')}: ${FIX}`);
  });

  it.each(['README.md', 'cli.md', 'requests.md', 'site-file.md', 'rest-api.md'])('%s is what the code generates', (name) => {
    const committed = readFileSync(path.join(ROOT, REFERENCE_DIR, name), 'utf8');
    const made = generated.files.get(name);
    if (made === undefined) throw new Error(`the script no longer makes ${name}: ${FIX}`);
    if (committed !== made) throw new Error(`${REFERENCE_DIR}/${name} differs from the code (first at line ${firstDifferentLine(committed, made)}): ${FIX}`);
  });

  it('describes every option, argument, field and route', () => {
    // A new flag, field or route without a description fails here: give it one in the code (commander's option text,
    // zod's .describe(), the OpenAPI route's summary), then regenerate.
    expect(generated.undescribed).toEqual([]);
  });

  it('names what has no description: a new flag, argument or field', () => {
    const program = new Command('rollout').description('the program');
    program.command('go').description('goes').argument('<where>').option('--fast', 'faster').option('--quiet');
    expect(cliReference(describeCommand(program)).undescribed).toEqual(['rollout go <where>', 'rollout go --quiet']);
    const schema = inputJsonSchema(z.strictObject({ said: z.string().describe('a field'), unsaid: z.object({ deeper: z.number() }).describe('an object') }));
    expect(schemaSection({ heading: 'Example', intro: '', source: '', schema }).undescribed).toEqual(['Example: unsaid.deeper']);
  });

  it('documents the whole CLI, every request and every route', () => {
    expect(generated.counts.commands).toBeGreaterThanOrEqual(30);
    const cli = generated.files.get('cli.md')!;
    for (const heading of ['## rollout upgrade', '## rollout session resume', '## rollout serve', '## Exit statuses']) expect(cli).toContain(heading);
    expect(cli).toContain('| `--mode <mode>` |');
    const requests = generated.files.get('requests.md')!;
    for (const field of ['upgradeStepSize', 'maxUnavailable', 'maintenanceWindows', 'maxParallelGroups', 'depends_on', 'taskTimeoutSeconds']) {
      expect(requests).toContain(`| \`${field}\` |`);
    }
    const site = generated.files.get('site-file.md')!;
    for (const key of ['bootTemplates', 'workloadManager', 'nodeExec']) expect(site).toContain(`| \`${key}\` |`);
    const rest = generated.files.get('rest-api.md')!;
    for (const route of ['POST /sessions', 'POST /sessions/{id}/resume', 'DELETE /deployments/{id}', 'POST /environments/{id}/upgrade'])
      expect(rest).toContain(`### ${route}\n`);
  });

  it('is the same on any machine: terminal width, environment, home, time zone and working directory play no part', () => {
    const saved = { env: { ...process.env }, cwd: process.cwd() };
    try {
      Object.assign(process.env, { COLUMNS: '33', LINES: '7', HOME: os.tmpdir(), TZ: 'Pacific/Chatham', AWS_REGION: 'ap-southeast-7', LANG: 'de_DE.UTF-8' });
      process.chdir(os.tmpdir());
      const elsewhere = generateReferences();
      expect([...elsewhere.files.entries()]).toEqual([...generated.files.entries()]);
    } finally {
      process.chdir(saved.cwd);
      process.env = saved.env;
    }
    for (const [name, text] of generated.files) {
      expect({ name, absolutePaths: text.includes(ROOT) || text.includes(os.homedir()) }).toEqual({ name, absolutePaths: false });
      expect({ name, dates: /\b20\d\d-\d\d-\d\d/.test(text) }).toEqual({ name, dates: false });
    }
  });
});

function firstDifferentLine(a: string, b: string): number {
  const left = a.split('\n');
  const right = b.split('\n');
  const index = left.findIndex((line, i) => line !== right[i]);
  return (index === -1 ? Math.min(left.length, right.length) : index) + 1;
}
