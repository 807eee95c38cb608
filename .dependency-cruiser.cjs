/**
 * The import graph's rule that ESLint cannot see file by file: no cycles, of any length, between the
 * product's modules (type-only imports included: a type cycle is still two files that cannot be
 * understood apart). The per-folder arrows are ESLint's (eslint.config.js). `npm run lint` runs both.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle: these modules import each other (directly or through others). Move what both need into a module below them.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|cdk\\.out)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
