/**
 * What the workflows, the Lambdas, the engine and the CDK app must agree on, in one place and
 * free of dependencies (node:path and node:url only): function names, environment keys, state
 * machine names, ASL file paths and the `${...}` placeholder resolver.
 */
export * from './environment';
export * from './functions';
export * from './paths';
export * from './placeholders';
export * from './site-access';
export * from './state-machines';
export * from './table-access';
