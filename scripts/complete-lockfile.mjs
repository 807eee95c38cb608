#!/usr/bin/env node
// The registry mirror these machines use lacks some platform builds of native packages
// (e.g. @swc/core-darwin-arm64), so `npm install` leaves them out of package-lock.json and
// `npm ci` then rejects the lock. This adds each missing optional platform package as a
// platform-tagged entry, as a full registry would have written it; npm ci skips such entries
// on other platforms. Run it after `npm install` changes the lock: `npm run lock:complete`.
import { readFileSync, writeFileSync } from 'node:fs';

const OS = { darwin: 'darwin', linux: 'linux', win32: 'win32', android: 'android', freebsd: 'freebsd', openharmony: 'openharmony' };
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64'];

/** os, cpu and libc from a platform package name such as core-linux-arm-gnueabihf. */
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => p in OS);
  const cpu = parts.find((p) => CPU.includes(p));
  if (!os || !cpu) return undefined;
  const libc = os === 'linux' ? (parts.some((p) => p.startsWith('musl')) ? 'musl' : 'glibc') : undefined;
  return { os: OS[os], cpu, libc };
}

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;
let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    if (packages[key]) continue;
    const platform = platformOf(dep);
    if (!platform) {
      console.warn(`${path}: optional ${dep} is missing and has no platform in its name; left as is`);
      continue;
    }
    packages[key] = {
      version,
      cpu: [platform.cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(platform.libc ? { libc: [platform.libc] } : {}),
      optional: true,
      os: [platform.os],
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} missing platform package(s) added`);
