import { readFileSync } from 'node:fs';
import path from 'node:path';
import { App, type Stack } from 'aws-cdk-lib';
import { Function as LambdaFunction, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { Template } from 'aws-cdk-lib/assertions';
import { PROJECT_ROOT } from '../../contracts';
import { RolloutStack } from '../../infra/rollout-stack';

/** The feature flags `cdk synth` runs with, so that the tests see the template that gets deployed. */
export function cdkJsonContext(): Record<string, unknown> {
  const { context } = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  return context;
}

/** An app that never bundles: bundling runs esbuild for seconds and changes nothing the tests look at. */
export function testApp(): App {
  return new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
}

export function synthRolloutStack(): Template {
  return Template.fromStack(new RolloutStack(testApp(), 'BaremetalRollout'));
}

/** Stand-ins for a workflow's functions (by name), so a workflow construct can be built on its own. */
export function importedFunctions<N extends string>(stack: Stack, names: readonly N[]): Record<N, IFunction> {
  return Object.fromEntries(
    names.map((name) => [
      name,
      LambdaFunction.fromFunctionAttributes(stack, name, {
        functionArn: `arn:aws:lambda:eu-west-1:123456789012:function:${name}`,
        sameEnvironment: true,
      }),
    ]),
  ) as Record<N, IFunction>;
}
