import { SsmTransport } from '../../adapters/site/commands/ssm-transport';
import { HEAD_NODE_INSTANCE_ID } from '../../simulator/models/head-node';
import type { SiteDefinitionInput } from '../../simulator/site-file';
import { startTestSite, type TestSite } from './simulator';

export interface SsmTestSite extends TestSite {
  /** The real @aws-sdk/client-ssm against the simulator's SSM endpoint; every poll moves simulated time on by `pollSeconds`. */
  transport: SsmTransport;
}

/** A simulated site and an SSM transport to its head node (dummy credentials, endpoint override). */
export async function startSsmTestSite(
  input: SiteDefinitionInput,
  {
    pollSeconds = 0,
    instanceIds = [HEAD_NODE_INSTANCE_ID],
    requestTimeoutMs,
  }: { pollSeconds?: number; instanceIds?: string[]; requestTimeoutMs?: number } = {},
): Promise<SsmTestSite> {
  const t = await startTestSite(input);
  const transport = new SsmTransport({
    instanceIds,
    region: 'us-east-1',
    endpoint: t.site.url,
    credentials: { accessKeyId: 'sim', secretAccessKey: 'sim' },
    sleep: async () => t.advance(pollSeconds),
    ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
  });
  return { ...t, transport };
}
