import { ConnectorRecordMissingError } from '../../adapters/errors';
import type { ConnectorRecords, ConnectorState, ConnectorStateKind } from '../../ports/connector-state';

/** ConnectorState in this process's memory, for unit tests of the connectors (the product keeps it in the table). */
export function memoryConnectorState(): ConnectorState {
  const kinds = new Map<ConnectorStateKind, Map<string, unknown>>();
  return {
    records<T extends { name: string }>(kind: ConnectorStateKind): ConnectorRecords<T> {
      let records = kinds.get(kind) as Map<string, T> | undefined;
      if (!records) kinds.set(kind, (records = new Map<string, T>()) as Map<string, unknown>);
      const store = records;
      // Copies in and out, as a table would: a caller mutating its object changes nothing stored.
      const copy = (record: T): T => structuredClone(record);
      return {
        get: async (name) => {
          const record = store.get(name);
          return record && copy(record);
        },
        create: async (record) => {
          const existing = store.get(record.name);
          if (existing) return { record: copy(existing), created: false };
          store.set(record.name, copy(record));
          return { record, created: true };
        },
        update: async (record) => {
          if (!store.has(record.name)) throw new ConnectorRecordMissingError(kind, record.name);
          store.set(record.name, copy(record));
        },
      };
    },
  };
}
