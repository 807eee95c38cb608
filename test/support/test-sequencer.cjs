/**
 * Longest first, on a fresh clone too. Jest runs the files it has timed longest first (its cache), but a fresh
 * clone has no cache and jest falls back to file size: the 10-minute real-Slurm files then start wherever their
 * size puts them and end the run long after the other workers went idle. The seconds a recent run measured
 * (test/support/test-durations.json, written by scripts/test-durations.mjs from a jest log) stand in for jest's
 * own until it has them; a failed file still goes first, as jest does.
 */
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const measured = require('./test-durations.json');

class LongestFirst extends Sequencer {
  sort(tests) {
    const seconds = (test) => {
      const cached = this.time(test);
      if (cached !== undefined) return cached / 1000;
      return measured[path.relative(test.context.config.rootDir, test.path).split(path.sep).join('/')] ?? 0;
    };
    const size = (test) => test.context.hasteFS.getSize(test.path) ?? 0;
    return [...tests].sort((a, b) => Number(this.hasFailed(b)) - Number(this.hasFailed(a)) || seconds(b) - seconds(a) || size(b) - size(a));
  }
}

module.exports = LongestFirst;
