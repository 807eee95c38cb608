// Tests start the CLI as processes (bin/rollout.js, which runs the compiled dist/rollout.js): build it
// here once, from the working tree, before any test starts one (the bin would build a stale CLI too,
// but then every process started at once would).
import { ensureCliBuilt } from '../../scripts/build-cli.mjs';

export default async function globalSetup() {
  await ensureCliBuilt();
}
