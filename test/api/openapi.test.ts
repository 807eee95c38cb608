import SwaggerParser from '@apidevtools/swagger-parser';
import { apiRoutes, createApi } from '../../api';
import type { ApiDependencies } from '../../api';
import { buildOpenApiDocument } from '../../api/openapi';

/** The routes only, for their table: no handler runs here. */
const unused = new Proxy({}, { get: () => () => Promise.reject(new Error('not called')) });
const dependencies = { controlPlane: unused, environments: unused } as unknown as ApiDependencies;

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
      Object.keys(item as object).filter((key) => ['get', 'post', 'put', 'delete', 'patch'].includes(key)).map((method) => `${method} ${path}`),
    );
    expect(documented.sort()).toEqual(served.sort());
  });

  it("takes the request schemas from the domain: the clone body requires Fuel's name and release_id", () => {
    const document = buildOpenApiDocument();
    const clone = document.components?.schemas?.['CloneRequest'];
    expect(clone).toMatchObject({ type: 'object', required: ['name', 'release_id'], properties: { release_id: { type: 'integer' } } });
    expect(document.components?.schemas?.['UpgradeRequest']).toMatchObject({ required: expect.arrayContaining(['startingLabel', 'upgradeStepSize', 'workloadManagerType']) });
  });

  it('is what GET /openapi.json answers', async () => {
    const reply = await createApi(dependencies)({ method: 'GET', path: '/openapi.json' });
    expect(reply).toMatchObject({ status: 200, body: buildOpenApiDocument() });
  });
});
