/**
 * Task graphs (Fuel's granular deployment) on the annealer: read and validate a graph of role
 * groups, stages and tasks, select part of it, and plan it over a site's nodes as operations for
 * core/scheduling. Pure: no I/O.
 */
export * from './graph-document';
export * from './conditions';
// The validation's steps stay in their module (its tests import them there): the graph and its readers only.
export { parseTaskGraph, validateTaskGraph, type GraphGroup, type GraphTask, type TaskGraph } from './parse-task-graph';
export * from './selection';
export * from './attributes';
export * from './task-plan';
export * from './plan-views';
export * from './task-run';
export * from './task-run-request';
export * from './task-run-state';
export * from './task-run-pass';
