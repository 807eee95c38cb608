#!/usr/bin/env node
// Runs the compiled CLI (dist/rollout.js, built by `npm ci`'s prepare step); when a source changed
// since that build, it is built again first (about a second), so that the CLI always runs the code of
// the working tree.
import { ensureCliBuilt } from '../scripts/build-cli.mjs';

// These machines run Node 20; the deployed functions run Node 22. The SDK's Node 20 notice is not for the operator.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
await ensureCliBuilt();
await import('../dist/rollout.js');
