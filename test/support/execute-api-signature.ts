import type { IncomingMessage } from 'node:http';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

/** The shape of API Gateway's IAM auth header for execute-api in `region`, with `accessKeyId`, signing Host among its headers. */
export function executeApiAuthorizationPattern(accessKeyId: string, region: string): RegExp {
  return new RegExp(
    `^AWS4-HMAC-SHA256 Credential=${accessKeyId}/\\d{8}/${region}/execute-api/aws4_request, SignedHeaders=[^,]*host[^,]*, Signature=[0-9a-f]{64}$`,
  );
}

/**
 * What a client signing for execute-api in `region` with `credentials` must have sent as Authorization for the
 * request as it was received: the signature recomputed here over the headers it says it signed, at the time it
 * says (x-amz-date). Equal to the one received only if the client signed exactly this request (method, path,
 * query, those headers, the body) with those credentials; undefined when the request carries no signature.
 */
export async function expectedAuthorization(
  req: IncomingMessage,
  body: string,
  { credentials, region }: { credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }; region: string },
): Promise<string | undefined> {
  const date = req.headers['x-amz-date'];
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(String(req.headers.authorization))?.[1]?.split(';');
  if (typeof date !== 'string' || !signedHeaders) return undefined;
  const url = new URL(req.url!, `http://${req.headers.host}`);
  const headers = Object.fromEntries(signedHeaders.map((name) => [name, String(req.headers[name])]));
  const signer = new SignatureV4({ service: 'execute-api', region, credentials, sha256: Hash.bind(null, 'sha256'), applyChecksum: true });
  const when = new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 11)}:${date.slice(11, 13)}:${date.slice(13)}`);
  const signed = await signer.sign(
    {
      method: req.method!,
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      ...(body ? { body } : {}),
    },
    { signingDate: when },
  );
  return signed.headers['authorization'];
}
