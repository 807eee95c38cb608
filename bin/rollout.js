#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx rollout` works right after `npm ci` with no build step.
import { register } from 'tsx/esm/api';

// These machines run Node 20; the deployed functions run Node 22. The SDK's Node 20 notice is not for the operator.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
await import('../cli/main.ts');
