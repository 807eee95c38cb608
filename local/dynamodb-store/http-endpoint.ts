import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { crc32 } from 'node:zlib';
import { describeError } from '../../core/errors';
import { listenHttp, type HttpListener } from '../../api/http-listener';
import { DynamoDbStoreError, ValidationError } from './errors';
import type { DynamoDbStore } from './store';

/** DynamoDB's JSON protocol names the operation in this header: `DynamoDB_20120810.<Operation>`. */
const TARGET_PREFIX = 'DynamoDB_20120810.';
/** DynamoDB's own request ceiling (a BatchWriteItem of 25 items of 400 KB, with room for the envelope). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Serves a store over DynamoDB's wire protocol (AWS JSON 1.0) on loopback: what another process (a
 * `rollout session` command, a client of `rollout serve`, the AWS CLI) reaches with an endpoint
 * override. Signatures are not checked (the credentials are dummies); answers carry AWS's error
 * bodies (`__type`, `message`) and the `x-amz-crc32` checksum the SDKs may verify.
 */
export function serveDynamoDb(store: DynamoDbStore, port = 0): Promise<HttpListener> {
  return listenHttp((req, res) => {
    handle(store, req).then(
      ({ status, body }) => send(res, status, body),
      (err: unknown) => send(res, 500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: describeError(err) }),
    );
  }, port);
}

async function handle(store: DynamoDbStore, req: IncomingMessage): Promise<{ status: number; body: unknown }> {
  try {
    const target = req.headers['x-amz-target'];
    if (req.method !== 'POST' || typeof target !== 'string' || !target.startsWith(TARGET_PREFIX)) {
      // Drain what was sent, then say what this endpoint is.
      for await (const _ of req) void _;
      return {
        status: 400,
        body: {
          __type: 'com.amazon.coral.service#UnknownOperationException',
          message: 'A DynamoDB endpoint: POST with X-Amz-Target DynamoDB_20120810.<Operation>',
        },
      };
    }
    const text = await readBody(req);
    let input: unknown;
    try {
      input = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new DynamoDbStoreError('SerializationException', 'Start of structure or map found where not expected', 'com.amazon.coral.service#');
    }
    return { status: 200, body: await store.execute(target.slice(TARGET_PREFIX.length), input as Record<string, unknown>) };
  } catch (err) {
    if (err instanceof DynamoDbStoreError) return { status: err.statusCode, body: err.body() };
    throw err;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new ValidationError(`The request body exceeds ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const payload = Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': payload.length,
    'x-amzn-requestid': randomUUID(),
    'x-amz-crc32': String(crc32(payload)),
  });
  res.end(payload);
}
