// Sums up a JEST_CPU_REPORT file (scripts/jest-cpu-environment.cjs): total CPU and wall, and the files that cost most.
import { readFileSync } from 'node:fs';
const [file, top = '25'] = process.argv.slice(2);
const rows = readFileSync(file, 'utf8')
  .trim()
  .split('\n')
  .map((line) => line.split('\t'))
  .map(([name, cpu, wall]) => ({ name, cpu: Number(cpu), wall: Number(wall) }));
const total = rows.reduce((sum, r) => sum + r.cpu, 0);
console.log(
  `${rows.length} files, ${(total / 1000).toFixed(0)} s CPU in all, ${(rows.reduce((s, r) => s + r.wall, 0) / 1000).toFixed(0)} s of wall time summed over the files`,
);
for (const r of rows.sort((a, b) => b.cpu - a.cpu).slice(0, Number(top))) {
  console.log(
    `${(r.cpu / 1000).toFixed(1).padStart(7)} s CPU ${((100 * r.cpu) / total).toFixed(1).padStart(5)}%  ${(r.wall / 1000).toFixed(0).padStart(5)} s wall  ${r.name}`,
  );
}
