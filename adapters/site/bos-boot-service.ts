import { z } from 'zod';
import type { BootService, BootSessionRequest, BootSessionStatus } from '../../ports/site';
import { HttpJsonClient, urlPath, type JsonResponse } from './http-json-client';

export interface BosOptions {
  baseUrl: string;
  bearerToken?: string;
  timeoutMs?: number;
}

const sessionResponse = z.object({
  name: z.string(),
  status: z.object({ status: z.enum(['pending', 'running', 'complete']), error: z.string().optional() }),
  components: z.record(z.string(), z.enum(['pending', 'booting', 'succeeded', 'failed'])),
});

/** BOS v2: reboot sessions over a limit, polled by name. */
export class BosBootService implements BootService {
  private readonly http: HttpJsonClient;

  constructor({ baseUrl, bearerToken, timeoutMs }: BosOptions) {
    this.http = new HttpJsonClient({ service: 'boot-service', baseUrl, bearerToken, timeoutMs });
  }

  async templateExists(templateName: string): Promise<boolean> {
    const response = await this.http.request('GET', urlPath`/bos/v2/sessiontemplates/${templateName}`, { accept: [404] });
    return response.status !== 404;
  }

  async createSession(request: BootSessionRequest): Promise<BootSessionStatus> {
    return this.http.createOrRead(
      '/bos/v2/sessions',
      { name: request.name, operation: request.operation, template_name: request.templateName, limit: request.limit },
      'session',
      (name) => this.getSession(name),
      (response) => this.toStatus(response),
    );
  }

  async getSession(name: string): Promise<BootSessionStatus | undefined> {
    const response = await this.http.request('GET', urlPath`/bos/v2/sessions/${name}`, { accept: [404] });
    return response.status === 404 ? undefined : this.toStatus(response);
  }

  private toStatus(response: JsonResponse): BootSessionStatus {
    const session = this.http.parse(sessionResponse, response);
    return {
      name: session.name,
      // BOS v2 says `pending` before it starts working: still running to the caller.
      status: session.status.status === 'complete' ? 'complete' : 'running',
      ...(session.status.error ? { error: session.status.error } : {}),
      nodes: session.components,
    };
  }
}
