/**
 * `node bin/run-ts.js bench/scenarios/debug.ts SEED [messages]`: runs one scenario and prints what the
 * checker read: each node's final state at the site and its record, the site's change log (seconds
 * after the start, node, change, the run it names), and with `messages` the session's messages.
 */
import { generateScenario } from './scenario';
import { runScenario } from './run-scenario';
const seed = Number(process.argv[2]);
const run = await runScenario(generateScenario(seed));
for (const [name, n] of Object.entries(run.site.nodes))
  console.log(
    name,
    n.wlmState,
    JSON.stringify(n.wlmReason),
    'boots',
    n.bootCount,
    'drains',
    n.drainCount,
    'oos',
    JSON.stringify(n.outOfService),
    run.report?.nodes[name]?.status,
    run.report?.nodes[name]?.reason ?? '',
  );
for (const c of run.site.changes) console.log(((c.at - run.startedAt) / 1000).toFixed(0), c.node, c.change, c.by?.slice(0, 8));
if (process.argv[3]) for (const m of run.report?.messageLog ?? []) console.log(m.at, m.text);
