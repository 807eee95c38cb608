import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SlurmRestWorkloadManager } from '../../../adapters/site/slurm-rest-workload-manager';
import { SLURMRESTD_VERSIONS } from '../../../core/site/site-profile';
import { stubServer } from '../../support/stub-server';

/**
 * slurmrestd's node answers of the versions not installed here, from fixtures written from
 * SchedMD's data_parser sources (test/fixtures/slurm/README.md): the connector reads each shape and
 * fails only the node slurmctld does not know, never the whole poll.
 */
const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'slurm');
const fixture = (name: string) => JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')) as { nodes?: { name: string }[] };

describe.each(SLURMRESTD_VERSIONS)('slurmrestd %s', (version) => {
  const all = fixture(`nodes-${version}.json`);

  it('reads the nodes of its data_parser, one GET /node/{name} each, and leaves out an unknown one (200 with errors[] and no nodes)', async () => {
    const stub = await stubServer((url) => {
      const name = /\/node\/([^/?]+)$/.exec(url)?.[1];
      const node = all.nodes!.find((n) => n.name === name);
      if (!url.startsWith(`/slurm/${version}/`)) return { status: 404, text: '{}' };
      return node
        ? { status: 200, text: JSON.stringify({ ...all, nodes: [node] }) }
        : { status: 200, text: JSON.stringify(fixture('node-unknown-24.11.5-v0.0.42.json')) };
    });
    try {
      const wlm = new SlurmRestWorkloadManager({ baseUrl: stub.url, apiVersion: version });
      const nodes = await wlm.getNodes(['c01', 'c02', 'c03', 'ghost01']);
      expect([...nodes.keys()].sort()).toEqual(['c01', 'c02', 'c03']);
      expect(nodes.get('c02')).toEqual({
        name: 'c02',
        base: 'DOWN',
        flags: ['DRAIN', 'NOT_RESPONDING'],
        reason: 'rolling-upgrade : Not responding',
        bootTime: 1767225000000,
      });
      expect(nodes.get('c03')).toMatchObject({ base: 'IDLE', flags: ['DRAIN', 'COMPLETING'] });
    } finally {
      await stub.close();
    }
  });

  it('reads a fleet in one GET /nodes', async () => {
    const many = Array.from({ length: 20 }, (_, i) => ({ ...all.nodes![0]!, name: `n${i}` }));
    const stub = await stubServer((url) =>
      url === `/slurm/${version}/nodes` ? { status: 200, text: JSON.stringify({ ...all, nodes: many }) } : { status: 404, text: '{}' },
    );
    try {
      const nodes = await new SlurmRestWorkloadManager({ baseUrl: stub.url, apiVersion: version }).getNodes(many.map((n) => n.name));
      expect(nodes.size).toBe(20);
      expect(stub.seen).toHaveLength(1);
    } finally {
      await stub.close();
    }
  });
});

describe('slurmrestd on a node slurmctld does not know (issue 26, item 6)', () => {
  const unknownAnswers = [
    'node-unknown-24.11.5-v0.0.40.json',
    'node-unknown-24.11.5-v0.0.42.json',
    'node-unknown-26.05.5-v0.0.42.json',
    'node-unknown-26.05.5-v0.0.45.json',
    'node-invalid-name-v0.0.42.json',
  ];
  it.each(unknownAnswers)('leaves the node out on %s, as the scontrol connector does, and reads the rest', async (file) => {
    const answer = fixture(file) as { _status?: number; errors: { description: string }[] };
    const all = fixture('nodes-v0.0.42.json');
    const unknown = /Failure to query node (\S+)/.exec(answer.errors[0]!.description)![1]!;
    const stub = await stubServer((url) => {
      const name = /\/node\/([^/?]+)$/.exec(url)?.[1];
      if (name === unknown) return { status: answer._status ?? 200, text: JSON.stringify(answer) };
      return { status: 200, text: JSON.stringify({ ...all, nodes: all.nodes!.filter((n) => n.name === name) }) };
    });
    try {
      const wlm = new SlurmRestWorkloadManager({ baseUrl: stub.url, apiVersion: 'v0.0.42' });
      expect([...(await wlm.getNodes(['c01', unknown])).keys()]).toEqual(['c01']);
    } finally {
      await stub.close();
    }
  });

  it('fails the read when the same description carries an errno (a load that failed), naming the error', async () => {
    const down = {
      errors: [
        { description: 'Failure to query node c01', error_number: 1001, error: 'Unable to contact slurm controller (connect failure)', source: '_dump_nodes' },
      ],
    };
    const stub = await stubServer(() => ({ status: 200, text: JSON.stringify(down) }));
    try {
      await expect(new SlurmRestWorkloadManager({ baseUrl: stub.url, apiVersion: 'v0.0.42' }).getNodes(['c01'])).rejects.toThrow(
        /answered 200: Unable to contact slurm controller \(connect failure\): Failure to query node c01/,
      );
    } finally {
      await stub.close();
    }
  });
});

describe('slurmrestd errors on a single node', () => {
  it('leaves out a node answered 500 for its name, and fails the read when slurmctld does not answer', async () => {
    const all = fixture('nodes-v0.0.42.json');
    const stub = await stubServer((url) => {
      if (url.endsWith('/node/ghost')) return { status: 500, text: JSON.stringify(fixture('node-invalid-name-v0.0.42.json')) };
      if (url.endsWith('/node/c04')) return { status: 500, text: JSON.stringify(fixture('node-controller-down-v0.0.42.json')) };
      const name = /\/node\/([^/?]+)$/.exec(url)?.[1];
      return { status: 200, text: JSON.stringify({ ...all, nodes: all.nodes!.filter((n) => n.name === name) }) };
    });
    try {
      const wlm = new SlurmRestWorkloadManager({ baseUrl: stub.url, apiVersion: 'v0.0.42' });
      expect([...(await wlm.getNodes(['c01', 'ghost'])).keys()]).toEqual(['c01']);
      await expect(wlm.getNodes(['c01', 'c04'])).rejects.toThrow(
        /GET .*\/slurm\/v0\.0\.42\/node\/c04 answered 500: Unable to contact slurm controller \(connect failure\): Failure to query node c01/,
      );
    } finally {
      await stub.close();
    }
  });
});
