import { z } from 'zod';
import { validNodeNames } from '../../core/site/names';
import type { ProvisionActionRequest, ProvisionActionStatus, Provisioner } from '../../ports/provisioner';
import type { Token } from './secret-token';
import { HttpJsonClient, urlPath, type JsonResponse } from './http-json-client';

export interface HttpProvisionerOptions {
  baseUrl: string;
  bearerToken?: Token;
  timeoutMs?: number;
}

const actionResponse = z.object({
  name: z.string(),
  action: z.enum(['prepare', 'deploy']),
  status: z.enum(['running', 'complete']),
  nodes: z.record(z.string(), z.enum(['pending', 'running', 'succeeded', 'failed'])),
});

/** The provisioner's action API: prepare or deploy nodes, polled by action name. */
export class HttpProvisioner implements Provisioner {
  private readonly http: HttpJsonClient;

  constructor({ baseUrl, bearerToken, timeoutMs }: HttpProvisionerOptions) {
    this.http = new HttpJsonClient({ service: 'provisioner', baseUrl, bearerToken, timeoutMs });
  }

  async startAction(request: ProvisionActionRequest): Promise<ProvisionActionStatus> {
    validNodeNames(request.nodes);
    return this.http.createOrRead(
      '/provisioner/v1/actions',
      { name: request.name, action: request.action, nodes: request.nodes },
      'action',
      (name) => this.getAction(name),
      (response) => this.toStatus(response),
    );
  }

  async getAction(name: string): Promise<ProvisionActionStatus | undefined> {
    const response = await this.http.request('GET', urlPath`/provisioner/v1/actions/${name}`, { accept: [404] });
    return response.status === 404 ? undefined : this.toStatus(response);
  }

  private toStatus(response: JsonResponse): ProvisionActionStatus {
    return this.http.parse(actionResponse, response);
  }
}
