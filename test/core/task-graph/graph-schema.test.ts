import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseTaskGraph, taskGraphJsonSchema } from '../../../core/task-graph';
import { EXAMPLE_GRAPH } from './fixtures';

/**
 * schemas/task-graph.schema.json is generated from the zod schema; this test keeps them from
 * drifting. After changing the zod schema, regenerate with:
 *   UPDATE_SCHEMAS=1 npx jest test/core/task-graph/graph-schema.test.ts
 */
const SCHEMA_FILE = path.join(__dirname, '..', '..', '..', 'schemas', 'task-graph.schema.json');

describe('schemas/task-graph.schema.json', () => {
  const generated = taskGraphJsonSchema();
  if (process.env.UPDATE_SCHEMAS === '1') writeFileSync(SCHEMA_FILE, `${JSON.stringify(generated, null, 2)}\n`);

  it('equals the schema generated from the zod definition', () => {
    expect(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'))).toEqual(generated);
  });

  it('names every item type and strategy, and keeps unknown keys out', () => {
    const text = JSON.stringify(generated);
    for (const type of ['group', 'stage', 'shell', 'puppet', 'upload_file', 'rsync', 'reboot', 'drain', 'resume', 'one_by_one', 'parallel']) {
      expect(text).toContain(`"const":"${type}"`);
    }
    expect(text.match(/"additionalProperties":false/g)?.length).toBeGreaterThanOrEqual(10);
  });
});

describe('reading a graph file', () => {
  it('reads the same graph from YAML and from JSON', () => {
    const fromYaml = parseTaskGraph(EXAMPLE_GRAPH, 'yaml');
    const fromJson = parseTaskGraph(JSON.stringify(parseYaml(EXAMPLE_GRAPH)), 'json');
    expect(fromJson).toEqual(fromYaml);
    expect(fromYaml.stages).toEqual(['pre_deployment', 'deployment', 'post_deployment', 'deploy']);
    expect(fromYaml.groups.map((g) => g.id)).toEqual(['primary-controller', 'controller', 'cinder', 'network', 'compute']);
  });

  it('says where a broken file is broken', () => {
    expect(() => parseTaskGraph('tasks: [', 'yaml', 'task graph g.yaml')).toThrow(/^Invalid task graph g.yaml: invalid YAML/);
    expect(() => parseTaskGraph('{"tasks": 1}', 'json')).toThrow('Invalid task graph: tasks: tasks must be a list of items');
  });
});
