// Import rules, checked by `npm run lint` (docs/development.md, "Layers"): no import cycle at all (type-only imports
// included), and no folder importing from a layer above its own. A service's module.ts declares the service to the
// platform, so it sits at the top with runtime/.
const SERVICES = '(docindex|transcription|recipes|ledger)';
const layers = [
  { name: 'core', path: '^core/' },
  { name: 'outbound, db', path: '^(outbound|db)/' },
  { name: 'jobs, push, llm', path: '^(jobs|push|llm)/' },
  { name: 'activities, workflows, api, schemas', path: '^(activities|workflows|api|schemas)/' },
  { name: 'services', path: `^${SERVICES}/`, pathNot: `^${SERVICES}/module\\.ts$` },
  { name: 'runtime, bin, service modules', path: `^(runtime/|bin/|${SERVICES}/module\\.ts$)` },
];

const upward = [];
layers.forEach((low, i) =>
  layers.slice(i + 1).forEach((high) =>
    upward.push({
      name: 'no-upward-import',
      comment: `${low.name} may not import ${high.name}, a layer above it`,
      severity: 'error',
      from: { path: low.path, ...(low.pathNot && { pathNot: low.pathNot }) },
      to: { path: high.path, ...(high.pathNot && { pathNot: high.pathNot }) },
    }),
  ),
);

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'an import cycle, type-only imports included', severity: 'error', from: {}, to: { circular: true } },
    ...upward,
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|web/src)' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
