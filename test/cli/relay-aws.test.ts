import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spooledFirings, spoolFiring } from '../../local/site-relay';
import { runCliInProcess } from '../support/cli';
import { executeApiAuthorizationPattern, expectedAuthorization } from '../support/execute-api-signature';

/**
 * `rollout relay deliver|drain --aws` (issue 29): the firing goes to the stack's API, whose every method is behind
 * IAM auth, signed with SigV4 for execute-api by the credential chain (here AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY). The stand-in below is API Gateway as the relay meets it: it recomputes the signature of
 * each request as received and answers 403 (with API Gateway's messages) unless it matches, then records the
 * firing once by id (201, then 200 for a redelivery).
 */

const CREDENTIALS = { accessKeyId: 'AKIDRELAYEXAMPLE', secretAccessKey: 'relay/K7MDENG+bPxRfiCYEXAMPLEKEY' };
/** What the STS stand-in hands out for SiteRelayRole: a session's credentials, its token signed too. */
const ROLE_CREDENTIALS = { accessKeyId: 'ASIARELAYROLE', secretAccessKey: 'role/secret/EXAMPLEKEY', sessionToken: 'relay-session-token' };
const ROLE_ARN = 'arn:aws:iam::123456789012:role/BaremetalRollout-ApiSiteRelayRole-EXAMPLE';
const REGION = 'eu-west-1';
const FIRED_AT = new Date('2026-11-29T01:00:00.000Z');

interface Seen {
  path: string;
  authorization?: string;
  status: number;
}

const seen: Seen[] = [];
const recorded = new Set<string>();
/** The credentials the API stand-in checks signatures against (the role's, when the relay assumes it). */
let apiCredentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } = CREDENTIALS;
let api: Server;
let apiUrl: string;
let spool: string;
let awsFiles: string;
const saved = { ...process.env };

