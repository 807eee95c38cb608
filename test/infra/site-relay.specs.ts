import type { Statement, TemplateQueries } from '../support/template-queries';

/**
 * The site relay's access (issue 29): `rollout relay --aws` on the slurmctld host assumes SiteRelayRole, which may
 * POST /site-events on the REST API's stage and nothing else; the route is behind IAM auth like every other method.
 */
export function siteRelaySpecs(stack: TemplateQueries): void {
  const relayRole = () => {
    const roles = stack.ofType('AWS::IAM::Role').filter(([id]) => id.includes('SiteRelayRole'));
    expect(roles).toHaveLength(1);
    return roles[0]!;
  };
  const outputs = () => (stack.template.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;

  it('SiteRelayRole may do one thing: execute-api:Invoke on POST /site-events in the API stage', () => {
    const [roleId, role] = relayRole();
    const [apiId] = stack.onlyOne('AWS::ApiGateway::RestApi');
    const policies = role.Properties.Policies as { PolicyDocument: { Statement: Statement[] } }[];
    expect(policies).toHaveLength(1);
    const statements = policies[0]!.PolicyDocument.Statement;
    expect(statements).toEqual([
      {
        Effect: 'Allow',
        Action: 'execute-api:Invoke',
        Resource: {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':execute-api:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':',
              { Ref: apiId },
              '/v1/POST/site-events',
            ],
          ],
        },
      },
    ]);
    // Nothing else reaches the role: no managed policy, no policy resource attached to it.
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    const attached = [...stack.ofType('AWS::IAM::Policy'), ...stack.ofType('AWS::IAM::ManagedPolicy')].filter(([, policy]) =>
      JSON.stringify(policy.Properties.Roles ?? []).includes(JSON.stringify({ Ref: roleId })),
    );
    expect(attached).toEqual([]);
  });

  it('is assumable by the account by default (its principals whose own policy allows sts:AssumeRole on it)', () => {
    const [, role] = relayRole();
    expect((role.Properties.AssumeRolePolicyDocument as { Statement: unknown[] }).Statement).toEqual([
      {
        Effect: 'Allow',
        Action: 'sts:AssumeRole',
        Principal: { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']] } },
      },
    ]);
  });

  it('POST /site-events is served by the POST method of {proxy+}, which requires IAM auth (SigV4)', () => {
    const [proxyId] = stack.onlyOne('AWS::ApiGateway::Resource');
    expect(stack.resources[proxyId]!.Properties.PathPart).toBe('{proxy+}');
    const posts = stack
      .ofType('AWS::ApiGateway::Method')
      .map(([, method]) => method.Properties)
      .filter((method) => method.HttpMethod === 'POST' && JSON.stringify(method.ResourceId) === JSON.stringify({ Ref: proxyId }));
    expect(posts).toHaveLength(1);
    expect(posts[0]!.AuthorizationType).toBe('AWS_IAM');
  });

  it('outputs the role ARN and the URL the relay posts to', () => {
    const [roleId] = relayRole();
    const [apiId] = stack.onlyOne('AWS::ApiGateway::RestApi');
    const [stageId] = stack.onlyOne('AWS::ApiGateway::Stage');
    expect(outputs()['SiteRelayRoleArn']?.Value).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
    expect(outputs()['SiteEventsUrl']?.Value).toEqual({
      'Fn::Join': [
        '',
        ['https://', { Ref: apiId }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }, '/', { Ref: stageId }, '/site-events'],
      ],
    });
  });
}
