import { HEAD_NODE_INSTANCE_ID } from '../models/head-node';
import type { SiteSimulator } from '../site-simulator';
import type { SimResponse } from './route';

/** How long a look at a running command waits for it to end before answering `running` (real time). */
const LONG_POLL_MS = 1_000;
const POLL_EVERY_MS = 5;

export interface ExecApi {
  /** `POST /sim/exec`, `GET /sim/exec/{id}`, `GET /sim/exec/{id}/stderr`; undefined for another path. */
  serve(method: string, path: string, body: string): Promise<SimResponse> | undefined;
}

const text = (body: string, status = 200): SimResponse => ({ status, body, contentType: 'text/plain; charset=utf-8' });

/**
 * Runs one command line on the simulated head node for a stand-in program on this host (the local
 * transport's `scontrol`, `sinfo`, `wwctl`, `provision`: see local-stand-ins.ts), exactly as SSM would
 * (the same command log and command faults). The request body is the argv, each word ended by a NUL,
 * so nothing is quoted on the way. The answer is plain text a shell reads: a first line `done <exit
 * code> <id>` followed by the command's stdout, or `running - <id>` while it runs in simulated time.
 */
export function execApi(sim: SiteSimulator): ExecApi {
  const head = sim.headNode;
  const look = async (id: string, waitMs: number): Promise<SimResponse> => {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const found = head.get(id, HEAD_NODE_INSTANCE_ID);
      if (!found) return text(`no command ${id}\n`, 404);
      const { invocation, status } = found;
      if (status !== 'InProgress') return text(`done ${status === 'TimedOut' ? 124 : invocation.exitCode} ${id}\n${invocation.stdout}`);
      if (Date.now() >= deadline) return text(`running - ${id}\n`);
      await new Promise((resolve) => setTimeout(resolve, POLL_EVERY_MS));
    }
  };
  return {
    serve(method, path, body) {
      if (method === 'POST' && path === '/sim/exec') {
        const argv = body.split('\0');
        if (argv.at(-1) === '') argv.pop();
        if (argv.length === 0) return Promise.resolve(text('no program given\n', 400));
        const invocation = head.send(HEAD_NODE_INSTANCE_ID, [argv.map(quote).join(' ')], 3600);
        return look(invocation.commandId, LONG_POLL_MS);
      }
      const match = /^\/sim\/exec\/([0-9a-f-]+)(\/stderr)?$/.exec(path);
      if (method !== 'GET' || !match) return undefined;
      if (match[2]) {
        const [invocation] = head.list(match[1]);
        return Promise.resolve(invocation ? text(invocation.stderr) : text(`no command ${match[1]}\n`, 404));
      }
      return look(match[1]!, LONG_POLL_MS);
    },
  };
}

/** POSIX single quotes, as the connectors quote: the head node reads it back word for word. */
function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
