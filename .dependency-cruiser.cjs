// The layering rules of DESIGN.md "Layout and layering", checked on every `npm run lint`
// (dependency-cruiser). Arrows point down only: db/ is the ground floor, the two planes (api/,
// admin/) share what they need through http/, jobs/, net/ and db/, and the runner's insides stay
// its own. Type-only imports count too: a type pulls its module's layer in as much as a value.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'db-is-the-ground-floor',
      comment:
        'db/ imports only config.ts, logger.ts, errors.ts and its own files: a store takes values its caller already parsed or embedded.',
      severity: 'error',
      from: { path: '^db/' },
      to: {
        dependencyTypesNot: [
          'core',
          'npm',
          'npm-dev',
          'npm-optional',
          'npm-peer',
          'npm-no-pkg',
          'npm-unknown',
        ],
        pathNot: ['^db/', '^(config|logger|errors)\\.ts$'],
      },
    },
    {
      name: 'api-does-not-import-admin',
      comment: 'What both planes need lives in http/, jobs/, net/ or db/.',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^admin/' },
    },
    {
      name: 'admin-does-not-import-api',
      comment: 'What both planes need lives in http/, jobs/, net/ or db/.',
      severity: 'error',
      from: { path: '^admin/' },
      to: { path: '^api/' },
    },
    {
      name: 'runner-insides-are-the-runners',
      comment:
        "Only runner/ imports runner/sandbox/, runner/threads/ and the runner's job consumers (runner/*-jobs.ts); what puts work on a queue is in jobs/.",
      severity: 'error',
      from: { pathNot: '^runner/' },
      to: { path: ['^runner/(sandbox|threads)/', '^runner/[^/]+-jobs\\.ts$'] },
    },
    {
      name: 'no-circular',
      comment: 'Import cycles make the layers meaningless (and module start-up order fragile).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // The same files as the layering check: the service's sources, not tests, benches or scripts.
    exclude: { path: '^(node_modules|test|bench|scripts|patches|\\.data|admin/console/dist)/' },
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'] },
  },
};
