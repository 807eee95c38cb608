export * from './operations';
export * from './policy';
export * from './schedule';
export * from './maintenance-windows';
