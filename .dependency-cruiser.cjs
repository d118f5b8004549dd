// Import rules of lib/ (docs/architecture.md): the request flows one way, and so do imports:
//   express (inbound) -> gateway (use cases) -> providers (adapters) -> transport (outbound) -> leaves
// stores (what hosts replace: task stores, schedulers, idempotency stores, result storage) sit beside
// transport: express and gateway may import them, they import no use case, provider or Express
// A layer may import any layer below it, never one above; the leaves (errors, security, schemas,
// images, json, models, types.ts, default-limits.ts) import only leaves; lib/telemetry/ (the OpenTelemetry
// facade) sits just above the leaves, so every layer may call it. lib/options/ (the public option
// types) declares types only: every layer, the leaves too, may import it. `npm run lint:deps` (part
// of `npm test`) fails on any import against the flow.
const LEAVES = '^lib/(errors|security|schemas|images|json|models)/|^lib/(types|default-limits|clock)[.]ts$';
// the package entries (package.json "exports" but ./testing): re-exports only, and nothing in lib/ imports them
const ENTRIES = '^lib/(index|redis|storage|playground)[.]ts$';
const OPTIONS = '^lib/options/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'A cycle means two modules each need the other: one of them is in the wrong place.',
      from: { path: '^lib/' },
      to: { circular: true },
    },
    {
      name: 'no-folder-cycles',
      severity: 'error',
      comment:
        'Folders are layers: when a module of folder A imports folder B and one of B imports A (however indirectly, through ' +
        'other folders), the two folders are one layer in two places, though no module cycle may show it. Move the module ' +
        'that sits in the wrong folder. A folder and its subfolders count as one (lib/gateway/tasks importing lib/gateway is no cycle).',
      scope: 'folder',
      from: { path: '^lib/' },
      to: { circular: true },
    },
    {
      name: 'nothing-imports-entries',
      severity: 'error',
      comment: 'The entry files are the doors of the package (re-exports only): inside lib/, a module imports the module that defines a name.',
      from: { path: '^lib/' },
      to: { path: ENTRIES },
    },
    {
      name: 'gateway-not-to-express',
      severity: 'error',
      comment: 'Use cases do not know about Express: they return answers, the inbound side writes them.',
      from: { path: '^lib/gateway/' },
      to: { path: `^lib/express/|${ENTRIES}` },
    },
    {
      name: 'use-cases-without-express',
      severity: 'error',
      comment:
        'Use cases take plain data and return what they did (docs/architecture.md "One use-case shape"): nothing below ' +
        'the inbound side imports Express or its body parsers, not even their types.',
      from: { path: '^lib/(gateway|providers|transport|stores|telemetry|errors|security|schemas|images|json|models)/' },
      to: { path: '^node_modules/(@types/)?(express|express-serve-static-core|multer)/' },
    },
    {
      name: 'inbound-without-providers',
      severity: 'error',
      comment: "Routes read, call one use case and write its outcome: what a provider can do is the use cases' business, never the inbound side's.",
      from: { path: '^lib/express/' },
      to: { path: '^lib/providers/' },
    },
    {
      name: 'inbound-without-books',
      severity: 'error',
      comment:
        'The inbound side receives, authenticates, parses and writes: the books of paid work (lib/gateway/ledger/) are the ' +
        "gateway's, reached through what the use cases hand back and the resolved options' books, never imported (type imports count).",
      from: { path: '^lib/express/' },
      to: { path: '^lib/gateway/ledger/' },
    },
    {
      name: 'inbound-kept-work-through-its-keeper',
      severity: 'error',
      comment:
        'Work kept for a retry is the gateway\'s (docs/architecture.md "The books of paid work"): the inbound side reads the request, holds it and ' +
        'writes the kept answer, and reaches the rest through the keeper and the lapsed keys the router hands it ' +
        '(kept-work-keeper.ts, lapsed-keys.ts): never the expiry jobs, the records of leased work or the books of kept work.',
      from: { path: '^lib/express/' },
      to: { path: '^lib/gateway/kept-work/', pathNot: '^lib/gateway/kept-work/(kept-work-keeper|lapsed-keys)[.]ts$' },
    },
    {
      name: 'providers-only-down',
      severity: 'error',
      comment: 'Providers translate and call the transport; they never reach back into the use cases or the inbound side.',
      from: { path: '^lib/providers/' },
      to: { path: `^lib/(express|gateway)/|${ENTRIES}` },
    },
    {
      name: 'transport-only-down',
      severity: 'error',
      comment: 'The outbound HTTP client knows nothing of providers, use cases or Express.',
      from: { path: '^lib/transport/' },
      to: { path: `^lib/(express|gateway|providers)/|${ENTRIES}` },
    },
    {
      name: 'stores-only-down',
      comment:
        'What hosts replace (lib/stores/: task stores, job schedulers, idempotency stores, result storage) knows nothing of ' +
        'Express, use cases, providers or the upstream HTTP client: a host writes one against the interface alone.',
      severity: 'error',
      from: { path: '^lib/stores/' },
      to: { path: '^lib/(express|gateway|providers|transport)/|^lib/index[.]ts$' },
    },
    {
      name: 'leaves-only-leaves',
      severity: 'error',
      comment: 'Pure leaves (errors, security, schemas, images, json, types) import only other leaves and the option types.',
      from: { path: LEAVES },
      to: { path: '^lib/', pathNot: `${LEAVES}|${OPTIONS}` },
    },
    {
      name: 'options-are-types',
      severity: 'error',
      comment:
        'lib/options/ declares the public option types and nothing else: it imports types only (of the leaves, the stores ' +
        'and the telemetry API), so importing it costs no code and ties no layer to another.',
      from: { path: OPTIONS },
      to: { path: '^lib/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'options-only-down',
      severity: 'error',
      comment: 'The option types name what a host hands over; they know nothing of Express, use cases, providers or the transport.',
      from: { path: OPTIONS },
      to: { path: '^lib/(express|gateway|providers|transport)/|^lib/index[.]ts$' },
    },
    {
      name: 'telemetry-only-leaves',
      comment:
        'lib/telemetry/ is the one facade over @opentelemetry/api that express, gateway and transport call: it ' + 'imports only leaves, so every layer may use it and it can reach back into none.',
      severity: 'error',
      from: { path: '^lib/telemetry/' },
      to: { path: '^lib/', pathNot: `${LEAVES}|${OPTIONS}|^lib/telemetry/` },
    },
    {
      name: 'one-seam-per-provider',
      severity: 'error',
      comment: 'Outside lib/providers/, a provider is reached through the registry (registry.ts) and the Provider interface ' + '(provider.ts) only: routes and services never name a provider module.',
      from: { path: '^lib/', pathNot: '^lib/providers/' },
      to: { path: '^lib/providers/', pathNot: '^lib/providers/(provider|registry|call-context)[.]ts$' },
    },
    {
      name: 'nothing-imports-testing',
      severity: 'error',
      comment: 'lib/testing/ is the express-image-gateway/testing entry (contract suites for hosts): the gateway never ' + 'imports it, so its bundle and its runtime stay free of test code.',
      from: { path: '^lib/', pathNot: '^lib/testing/' },
      to: { path: '^lib/testing/' },
    },
    {
      name: 'testing-types-only',
      severity: 'error',
      comment: "The contract suites check a host's implementation against the public interfaces: they need types from lib/, never its code.",
      from: { path: '^lib/testing/' },
      to: { path: '^lib/', pathNot: '^lib/testing/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'lib-not-to-tests-or-examples',
      severity: 'error',
      comment: 'The package never imports its tests, examples, benchmarks or scripts.',
      from: { path: '^lib/' },
      to: { path: '^(spec|examples|bench|scripts)/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve is a typo or a missing dependency.',
      from: { path: '^lib/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // type-only imports count: a type import against the flow is a design dependency all the same
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.d.ts'],
    },
  },
};
