import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { deploymentStrategyJsonSchema } from '../../../core/group-deployment/strategy-schema';

/**
 * schemas/deployment-strategy.schema.json is generated from the zod schema; this test keeps them
 * from drifting. After changing the zod schema, regenerate with:
 *   UPDATE_SCHEMAS=1 npx jest test/core/group-deployment/strategy-json-schema.test.ts
 */
const SCHEMA_FILE = path.join(__dirname, '..', '..', '..', 'schemas', 'deployment-strategy.schema.json');

describe('schemas/deployment-strategy.schema.json', () => {
  const generated = deploymentStrategyJsonSchema();

  if (process.env.UPDATE_SCHEMAS === '1') {
    writeFileSync(SCHEMA_FILE, `${JSON.stringify(generated, null, 2)}\n`);
  }

  it('equals the schema generated from the zod definition', () => {
    expect(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'))).toEqual(generated);
  });

  it("carries Shipyard's constraints", () => {
    const text = JSON.stringify(generated);
    expect(text).toContain('"required":["name","critical","depends_on","selectors"]');
    // Its description (docs/reference/requests.md) comes first.
    expect(text).toMatch(/"percent_successful_nodes":\{("description":"[^"]*",)?"type":"integer","minimum":0,"maximum":100\}/);
    expect(text).toContain('"const":"shipyard/DeploymentStrategy/v1"');
    expect(text.match(/"additionalProperties":false/g)?.length).toBeGreaterThanOrEqual(7);
  });
});
