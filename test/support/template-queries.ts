import type { Template } from 'aws-cdk-lib/assertions';

export interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
}
export interface Statement {
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, string[]>>;
}

export const getAttArn = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

/** The resources every statement granting `action` names. */
export const grantedOn = (statements: Statement[], action: string): unknown[] =>
  statements.filter((s) => [s.Action].flat().includes(action)).flatMap((s) => [s.Resource].flat());

/** An ARN in the stack's own partition, region and account, as formatArn renders it. */
export const stackArn = (service: string, resource: string, ...rest: unknown[]) => ({
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:${service}:`, { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:${resource}`, ...rest]],
});

/**
 * Lookups over a template synthesized on first use, then kept: spec modules get the instance when
 * jest collects them, and every test of every module shares the one synthesis (seconds each).
 */
export class TemplateQueries {
  private synthesized?: { template: Template; resources: Record<string, Resource> };

  constructor(private readonly synth: () => Template) {}

  get template(): Template {
    return this.load().template;
  }

  get resources(): Record<string, Resource> {
    return this.load().resources;
  }

  private load(): { template: Template; resources: Record<string, Resource> } {
    if (!this.synthesized) {
      const template = this.synth();
      this.synthesized = { template, resources: (template.toJSON() as { Resources: Record<string, Resource> }).Resources };
    }
    return this.synthesized;
  }

  ofType(type: string): [string, Resource][] {
    return Object.entries(this.resources).filter(([, r]) => r.Type === type);
  }

  onlyOne(type: string): [string, Resource] {
    const found = this.ofType(type);
    expect(found).toHaveLength(1);
    return found[0] as [string, Resource];
  }

  /** The logical id of the one Lambda that runs the named export (function names are unique across entries). */
  functionId(name: string): string {
    return this.single('AWS::Lambda::Function', (r) => r.Properties.Handler === `index.${name}`)[0];
  }

  stateMachine(stateMachineName: string): [string, Resource] {
    return this.single('AWS::StepFunctions::StateMachine', (r) => r.Properties.StateMachineName === stateMachineName);
  }

  /** Every statement of the policies attached to the role a resource runs as (`Role` or `RoleArn`: GetAtt of the role). */
  statementsOf(resource: Resource): Statement[] {
    const roleArn = (resource.Properties.Role ?? resource.Properties.RoleArn) as { 'Fn::GetAtt': [string, string] };
    const roleId = roleArn['Fn::GetAtt'][0];
    return this.ofType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  }

  private single(type: string, where: (resource: Resource) => boolean): [string, Resource] {
    const found = this.ofType(type).filter(([, r]) => where(r));
    expect(found).toHaveLength(1);
    return found[0] as [string, Resource];
  }
}

type AslState = Record<string, unknown> & { ItemProcessor?: { States: Record<string, AslState> } };

/** TimeoutSeconds of the Task that invokes each `${<Name>FunctionArn}`, read from an ASL file, Map iterations included. */
export function taskTimeouts(asl: string): Map<string, number> {
  const walk = (states: Record<string, AslState>): [string, number][] =>
    Object.values(states).flatMap((state) => {
      const functionName = (state.Parameters as Record<string, unknown> | undefined)?.FunctionName;
      const match = typeof functionName === 'string' ? functionName.match(/^\$\{(\w+)FunctionArn\}$/) : null;
      return [
        // A callback task's TimeoutSeconds is its wait for the token, not its function's run: left out.
        ...(match && !String(state.Resource).endsWith('.waitForTaskToken') ? [[match[1] as string, state.TimeoutSeconds as number] as [string, number]] : []),
        ...(state.ItemProcessor ? walk(state.ItemProcessor.States) : []),
      ];
    });
  return new Map(walk((JSON.parse(asl) as { States: Record<string, AslState> }).States));
}

/** What every workflow's state machine must be: the very ASL file the embedded engine runs, inline, STANDARD, traced and logged without data. */
export function deployedAslProperties(asl: string): Record<string, unknown> {
  return {
    DefinitionString: asl,
    StateMachineType: 'STANDARD',
    TracingConfiguration: { Enabled: true },
    LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
  };
}

/** What every workflow function must be: Node 22 on arm64, 512 MB, traced, logging to its construct's own log group, with the timeout of the Task that invokes it. */
export function deployedFunctionProperties(timeoutSeconds: number | undefined, logGroupPrefix: string): Record<string, unknown> {
  return {
    Runtime: 'nodejs22.x',
    Architectures: ['arm64'],
    MemorySize: 512,
    Timeout: timeoutSeconds,
    TracingConfig: { Mode: 'Active' },
    LoggingConfig: { LogGroup: { Ref: expect.stringMatching(new RegExp(`^${logGroupPrefix}`)) } },
  };
}
