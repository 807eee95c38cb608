import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runCliInProcess } from '../support/cli';
import { expectedAuthorization } from '../support/execute-api-signature';
import { fuelEnvironments } from '../support/environments';

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const REGION = 'eu-west-1';

interface Seen {
  method: string;
  path: string;
  authorization?: string;
  /** The signature recomputed here from the request as received: equal only if the client signed exactly this request. */
  expected?: string;
}

const listen = (server: Server) =>
  new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
const readBody = async (req: IncomingMessage) => {
  let text = '';
  for await (const chunk of req) text += (chunk as Buffer).toString('utf8');
  return text;
};

// `rollout env --aws`: the stack's ApiUrl from CloudFormation (a stand-in over the real query protocol),
// every request signed with SigV4 for execute-api (checked by recomputing the signature), and answers
// that are not the API's reported in one line.
describe('rollout env against the deployed (IAM) API', () => {
  let cloudFormation: Server;
  let api: Server;
  const seen: Seen[] = [];
  const saved = { ...process.env };

  beforeAll(async () => {
    api = createServer((req, res) => {
      void (async () => {
        const body = await readBody(req);
        seen.push({
          method: req.method!,
          path: req.url!,
          ...(req.headers.authorization
            ? { authorization: req.headers.authorization, expected: await expectedAuthorization(req, body, { credentials: CREDENTIALS, region: REGION }) }
            : {}),
        });
        const send = (status: number, type: string, text: string) => res.writeHead(status, { 'content-type': type }).end(text);
        const path = req.url!.replace(/^\/v1/, '');
        if (!req.headers.authorization) return send(403, 'application/json', JSON.stringify({ message: 'Missing Authentication Token' }));
        if (path === '/environments' && req.method === 'GET') return send(200, 'application/json', JSON.stringify(fuelEnvironments().environments));
        if (path === '/environments/1/upgrade/clone')
          return send(
            200,
            'application/json',
            JSON.stringify({ ...fuelEnvironments().environments[2], id: 9, name: JSON.parse(body).name, original_cluster_id: 1, release_id: 2 }),
          );
        if (path === '/environments/7') return send(502, 'text/html', '<html><body><h1>502 Bad Gateway</h1></body></html>');
        if (path === '/environments/8') return send(200, 'application/json', JSON.stringify({ id: 8, name: 'half' }));
        if (path === '/environments/6') return send(400, 'text/plain', 'bad request');
        return send(
          404,
          'application/problem+json',
          JSON.stringify({ type: 'about:blank', title: 'Not Found', status: 404, detail: `no resource at ${path}` }),
        );
      })();
    });
    const apiUrl = await listen(api);
    cloudFormation = createServer((req, res) => {
      void readBody(req).then(() =>
        res
          .writeHead(200, { 'content-type': 'text/xml' })
          .end(
            `<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>` +
              `<StackName>BaremetalRollout</StackName><StackStatus>CREATE_COMPLETE</StackStatus><CreationTime>2025-01-01T00:00:00Z</CreationTime>` +
              `<Outputs><member><OutputKey>ApiUrl</OutputKey><OutputValue>${apiUrl}/v1/</OutputValue></member></Outputs>` +
              `</member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></DescribeStacksResponse>`,
          ),
      );
    });
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      AWS_REGION: REGION,
      AWS_ENDPOINT_URL_CLOUDFORMATION: await listen(cloudFormation),
    });
  });
  afterAll(async () => {
    process.env = saved;
    await new Promise((resolve) => api.close(resolve));
    await new Promise((resolve) => cloudFormation.close(resolve));
  });

  it("reads the stack's ApiUrl and signs every request, GET and POST, for execute-api in the credential chain's region", async () => {
    const listed = await runCliInProcess(['env', 'list', '--aws']);
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(listed.stdout).toMatch(/\n1 +prod +1 +operational +3\n/);
    const cloned = await runCliInProcess(['env', 'clone', '1', '--name', 'prod-8.0', '--release', '2', '--aws', '--stack', 'BaremetalRollout']);
    expect(cloned.stdout).toBe("created upgrade seed 9 'prod-8.0' (release 2) of environment 1\n");
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual(['GET /v1/environments', 'POST /v1/environments/1/upgrade/clone']);
    for (const request of seen) {
      expect(request.authorization).toMatch(
        new RegExp(`^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\\d{8}/${REGION}/execute-api/aws4_request, SignedHeaders=[^,]*host`),
      );
      expect(request.authorization).toBe(request.expected);
    }
  });

  it('reports what is not an answer of the API in one line, never a stack trace', async () => {
    const html = await runCliInProcess(['env', 'get', '7', '--aws']);
    expect(html.code).toBe(1);
    expect(html.stderr).toMatch(/answered 502 with text\/html, not the REST API's JSON: <html><body><h1>502 Bad Gateway/);
    const half = await runCliInProcess(['env', 'get', '8', '--aws']);
    expect(half.code).toBe(1);
    expect(half.stderr).toContain('unexpected answer from GET /environments/8 (200): release_id');
    const plain = await runCliInProcess(['env', 'get', '6', '--aws']);
    // A 400 that is not the API's problem document does not say the input was bad.
    expect(plain.code).toBe(1);
    for (const result of [html, half, plain]) expect(result.stderr).not.toMatch(/^\s+at /m);
    // Unsigned (an --api URL that is not API Gateway's), API Gateway's own refusal, with its message.
    const unsigned = await runCliInProcess([
      'env',
      'list',
      '--api',
      `${process.env.AWS_ENDPOINT_URL_CLOUDFORMATION!.replace(/:\d+$/, '')}:${(api.address() as AddressInfo).port}/v1`,
    ]);
    expect(unsigned).toMatchObject({ code: 1, stderr: expect.stringContaining('403: Missing Authentication Token') });
    expect((await runCliInProcess(['env', 'list', '--aws', '--endpoint', 'http://127.0.0.1:1'])).code).toBe(2);
  });
});
