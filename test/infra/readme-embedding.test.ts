import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_ROOT } from '../../contracts/paths';
import { STACK_OUTPUTS } from '../../cli/targets';

/** The TypeScript block of a guide's section, as written there. */
function codeBlock(guide: string, heading: string): string {
  const section = guide.slice(guide.indexOf(heading));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error(`no ts block after '${heading}'`);
  return block[1]!;
}

/**
 * The embedding app of docs/guides/run-as-a-service.md is type-checked as examples/cdk-app/readme-app.ts (in tsconfig's
 * `include`, so `npm run typecheck` compiles it against the construct): this test holds the file
 * equal to the guide's block, its package import mapped to this repository's infra/.
 */
describe('the embedding app of the run-as-a-service guide', () => {
  let snippet: string;
  beforeAll(async () => {
    snippet = codeBlock(await readFile(path.join(PROJECT_ROOT, 'docs', 'guides', 'run-as-a-service.md'), 'utf8'), '### Embedding the construct');
  });

  it('is the type-checked examples/cdk-app/readme-app.ts, word for word', async () => {
    const file = await readFile(path.join(PROJECT_ROOT, 'examples', 'cdk-app', 'readme-app.ts'), 'utf8');
    const code = file.replace(/^(\/\/.*\n)+/, '');
    expect(snippet).toContain("from 'baremetal-rollout/infra'");
    expect(code).toBe(snippet.replace("from 'baremetal-rollout/infra'", "from '../../infra'"));
  });

  it('declares every stack output the CLI reads', () => {
    const declared = [...snippet.matchAll(/new CfnOutput\(this, '(\w+)'/g)].map((match) => match[1]);
    expect(declared.sort()).toEqual(Object.values(STACK_OUTPUTS).sort());
  });
});
