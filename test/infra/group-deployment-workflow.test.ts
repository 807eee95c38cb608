import { Stack } from 'aws-cdk-lib';
import { ASL_FILES, GROUP_DEPLOYMENT_FUNCTION_NAMES, TASK_GRAPH_FUNCTION_NAMES, type GroupDeploymentFunctionName } from '../../contracts';
import { createAslStateMachine } from '../../infra/constructs/asl-state-machine';
import { GroupDeploymentWorkflow } from '../../infra/constructs/group-deployment-workflow';
import { TaskGraphWorkflow } from '../../infra/constructs/task-graph-workflow';
import { importedFunctions, testApp } from '../support/synth-stack';

describe('GroupDeploymentWorkflow', () => {
  it('builds with every function of the workflow', () => {
    const stack = new Stack(testApp(), 'Complete');
    const taskGraph = new TaskGraphWorkflow(stack, 'TaskGraph', { functions: importedFunctions(stack, TASK_GRAPH_FUNCTION_NAMES) }).stateMachine;
    expect(
      () => new GroupDeploymentWorkflow(stack, 'Workflow', { functions: importedFunctions(stack, GROUP_DEPLOYMENT_FUNCTION_NAMES), taskGraph }),
    ).not.toThrow();
  });

  it('fails the synth, naming the ASL file and the placeholder, when a function is missing', () => {
    const stack = new Stack(testApp(), 'Incomplete');
    const functions = importedFunctions<GroupDeploymentFunctionName>(
      stack,
      GROUP_DEPLOYMENT_FUNCTION_NAMES.filter((name) => name !== 'CheckBatch'),
    );
    const taskGraph = new TaskGraphWorkflow(stack, 'TaskGraph', { functions: importedFunctions(stack, TASK_GRAPH_FUNCTION_NAMES) }).stateMachine;
    expect(() => new GroupDeploymentWorkflow(stack, 'Workflow', { functions, taskGraph })).toThrow(
      'statemachines/run-node-batches.asl.json: no value for ${CheckBatchFunctionArn}',
    );
  });
});

describe('createAslStateMachine', () => {
  it('fails the synth, naming the ASL file and the placeholder, when a child state machine is missing', () => {
    const stack = new Stack(testApp(), 'NoChild');
    const names = ['StartDeployment', 'PickReadyGroups', 'FailGroup', 'FinishDeployment', 'FailDeployment'] as const;
    expect(() =>
      createAslStateMachine(stack, { file: ASL_FILES.groupDeployment, stateMachineName: 'Parent', functions: importedFunctions(stack, names) }),
    ).toThrow('statemachines/group-deployment.asl.json: no value for ${DeployGroupStateMachineArn}');
  });
});
