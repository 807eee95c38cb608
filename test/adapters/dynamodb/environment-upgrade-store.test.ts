import { DynamoDbEnvironmentUpgradeStore } from '../../../adapters/dynamodb/dynamodb-environment-upgrade-store';
import { ENVIRONMENT_UPGRADE_KIND, type EnvironmentUpgradeSession } from '../../../core/environments';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../local/local-dynamodb';

let db: LocalDynamoDb;
let store: DynamoDbEnvironmentUpgradeStore;
beforeEach(async () => {
  db = await startLocalDynamoDb();
  store = new DynamoDbEnvironmentUpgradeStore({ tableName: db.tableName, client: db.client });
});
afterEach(() => db.close());

const session = (upgradeId: string, createdAt = '2025-01-01T00:00:00.000Z'): EnvironmentUpgradeSession => ({
  upgradeId,
  kind: ENVIRONMENT_UPGRADE_KIND,
  environmentId: 5,
  state: 'UPDATING',
  completed: false,
  createdAt,
  progress: { phase: 'CLONING', phaseStartedAt: 0, errorCount: 0 },
  messages: [],
});

describe('DynamoDbEnvironmentUpgradeStore', () => {
  it('creates once (a second create returns the stored one), lists newest first, saves at a revision only', async () => {
    await store.createUpgrade(session('a'));
    expect(await store.createUpgrade({ ...session('a'), messages: ['other'] })).toEqual({ session: session('a'), revision: 0 });
    await store.createUpgrade(session('b', '2025-01-02T00:00:00.000Z'));
    expect((await store.listUpgrades()).map((s) => s.upgradeId)).toEqual(['b', 'a']);
    await store.saveUpgrade({ ...session('a'), messages: ['one'] }, 0);
    await expect(store.saveUpgrade({ ...session('a'), messages: ['stale'] }, 0)).rejects.toMatchObject({ name: 'StaleWriteError' });
    expect(await store.getUpgrade('a')).toEqual({ session: { ...session('a'), messages: ['one'] }, revision: 1 });
  });

  it('notes the newest generation apart from the revision: an older one is ignored, a save of a session read before it keeps it', async () => {
    await store.createUpgrade(session('a'));
    const before = (await store.getUpgrade('a'))!;
    await store.noteGeneration('a', 2);
    await store.noteGeneration('a', 1);
    await store.saveUpgrade({ ...before.session, messages: ['saved'] }, before.revision);
    expect(await store.getUpgrade('a')).toEqual({ session: { ...session('a'), messages: ['saved'], generation: 2 }, revision: 1 });
    await expect(store.noteGeneration('nope', 1)).resolves.toBeUndefined();
    expect(await store.getUpgrade('nope')).toBeUndefined();
  });

  it('cancels an UPDATING session only, and an increment saved from before the cancel is refused', async () => {
    await store.createUpgrade(session('a'));
    expect((await store.requestCancel('a')).state).toBe('DELETING');
    await expect(store.saveUpgrade({ ...session('a'), messages: ['from before'] }, 0)).rejects.toMatchObject({ name: 'StaleWriteError' });
    await expect(store.requestCancel('a')).rejects.toMatchObject({ name: 'SessionNotCancellableError' });
    await expect(store.requestCancel('nope')).rejects.toMatchObject({ name: 'SessionNotFoundError' });
  });

  it('lets one session hold an environment until it ends; of concurrent claims exactly one wins', async () => {
    const ids = Array.from({ length: 6 }, (_, i) => `s${i}`);
    for (const id of ids) await store.createUpgrade(session(id));
    const holders = await Promise.all(ids.map((id) => store.claimEnvironment(5, id)));
    const winners = ids.filter((_, i) => holders[i] === undefined);
    expect(winners).toHaveLength(1);
    expect(holders.filter((h) => h !== undefined)).toEqual(Array(5).fill(winners[0]));
    expect(await store.activeUpgradeOf(5)).toBe(winners[0]);
    expect(await store.claimEnvironment(5, winners[0]!)).toBeUndefined();

    // Once the holder has ended, the next claim takes the environment over.
    const { session: held, revision } = (await store.getUpgrade(winners[0]!))!;
    await store.saveUpgrade({ ...held, state: 'FAILED', progress: { ...held.progress, phase: 'FAILED' } }, revision);
    expect(await store.activeUpgradeOf(5)).toBeUndefined();
    const next = ids.find((id) => id !== winners[0])!;
    expect(await store.claimEnvironment(5, next)).toBeUndefined();
    expect(await store.activeUpgradeOf(5)).toBe(next);
    // A claim by a session never stored holds nothing.
    await store.deleteUpgrade(next);
    expect(await store.activeUpgradeOf(5)).toBeUndefined();
  });
});
