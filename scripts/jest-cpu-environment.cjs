/**
 * Jest's node environment, plus one line per test file in $JEST_CPU_REPORT: the file, the CPU time
 * its worker spent on it (user + system, with the child processes it waited for: the CLI and
 * `rollout serve` processes some tests start) and its wall time, in ms. CPU time is what a test file
 * costs whatever else the shared host runs; `node scripts/jest-cpu-report.mjs FILE` sums it up.
 * Use: JEST_CPU_REPORT=/tmp/cpu.tsv npx jest --testEnvironment=./scripts/jest-cpu-environment.cjs
 */
const { appendFileSync, readFileSync } = require('node:fs');
const path = require('node:path');
const NodeEnvironment = require(require.resolve('jest-environment-node', { paths: [process.cwd()] })).TestEnvironment;

const TICKS_PER_SECOND = 100;
/** utime, stime, cutime, cstime of this process (fields 14-17 of /proc/self/stat), in ms. */
function cpuMs() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) * (1000 / TICKS_PER_SECOND);
}

class CpuReportingEnvironment extends NodeEnvironment {
  constructor(config, context) {
    super(config, context);
    this.file = path.relative(process.cwd(), context.testPath);
  }
  async setup() {
    this.cpuAtStart = cpuMs();
    this.wallAtStart = Date.now();
    await super.setup();
  }
  async teardown() {
    await super.teardown();
    const report = process.env.JEST_CPU_REPORT;
    if (report) appendFileSync(report, `${this.file}\t${Math.round(cpuMs() - this.cpuAtStart)}\t${Date.now() - this.wallAtStart}\n`);
  }
}

module.exports = CpuReportingEnvironment;
