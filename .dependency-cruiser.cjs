// The layers (docs/architecture.md), checked by `npm run lint:layers` in `npm run lint`.
// Arrows point down: bin -> runtime -> api | activities | workflows -> services -> db -> domain.
const layer = (name) => `^${name}/`;
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'No import circles, type-only imports included.', from: {}, to: { circular: true } },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment: 'domain/ is pure logic: it imports nothing of the other layers.',
      from: { path: layer('domain') },
      to: { path: '^(api|services|activities|workflows|db|runtime|bin|cli|config|scripts)/' },
    },
    {
      name: 'db-below-services',
      severity: 'error',
      from: { path: layer('db') },
      to: { path: '^(api|services|activities|workflows|runtime|bin|cli|scripts)/' },
    },
    {
      name: 'services-below-api-and-activities',
      severity: 'error',
      comment: 'services/ is called by the API, activities and CLIs; it calls none of them. Workflow messages (workflows/messages.ts) are shared definitions.',
      from: { path: layer('services') },
      to: { path: '^(api|activities|runtime|bin|cli|scripts)/|^workflows/(?!messages\\.ts$)' },
    },
    {
      name: 'api-is-http-only',
      severity: 'error',
      comment: 'api/ reaches the data through services/, never activities or workflow code.',
      from: { path: layer('api') },
      to: { path: '^(activities|runtime|bin|cli|scripts)/|^workflows/(?!messages\\.ts$)' },
    },
    {
      name: 'activities-not-upward',
      severity: 'error',
      from: { path: layer('activities') },
      to: { path: '^(api|runtime|bin|cli|scripts)/|^workflows/(?!messages\\.ts$)' },
    },
    {
      name: 'workflows-deterministic',
      severity: 'error',
      comment: 'Workflow code imports other workflow code, pure domain code, @temporalio/workflow and @temporalio/common; anything else only as a type.',
      from: { path: layer('workflows') },
      to: {
        dependencyTypesNot: ['type-only'],
        pathNot: ['^(workflows|domain)/', 'node_modules/@temporalio/(workflow|common)/'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|\\.tools|data|tests)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'] },
  },
};
