export * from './attributes';
export * from './schemas';
export * from './upgrade-seed';
export * from './environment-upgrade';
export * from './registration';
export * from './session-transitions';
