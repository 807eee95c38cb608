declare module 'asl-validator' {
  interface ValidationResult {
    isValid: boolean;
    errors: { message?: string; text?: string }[];
  }
  function validator(definition: unknown, options?: { checkPaths?: boolean; checkArn?: boolean }): ValidationResult;
  export default validator;
}
