import { writeFile } from 'node:fs/promises';
import { scenarioSiteYaml } from './scenario-site';

/** Writes the scenario site for `rollout simulate` in the LocalStack CI job: `node bin/run-ts.js test/localstack/write-scenario-site.ts FILE`. */
const [file] = process.argv.slice(2);
if (!file) throw new Error('usage: write-scenario-site.ts FILE');
await writeFile(file, scenarioSiteYaml());
