#!/usr/bin/env node
// Runs a TypeScript entry file (benchmarks, the CDK app) through tsx: `node bin/run-ts.js FILE [ARGS...]`.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
const [, , entry, ...rest] = process.argv;
process.argv = [process.argv[0], entry, ...rest];
await import(pathToFileURL(path.resolve(entry)).href);
