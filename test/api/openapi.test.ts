import SwaggerParser from '@apidevtools/swagger-parser';
import { apiRoutes, createApi } from '../../api';
import type { ApiDependencies } from '../../api';
import { buildOpenApiDocument } from '../../api/openapi';
import { contractViolation } from '../support/api-contract';

/** The routes only, for their table: no handler runs here. */
const unused = new Proxy({}, { get: () => () => Promise.reject(new Error('not called')) });
const dependencies = { controlPlane: unused, environments: unused, environmentUpgrades: unused, runStarts: unused } as unknown as ApiDependencies;

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    // The validator dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(buildOpenApiDocument()) as never)).resolves.toBeDefined();
    // The validator does refuse a broken one.
    const broken = { ...structuredClone(buildOpenApiDocument()), paths: { '/x': { get: { responses: 'none' } } } };
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
  });

  it('documents every route and method the router serves, and nothing else', () => {
    const served = apiRoutes(dependencies).flatMap((route) => Object.keys(route.methods).map((method) => `${method.toLowerCase()} ${route.pattern}`));
    const documented = Object.entries(buildOpenApiDocument().paths ?? {}).flatMap(([path, item]) =>
      Object.keys(item as object)
        .filter((key) => ['get', 'post', 'put', 'delete', 'patch'].includes(key))
        .map((method) => `${method} ${path}`),
    );
    expect(documented.sort()).toEqual(served.sort());
  });

  it("takes the request schemas from the domain: the clone body requires Fuel's name and release_id", () => {
    const document = buildOpenApiDocument();
    const clone = document.components?.schemas?.['CloneRequest'];
    expect(clone).toMatchObject({ type: 'object', required: ['name', 'release_id'], properties: { release_id: { type: 'integer' } } });
    // POST /sessions: the upgrade request, and waitForGroups (the API checks the labels against the inventory unless it is true).
    expect(document.components?.schemas?.['SessionRequest']).toMatchObject({
      required: expect.arrayContaining(['startingLabel', 'upgradeStepSize', 'workloadManagerType']),
      properties: { waitForGroups: { type: 'boolean' } },
    });
    // POST /task-runs: the TaskGraph workflow's input, each field saying which flag of `rollout deploy --graph` it is.
    expect(document.components?.schemas?.['TaskRunRequest']).toMatchObject({
      required: ['graph'],
      additionalProperties: false,
      properties: {
        selection: { properties: { start: { description: expect.stringContaining('--start') } } },
        maxInTransition: { type: 'integer', default: 100, description: expect.stringContaining('--max-in-transition') },
      },
    });
  });

  it('is what GET /openapi.json answers', async () => {
    const reply = await createApi(dependencies)({ method: 'GET', path: '/openapi.json' });
    expect(reply).toMatchObject({ status: 200, body: buildOpenApiDocument() });
  });

  it('names the IAM (SigV4) auth of the deployed API', () => {
    expect(buildOpenApiDocument().components?.securitySchemes).toMatchObject({ sigv4: { type: 'apiKey', in: 'header', name: 'Authorization' } });
  });

  it('is what the tests check every answer against: an undocumented status or a body off its schema is caught', () => {
    const problem = { type: 'about:blank', title: 'Not Found', status: 404, detail: 'x' };
    expect(contractViolation('GET', '/environments/1', 404, 'application/problem+json', problem)).toBeUndefined();
    expect(contractViolation('GET', '/environments/1', 409, 'application/problem+json', problem)).toContain('status 409 is not documented');
    expect(contractViolation('GET', '/environments/1', 200, 'application/json', { id: 1, name: 'x' })).toContain('does not match');
    expect(contractViolation('GET', '/environments/1', 200, 'text/html', '<p>')).toContain('text/html');
    expect(contractViolation('PUT', '/environments/1', 405, 'application/problem+json', problem)).toBeUndefined();
    expect(contractViolation('PUT', '/environments/1', 405, 'application/problem+json', { detail: 1 })).toContain('does not match');
  });
});
