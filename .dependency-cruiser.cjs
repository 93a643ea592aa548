// The layers (docs/architecture.md), checked by `npm run lint:layers` in `npm run lint`.
// Arrows point down: bin -> runtime -> api | activities | workflows -> services -> db -> domain.
const layer = (name) => `^${name}/`;
/** Forbids imports from `from` into any of `into` (folders; workflows/messages.ts, the shared message definitions, stays importable). */
const layerRule = (name, from, into, comment) => ({
  name,
  severity: 'error',
  ...(comment ? { comment } : {}),
  from: { path: layer(from) },
  to: { path: `^(${into.filter((l) => l !== 'workflows').join('|')})/${into.includes('workflows') ? '|^workflows/(?!messages\\.ts$)' : ''}` },
});
const ENTRY_POINTS = ['runtime', 'bin', 'cli', 'scripts'];

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'No import circles, type-only imports included.', from: {}, to: { circular: true } },
    layerRule(
      'domain-is-pure',
      'domain',
      ['api', 'services', 'activities', 'workflows', 'db', 'config', ...ENTRY_POINTS],
      'domain/ is pure logic: it imports nothing of the other layers.',
    ),
    layerRule('db-below-services', 'db', ['api', 'services', 'activities', 'workflows', ...ENTRY_POINTS]),
    layerRule(
      'services-below-api-and-activities',
      'services',
      ['api', 'activities', 'workflows', ...ENTRY_POINTS],
      'services/ is called by the API, activities and CLIs; it calls none of them.',
    ),
    layerRule(
      'api-is-http-only',
      'api',
      ['activities', 'workflows', ...ENTRY_POINTS],
      'api/ reaches the data through services/, never activities or workflow code.',
    ),
    layerRule('activities-not-upward', 'activities', ['api', 'workflows', ...ENTRY_POINTS]),
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
    {
      name: 'inbox-app-is-a-browser-client',
      severity: 'error',
      comment: 'inbox/app runs in the browser: it reaches the service only through the public HTTP API, never its code.',
      from: { path: '^inbox/app/' },
      to: { pathNot: ['^inbox/app/', 'node_modules/(preact|htm|eventsource-parser)/'] },
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
