import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TaskGraphNode } from '../../../core/task-graph';

export const EXAMPLE_GRAPH = readFileSync(path.join(__dirname, '..', '..', '..', 'examples', 'graphs', 'fuel-granular-example.yaml'), 'utf8');

/** The spec's nodes: primary-controller [node-1], controller [node-4, node-2, node-3, node-5], cinder [node-6], network [node-7], compute [node-8]. */
export const EXAMPLE_NODES: TaskGraphNode[] = [
  { name: 'node-1', roles: ['primary-controller'] },
  { name: 'node-4', roles: ['controller'] },
  { name: 'node-2', roles: ['controller'] },
  { name: 'node-3', roles: ['controller'] },
  { name: 'node-5', roles: ['controller'] },
  { name: 'node-6', roles: ['cinder'] },
  { name: 'node-7', roles: ['network'] },
  { name: 'node-8', roles: ['compute'] },
];
