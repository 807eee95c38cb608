import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/** One Lambda bundle of the synthesized stack: its size and what importing it costs a cold start. */
export interface BundleFigures {
  dir: string;
  /** The handlers (`index.<Name>`) of the functions that run it. */
  handlers: string[];
  bytes: number;
  gzipBytes: number;
  sourceMapBytes: number;
  /** Median over `runs` fresh `node` processes of the time to import the bundle (module load = Lambda init here: the handlers build their clients on first use). */
  importMsMedian: number;
  runs: number;
}

/**
 * The bundles of a `cdk synth` (`npm run synth` first): cdk.out/asset.*, labelled by the handlers of the
 * template's functions that use each. Imported from where they lie, so that an external `@aws-sdk/*` resolves
 * from the project's node_modules, as it resolves from the runtime's on Lambda.
 */
export function measureBundles(cdkOut: string, runs = 7): BundleFigures[] {
  if (!existsSync(cdkOut)) throw new Error(`${cdkOut} not found: run \`npm run synth\` first`);
  const handlers = new Map<string, string[]>();
  for (const file of readdirSync(cdkOut).filter((f) => f.endsWith('.template.json'))) {
    const template = JSON.parse(readFileSync(path.join(cdkOut, file), 'utf8')) as { Resources: Record<string, { Type: string; Properties?: { Handler?: string }; Metadata?: Record<string, string> }> };
    for (const resource of Object.values(template.Resources)) {
      const asset = resource.Metadata?.['aws:asset:path'];
      if (resource.Type !== 'AWS::Lambda::Function' || !asset || !resource.Properties?.Handler) continue;
      handlers.set(asset, [...(handlers.get(asset) ?? []), resource.Properties.Handler]);
    }
  }
  const dirs = readdirSync(cdkOut).filter((d) => d.startsWith('asset.') && existsSync(path.join(cdkOut, d, 'index.mjs')));
  return dirs.map((dir) => {
    const bundle = path.join(cdkOut, dir, 'index.mjs');
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const script = `const t = performance.now(); await import(${JSON.stringify(path.resolve(bundle))}); process.stdout.write(String(performance.now() - t));`;
      times.push(Number(execFileSync(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], { encoding: 'utf8' })));
    }
    times.sort((a, b) => a - b);
    const map = `${bundle}.map`;
    return {
      dir,
      handlers: handlers.get(dir) ?? [],
      bytes: statSync(bundle).size,
      gzipBytes: gzipSync(readFileSync(bundle), { level: 9 }).length,
      sourceMapBytes: existsSync(map) ? statSync(map).size : 0,
      importMsMedian: times[Math.floor(times.length / 2)] as number,
      runs,
    };
  });
}

export function renderBundleFigures(cdkOut: string, bundles: readonly BundleFigures[]): string {
  const kb = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
  return [
    `Lambda bundles in ${cdkOut} (import time: median of fresh node ${process.version} processes on this host)`,
    ...bundles.map((b) =>
      [
        `  ${b.handlers[0] ?? b.dir} and ${Math.max(0, b.handlers.length - 1)} more (${b.dir.slice(0, 18)}…)`,
        `    index.mjs                      ${kb(b.bytes)} (${kb(b.gzipBytes)} gzipped), source map ${kb(b.sourceMapBytes)}`,
        `    import (cold-start init)       ${b.importMsMedian.toFixed(0)} ms (median of ${b.runs})`,
      ].join('\n'),
    ),
  ].join('\n');
}
