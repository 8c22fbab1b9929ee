/**
 * The import rules of docs/architecture.md ("Layers"), checked by `npm run lint`
 * (so by `npm test` and CI): `npm run lint:deps`. Type-only imports count
 * (tsPreCompilationDeps), so a cycle or an upward edge made only of types fails too.
 *
 * Layers, lowest first; a folder imports only from itself and the folders below it:
 *   api/ -> core/ -> kube/ -> runtime/ -> observability/ -> controllers/, cli/ (side by side) -> src/*.ts (wiring)
 * test/unit/architecture.test.ts proves that each rule fails on a tree that breaks it.
 */
const layer = (name, comment, mayImport) => ({
  name,
  comment,
  severity: 'error',
  from: { path: `^src/${name.replace(/-.*/, '')}/` },
  to: { path: '^src/', pathNot: `^src/(${mayImport.join('|')})/` },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No file imports itself through other files, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    layer('api-imports-only-api', 'api/ (schemas, CRD, names) is the bottom layer: it imports nothing else of src/.', ['api']),
    layer('core-imports-only-api', 'core/ is pure decisions over values: it imports only api/ and itself.', ['api', 'core']),
    layer('kube-imports-below', 'kube/ (the client, its clock and request budget) imports api/ and core/, never runtime/ or above.', ['api', 'core', 'kube']),
    layer('runtime-imports-below', 'runtime/ (informers, work queue, leader election) builds on kube/; nothing below imports it.', ['api', 'core', 'kube', 'runtime']),
    layer('observability-imports-below', 'observability/ is used by controllers/ and the wiring, and imports neither.', ['api', 'core', 'kube', 'runtime', 'observability']),
    layer('controllers-import-below', 'controllers/ import the layers below, never cli/ or the wiring (src/*.ts).', ['api', 'core', 'kube', 'runtime', 'observability', 'controllers']),
    layer('cli-imports-below', 'cli/ stands beside controllers/: the same core decisions, run once; no controllers/, observability/ or wiring import.', ['api', 'core', 'kube', 'runtime', 'cli']),
    {
      name: 'core-holds-no-client',
      comment: 'core/ reads no clock, holds no client and starts no timer: of the node builtins only crypto, and no client, logger or metrics package.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { dependencyTypes: ['core'], pathNot: '^(node:)?crypto$' },
    },
    {
      name: 'core-holds-no-client-package',
      comment: 'core/ imports no API client, logger or metrics library.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '(^|/)node_modules/(@kubernetes/client-node|pino|prom-client)/' },
    },
    {
      name: 'only-kube-talks-to-the-api-server',
      comment: 'kube/ is the only code of src/ that imports the Kubernetes client library.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/kube/' },
      to: { path: '(^|/)node_modules/@kubernetes/client-node/' },
    },
    {
      name: 'src-imports-no-tests',
      comment: 'src/ is shipped (package.json "files"): it imports nothing from test/, bench/ or hack/.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|hack)/' },
    },
    {
      name: 'resolvable',
      comment: 'Every import resolves (but the built dist/ that the integration setup loads): an import the check cannot follow would escape every rule above.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true, pathNot: '^(\\.\\./)+dist/' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    // Packages that publish only an "exports" map (@bufbuild/cel-spec/testdata/*.js) resolve as Node resolves them.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
