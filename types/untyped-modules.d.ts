declare module 'dynalite' {
  import type { Server } from 'node:http';
  interface DynaliteOptions {
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
  }
  function dynalite(options?: DynaliteOptions): Server;
  export default dynalite;
}
declare module 'asl-validator' {
  interface ValidationResult {
    isValid: boolean;
    errors: { message?: string; text?: string }[];
  }
  function validator(definition: unknown, options?: { checkPaths?: boolean; checkArn?: boolean }): ValidationResult;
  export default validator;
}