beforeAll(async () => {
  api = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      void (async () => {
        const answer = (status: number, json: unknown) => {
          seen.push({ path: req.url!, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}), status });
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
        };
        const authorization = req.headers.authorization;
        if (!authorization) return answer(403, { message: 'Missing Authentication Token' });
        const expected = await expectedAuthorization(req, body, { credentials: apiCredentials, region: REGION });
        if (!executeApiAuthorizationPattern(apiCredentials.accessKeyId, REGION).test(authorization) || authorization !== expected)
          return answer(403, { message: 'The request signature we calculated does not match the signature you provided.' });
        if (req.method !== 'POST' || req.url !== '/v1/site-events') return answer(403, { message: 'Missing Authentication Token' });
        const { id } = JSON.parse(body) as { id: string };
        const duplicate = recorded.has(id);
        recorded.add(id);
        return answer(duplicate ? 200 : 201, { id, recorded: !duplicate, duplicate });
      })();
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  // As the stack's ApiUrl output reads: the stage's path, a trailing slash.
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/v1/`;
});

beforeEach(async () => {
  seen.length = 0;
  apiCredentials = CREDENTIALS;
  spool = await mkdtemp(path.join(tmpdir(), 'relay-aws-spool-'));
  awsFiles = await mkdtemp(path.join(tmpdir(), 'relay-aws-config-'));
  // The credential chain's first link, and nothing else to find: no shared files, no instance metadata.
  for (const name of ['AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_REGION', 'AWS_DEFAULT_REGION']) delete process.env[name];
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    AWS_CONFIG_FILE: path.join(awsFiles, 'config'),
    AWS_SHARED_CREDENTIALS_FILE: path.join(awsFiles, 'credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
  });
});

afterEach(async () => {
  process.env = { ...saved };
  await rm(spool, { recursive: true, force: true });
  await rm(awsFiles, { recursive: true, force: true });
});

afterAll(async () => {
  await new Promise((resolve) => api.close(resolve));
});

const spooledNodes = async () => (await spooledFirings(spool)).map((firing) => firing.body.nodes);
/** `rollout relay deliver --event up` of `hostlist`, signed for the stand-in API in REGION, with `flags` before the hostlist. */
const deliverSigned = (hostlist: string, ...flags: string[]) =>
  runCliInProcess(['relay', 'deliver', '--event', 'up', '--spool', spool, '--endpoint', apiUrl, '--aws', '--region', REGION, ...flags, hostlist]);

describe('rollout relay --aws', () => {
  test("deliver signs the POST for execute-api in --region with the chain's credentials: the stand-in's recomputed signature matches, the firing is recorded and its file removed", async () => {
    const result = await deliverSigned('c[01-04]', '--json');
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const printed = JSON.parse(result.stdout) as { id: string; outcome: unknown };
    expect(printed.outcome).toEqual({ delivered: true, duplicate: false });
    expect(seen).toEqual([
      { path: '/v1/site-events', authorization: expect.stringMatching(executeApiAuthorizationPattern(CREDENTIALS.accessKeyId, REGION)), status: 201 },
    ]);
    expect(recorded.has(printed.id)).toBe(true);
    expect(await readdir(spool)).toEqual([]);
  });

  test("the stand-in's check refuses an unsigned POST and one signed with another secret (403): the relay keeps both spooled, and a drain with the right credentials delivers them", async () => {
    const unsigned = await runCliInProcess(['relay', 'deliver', '--event', 'drained', '--spool', spool, '--endpoint', apiUrl, 'c01']);
    expect(unsigned.code).toBe(0);
    expect(unsigned.stderr).toMatch(/: not delivered \(HTTP 403: Missing Authentication Token\): spooled in /);

    // A credential that no longer signs as the API expects (rotated, expired): worth a retry, not a refusal of the firing.
    process.env.AWS_SECRET_ACCESS_KEY = 'not/the/secret/the/api/knows';
    const wrong = await runCliInProcess(['relay', 'deliver', '--event', 'drained', '--spool', spool, '--endpoint', apiUrl, '--aws', '--region', REGION, 'c02']);
    expect(wrong.code).toBe(0);
    expect(wrong.stderr).toMatch(/: not delivered \(HTTP 403: The request signature we calculated does not match/);
    expect(seen.map((s) => s.status)).toEqual([403, 403]);
    expect(await spooledNodes()).toEqual(['c01', 'c02']);

    process.env.AWS_SECRET_ACCESS_KEY = CREDENTIALS.secretAccessKey;
    const drained = await runCliInProcess(['relay', 'drain', '--spool', spool, '--endpoint', apiUrl, '--aws', '--region', REGION, '--json']);
    expect({ code: drained.code, result: JSON.parse(drained.stdout) as unknown }).toEqual({
      code: 0,
      result: { delivered: 2, duplicates: 0, rejected: 0, remaining: 0, attempts: 1 },
    });
    expect(seen.slice(2).map((s) => s.status)).toEqual([201, 201]);
    expect(await readdir(spool)).toEqual([]);
  });

  test('a firing delivered twice (its answer lost) is recorded once: the drain counts it as recorded before', async () => {
    const firing = await spoolFiring(spool, { event: 'down', hostlist: 'c09', firedAt: FIRED_AT });
    recorded.add(firing.body.id);
    const drained = await runCliInProcess(['relay', 'drain', '--spool', spool, '--endpoint', apiUrl, '--aws', '--region', REGION]);
    expect(drained.code).toBe(0);
    expect(drained.stdout).toBe('1 delivered (1 recorded before), 0 refused, 0 left in the spool after 1 pass\n');
    expect(seen.map((s) => s.status)).toEqual([200]);
  });

  test('no credentials to sign with (a profile that does not exist): the firing stays spooled, the reason says the delivery could not be signed', async () => {
    const started = Date.now();
    const result = await deliverSigned('c03', '--profile', 'no-such-relay-profile');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/: not delivered \(cannot sign the delivery: .*no-such-relay-profile.*\): spooled in /);
    expect(seen).toEqual([]);
    expect(await spooledNodes()).toEqual(['c03']);
  });

  test("--profile: a profile whose role_arn is SiteRelayRole's, over the head node's own credentials (source_profile): AssumeRole, then the POST signed with the role's session", async () => {
    const assumed: string[] = [];
    const sts = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        assumed.push(`${String(req.headers.authorization).split(' ')[1]?.split('/')[0]} ${decodeURIComponent(body)}`);
        res
          .writeHead(200, { 'content-type': 'text/xml' })
          .end(
            `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>` +
              `<AssumedRoleUser><Arn>${ROLE_ARN.replace(':iam:', ':sts:').replace(':role/', ':assumed-role/')}/relay</Arn><AssumedRoleId>AROAEXAMPLE:relay</AssumedRoleId></AssumedRoleUser>` +
              `<Credentials><AccessKeyId>${ROLE_CREDENTIALS.accessKeyId}</AccessKeyId><SecretAccessKey>${ROLE_CREDENTIALS.secretAccessKey}</SecretAccessKey>` +
              `<SessionToken>${ROLE_CREDENTIALS.sessionToken}</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials>` +
              `</AssumeRoleResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></AssumeRoleResponse>`,
          );
      });
    });
    await new Promise<void>((resolve) => sts.listen(0, '127.0.0.1', resolve));
    try {
      await writeFile(process.env.AWS_CONFIG_FILE!, `[profile rollout-relay]\nrole_arn = ${ROLE_ARN}\nsource_profile = head-node\nregion = ${REGION}\n`);
      process.env.AWS_ENDPOINT_URL_STS = `http://127.0.0.1:${(sts.address() as AddressInfo).port}`;
      await writeFile(process.env.AWS_SHARED_CREDENTIALS_FILE!, `[head-node]\naws_access_key_id = AKIDHEADNODE\naws_secret_access_key = head/node/secret\n`);
      // The variables' credentials are not the profile's: --profile reads its own.
      apiCredentials = ROLE_CREDENTIALS;
      const result = await deliverSigned('c05', '--profile', 'rollout-relay', '--timeout', '5000');
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      expect(assumed).toEqual([expect.stringMatching(new RegExp(`^Credential=AKIDHEADNODE .*Action=AssumeRole.*RoleArn=${ROLE_ARN}`))]);
      expect(seen).toEqual([
        { path: '/v1/site-events', authorization: expect.stringMatching(executeApiAuthorizationPattern(ROLE_CREDENTIALS.accessKeyId, REGION)), status: 201 },
      ]);
      expect(await readdir(spool)).toEqual([]);
    } finally {
      await new Promise((resolve) => sts.close(resolve));
    }
  });

  test.each([
    [['--aws', '--region', REGION], /--aws delivers to --endpoint/],
    [['--aws', '--endpoint', 'http://127.0.0.1:1/v1/'], /--region: 127\.0\.0\.1:1 is not an API Gateway host/],
    [['--endpoint', 'http://127.0.0.1:1/v1/', '--profile', 'relay'], /--region and --profile go with --aws/],
    [['--aws', '--region', REGION, '--endpoint', 'not a url'], /--endpoint must be a URL/],
  ])('deliver %j is refused (exit 2) naming the flag to fix, nothing spooled', async (flags, message) => {
    const result = await runCliInProcess(['relay', 'deliver', '--event', 'up', '--spool', spool, ...flags, 'c01']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(await readdir(spool)).toEqual([]);
  });

  test('drain names --region too, and starts no pass', async () => {
    await spoolFiring(spool, { event: 'up', hostlist: 'c01', firedAt: FIRED_AT });
    const result = await runCliInProcess(['relay', 'drain', '--spool', spool, '--endpoint', apiUrl, '--aws']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--region: 127\.0\.0\.1:\d+ is not an API Gateway host/);
    expect(seen).toEqual([]);
  });
});
