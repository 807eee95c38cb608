import { INVOCATION_STATUS_CHANGE, type SsmInvocationStatusChange } from '../../core/site/command-end-event';

/**
 * An "EC2 Command Invocation Status-change Notification" as SSM publishes it to EventBridge (the AWS pages
 * core/site/command-end-event.ts names), for one invocation of a command on instance i-00000000000000001.
 */
export const invocationStatusChange = (status: string): SsmInvocationStatusChange => ({
  version: '0',
  id: 'e-1',
  'detail-type': INVOCATION_STATUS_CHANGE,
  source: 'aws.ssm',
  account: '123456789012',
  time: '2026-11-29T01:00:00.000Z',
  region: 'us-east-1',
  resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-00000000000000001'],
  detail: {
    'command-id': 'ceb96b84-16aa-4540-91e3-925a9a278b8c',
    'document-name': 'AWS-RunShellScript',
    'instance-id': 'i-00000000000000001',
    'requested-date-time': '2026-11-29T00:59:00.000Z',
    status,
  },
});
