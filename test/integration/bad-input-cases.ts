/**
 * The bad-input suite's table of malformed Bundles (issue 12), shared by
 * the suite that applies each to the real API server and operator
 * (bad-input.test.ts) and the check that `bundlesmith validate` gives each
 * the same verdict offline (validate-agreement.test.ts).
 */
import { Annotations } from '../../src/api/names.js';

export type RawResource = Record<string, unknown>;
export const cm = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data: { a: 'b' },
  ...extra,
});
export const res = (name: string, object: Record<string, unknown>, references?: unknown[]): RawResource => ({
  name,
  ...(references ? { references } : {}),
  spec: { object },
});
const withMeta = (name: string, meta: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...meta },
  data: { a: 'b' },
  ...extra,
});
const delayed = (name: string, delay: string): Record<string, unknown> =>
  withMeta(name, { annotations: { [Annotations.deletionDelay]: delay } });
function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: 'x' };
  for (let i = 1; i < depth; i++) v = { n: v };
  return v;
}

/**
 * Answered by the operator: the Bundle's Error condition (True) says `says`.
 * `bundlesmith validate` refuses it offline with a message `says` matches
 * too, unless it needs the cluster (`needsCluster` says why).
 */
export interface OperatorCase {
  title: string;
  /** The bad spec's resources, given the case's index (names must be unique in the namespace). */
  resources: (i: number) => RawResource[];
  says: RegExp;
  /** Extra spec fields (serviceAccountName). */
  spec?: Record<string, unknown>;
  /**
   * Resources listed, and Ready, before the bad spec comes (beside the object
   * that must stay). A valid spec prunes what it dropped while its other
   * resources merely wait for their dependencies; a reference that finds no
   * value shows only once its dependency is there, so that dependency is
   * there first, as when a user adds a reference to an existing resource.
   */
  before?: (i: number) => RawResource[];
  /** Why only the cluster can judge this case: `validate` accepts it, offline. */
  needsCluster?: string;
}

export const operatorCases: OperatorCase[] = [
  {
    title: 'two resources defining one object',
    resources: (i) => [res('a', cm(`same-${i}`)), res('b', cm(`same-${i}`))],
    says: /resource "b": defines ConfigMap same-\d+, already defined by resource "a"/,
  },
  {
    title: 'a reference to a resource not in the Bundle',
    resources: (i) => [res('a', cm(`ref-${i}`), [{ resource: 'ghost' }])],
    says: /refers to resource "ghost", which is not in the Bundle/,
  },
  {
    title: 'a mutual reference',
    resources: (i) => [res('a', cm(`mut-a-${i}`), [{ resource: 'b' }]), res('b', cm(`mut-b-${i}`), [{ resource: 'a' }])],
    says: /^resource "a": reference cycle: a -> b -> a$/,
  },
  {
    title: 'a three-cycle',
    resources: (i) => [
      res('a', cm(`c3a-${i}`), [{ resource: 'b' }]),
      res('b', cm(`c3b-${i}`), [{ resource: 'c' }]),
      res('c', cm(`c3c-${i}`), [{ resource: 'a' }]),
    ],
    says: /reference cycle: a -> b -> c -> a/,
  },
  {
    title: 'a reference name used twice',
    resources: (i) => [
      res('a', cm(`rn-${i}`, { data: { x: '!{x}' } }), [
        { name: 'x', resource: 'b', path: 'data.a' },
        { name: 'x', resource: 'b', path: 'data.a' },
      ]),
      res('b', cm(`rnb-${i}`)),
    ],
    says: /reference name "x" is used 2 times/,
  },
  {
    title: 'a named reference without a path',
    resources: (i) => [res('a', cm(`np-${i}`, { data: { x: '!{x}' } }), [{ name: 'x', resource: 'b' }]), res('b', cm(`npb-${i}`))],
    says: /reference "x" has a name but no path/,
  },
  {
    title: 'a path that does not parse',
    resources: (i) => [
      res('a', cm(`pp-${i}`, { data: { x: '!{x}' } }), [{ name: 'x', resource: 'b', path: 'data[*]' }]),
      res('b', cm(`ppb-${i}`)),
    ],
    says: /reference "x": path "data\[\*\]": unsupported subscript/,
  },
  {
    title: 'an unterminated quoted path',
    resources: (i) => [
      res('a', cm(`pq-${i}`, { data: { x: '!{x}' } }), [{ name: 'x', resource: 'b', path: "data['a" }]),
      res('b', cm(`pqb-${i}`)),
    ],
    says: /reference "x": path "data\['a"/,
  },
  {
    title: 'a modifier',
    resources: (i) => [res('a', cm(`mod-${i}`), [{ resource: 'b', modifier: 'bindsecret' }]), res('b', cm(`modb-${i}`))],
    says: /has modifier "bindsecret": modifiers are not supported/,
  },
  {
    title: 'a placeholder naming no reference',
    resources: (i) => [res('a', cm(`ph-${i}`, { data: { x: '!{nothing}' } }))],
    says: /placeholder "!\{nothing\}" at data\.x names no reference of this resource/,
  },
  {
    title: 'a placeholder as apiVersion',
    resources: (i) => [
      res('a', { apiVersion: '!{v}', kind: 'ConfigMap', metadata: { name: `pv-${i}` } }, [{ name: 'v', resource: 'b', path: 'data.a' }]),
      res('b', cm(`pvb-${i}`)),
    ],
    says: /object apiVersion cannot be a reference placeholder/,
  },
  {
    title: 'a placeholder as kind',
    resources: (i) => [
      res('a', { apiVersion: 'v1', kind: '!{k}', metadata: { name: `pk-${i}` } }, [{ name: 'k', resource: 'b', path: 'data.a' }]),
      res('b', cm(`pkb-${i}`)),
    ],
    says: /object kind cannot be a reference placeholder/,
  },
  {
    title: 'a placeholder as name',
    resources: () => [res('a', withMeta('!{n}', {}), [{ name: 'n', resource: 'b', path: 'data.a' }]), res('b', cm('pn-b'))],
    says: /object metadata\.name cannot be a reference placeholder/,
  },
  {
    title: 'a placeholder as a key',
    resources: (i) => [
      res('a', cm(`pkey-${i}`, { data: { '!{x}': 'v' } }), [{ name: 'x', resource: 'b', path: 'data.a' }]),
      res('b', cm(`pkeyb-${i}`)),
    ],
    says: /placeholder used as a key at data\.!\{x\}/,
  },
  {
    title: 'another namespace',
    resources: (i) => [res('a', withMeta(`ons-${i}`, { namespace: 'kube-system' }))],
    says: /object namespace "kube-system" differs from the Bundle's namespace/,
  },
  {
    title: 'a cluster-scoped kind',
    resources: (i) => [res('a', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `bad-input-ns-${i}` } })],
    says: /Namespace is cluster-scoped: a namespaced Bundle cannot own it/,
  },
  {
    title: 'an unknown kind',
    needsCluster: "whether a kind is installed is the cluster's to say (diff asks it)",
    resources: (i) => [res('a', { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: `g-${i}` } })],
    says: /kind Gadget of example\.com\/v1 is not known to the API server/,
  },
  {
    title: 'a controller ownerReference of the user',
    resources: (i) => [
      res(
        'a',
        withMeta(`ctl-${i}`, {
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: '00000000-0000-0000-0000-000000000001', controller: true },
          ],
        }),
      ),
    ],
    says: /ownerReference with controller: true \(ReplicaSet rs\)/,
  },
  {
    title: 'the deletionTimestamp annotation',
    resources: (i) => [res('a', withMeta(`dts-${i}`, { annotations: { [Annotations.deletionTimestamp]: '2020-01-01T00:00:00Z' } }))],
    says: /carries the smith\.atlassian\.com\/deletionTimestamp annotation, which only the operator may set/,
  },
  {
    title: 'an approval in the spec',
    resources: (i) => [res('a', withMeta(`dap-${i}`, { annotations: { [Annotations.deletionApproved]: '2999-01-01T00:00:00Z' } }))],
    says: /carries the smith\.atlassian\.com\/deletionApproved annotation, which approves one countdown on the live object/,
  },
  {
    title: 'a plugin',
    resources: () => [{ name: 'a', spec: { plugin: { name: 'catalog', objectName: 'x', spec: {} } } }],
    says: /spec\.plugin \("catalog"\) is not supported/,
  },
  {
    title: 'neither object nor plugin',
    resources: () => [{ name: 'a', spec: {} }],
    says: /resource "a": spec has neither object nor plugin/,
  },
  {
    title: 'the object name "."',
    resources: () => [res('a', withMeta('.', {}))],
    says: /object metadata\.name "\." cannot be a Kubernetes object name/,
  },
  {
    title: 'the object name ".."',
    resources: () => [res('a', withMeta('..', {}))],
    says: /object metadata\.name "\.\." cannot be a Kubernetes object name/,
  },
  {
    title: 'an object name with "/"',
    resources: () => [res('a', withMeta('a/b', {}))],
    says: /object metadata\.name "a\/b" cannot be a Kubernetes object name/,
  },
  {
    title: 'an object name with "%"',
    resources: () => [res('a', withMeta('a%2fb', {}))],
    says: /object metadata\.name "a%2fb" cannot be a Kubernetes object name/,
  },
  {
    title: 'a Bundle listing a Bundle',
    resources: (i) => [
      res('a', { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', metadata: { name: `inner-${i}` }, spec: { resources: [] } }),
    ],
    says: /a Bundle cannot list a Bundle/,
  },
  {
    title: 'an object nested 1,000 levels',
    resources: (i) => [res('a', cm(`deep-${i}`, { spec: nested(1_000) }))],
    says: /resource "a": object nests deeper than 100 levels/,
  },
  {
    title: 'an object nested 101 levels',
    resources: (i) => [res('a', cm(`deep101-${i}`, { spec: nested(101) }))],
    says: /object nests deeper than 100 levels/,
  },
  {
    title: "a number in a Secret's stringData",
    resources: (i) => [res('a', { apiVersion: 'v1', kind: 'Secret', metadata: { name: `sd-${i}` }, stringData: { port: 5432 } })],
    says: /stringData\.port is number: Secret stringData values must be strings/,
  },
  {
    title: 'a number in ConfigMap data',
    resources: (i) => [res('a', cm(`num-${i}`, { data: { n: 5 } }))],
    says: /data\.n is number: ConfigMap data values must be strings/,
  },
  {
    title: 'a boolean in ConfigMap data',
    resources: (i) => [res('a', cm(`bool-${i}`, { data: { on: true } }))],
    says: /data\.on is boolean/,
  },
  {
    title: 'a list as Secret data',
    resources: (i) => [res('a', { apiVersion: 'v1', kind: 'Secret', metadata: { name: `sl-${i}` }, data: ['x'] })],
    says: /resource "a": data must be a map of strings/,
  },
  ...['banana', '-1s', '1e9h', '9999999h', '1h-30m', ''].map((delay): OperatorCase => ({
    title: `deletionDelay ${JSON.stringify(delay)}`,
    resources: (i) => [res('a', delayed(`dd-${i}`, delay))],
    says: /resource "a": annotation smith\.atlassian\.com\/deletionDelay .*(is not a Go duration|is negative|is empty).*nothing of this Bundle is pruned/,
  })),
  ...(
    [
      [
        'deletionDelay "1 day"',
        Annotations.deletionDelay,
        '1 day',
        /resource "a": annotation smith\.atlassian\.com\/deletionDelay "1 day" is not a Go duration.*nothing of this Bundle is pruned/,
      ],
      [
        'deletionPolicy Keep',
        Annotations.deletionPolicy,
        'Keep',
        /resource "a": annotation smith\.atlassian\.com\/deletionPolicy "Keep" is not one of Delete, Orphan, Approve; the object is not applied/,
      ],
      [
        'deleteWhen Later',
        Annotations.deleteWhen,
        'Later',
        /resource "a": annotation smith\.atlassian\.com\/deleteWhen "Later" is not one of BundleReady; the object is not applied/,
      ],
    ] as const
  ).map(([title, annotation, value, says]): OperatorCase => ({
    title: `the annotation ${title}`,
    resources: (i) => [res('a', withMeta(`ann-${title.split(' ')[0] ?? ''}-${i}`.toLowerCase(), { annotations: { [annotation]: value } }))],
    says,
  })),
  {
    title: 'a ConfigMap field its schema does not declare, offline',
    resources: (i) => [res('a', cm(`undeclared-top-${i}`, { replicas: 1 }))],
    says: /resource "a": .*\.replicas: field not declared in schema/,
  },
  {
    title: 'a reference to a path that does not exist',
    needsCluster: "the value is read from the dependency's live object",
    before: (i) => [res('b', cm(`missb-${i}`))],
    resources: (i) => [
      res('a', cm(`miss-${i}`, { data: { x: '!{x}' } }), [{ name: 'x', resource: 'b', path: 'data.nothing' }]),
      res('b', cm(`missb-${i}`)),
    ],
    says: /reference "x" to resource "b": path "data\.nothing" not found/,
  },
  {
    title: 'a 1 MiB string',
    resources: (i) => [res('a', cm(`big-${i}`, { data: { big: 'x'.repeat(1_048_577) } }))],
    says: /resource "a": .*(must have at most 1048576 bytes|Too long)/,
  },
  {
    title: 'a label value with spaces',
    resources: (i) => [res('a', withMeta(`lbl-${i}`, { labels: { k: 'has spaces' } }))],
    says: /resource "a": .*metadata\.labels: Invalid value: "has spaces"/,
  },
  {
    title: 'a field the type does not declare',
    resources: (i) => [res('a', cm(`undeclared-${i}`, { spec: { replicas: 1 } }))],
    says: /resource "a": .*field not declared in schema/,
  },
  {
    title: 'an object name with odd characters',
    resources: () => [res('a', withMeta('Odd_Name', {}))],
    says: /resource "a": .*metadata\.name: Invalid value: "Odd_Name"/,
  },
  {
    title: '"!{}" as a data key',
    resources: (i) => [res('a', cm(`ekey-${i}`, { data: { '!{}': 'v' } }))],
    says: /resource "a": .*data\[!\{\}\]|resource "a": .*a valid config key must consist of/,
  },
  {
    title: 'Secret data that is not base64',
    resources: (i) => [res('a', { apiVersion: 'v1', kind: 'Secret', metadata: { name: `b64-${i}` }, data: { k: 'not base64 !!' } })],
    says: /resource "a": .*illegal base64/,
  },
  {
    title: 'an identity that may do nothing (a ServiceAccount that does not exist)',
    needsCluster: "which ServiceAccounts exist and what they may do is the cluster's",
    resources: (i) => [res('a', cm(`sa-${i}`))],
    spec: { serviceAccountName: 'nobody-here' },
    says: /resource "a": .*system:serviceaccount:[a-z0-9-]+:nobody-here/,
  },
  {
    title: 'a Secret value copied into a label (redacted from the refusal)',
    needsCluster: "the label's value is read from the Secret in the cluster",
    before: () => [res('creds', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'suite-secret' } })],
    resources: (i) => [
      res('creds', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'suite-secret' } }),
      res('leak', withMeta(`leak-${i}`, { labels: { pw: '!{pw}' } }), [{ name: 'pw', resource: 'creds', path: 'data.password' }]),
    ],
    says: /resource "leak": .*\[redacted\]/,
  },
  // Drift controls (issue 27): an object's annotations the CRD cannot see into, judged before anything is applied.
  ...(
    [
      [
        'apply Once',
        Annotations.apply,
        'Once',
        /resource "a": annotation smith\.atlassian\.com\/apply "Once" is not one of Always, IfNotPresent/,
      ],
      ['drift warn', Annotations.drift, 'warn', /resource "a": annotation smith\.atlassian\.com\/drift "warn" is not one of Correct, Warn/],
      [
        'ignore spec.replicas',
        Annotations.ignore,
        '/data/a, spec.replicas',
        /resource "a": annotation smith\.atlassian\.com\/ignore: "spec\.replicas" is not a JSON pointer/,
      ],
      [
        'ignore ownerReferences',
        Annotations.ignore,
        '/metadata/ownerReferences',
        /resource "a": annotation smith\.atlassian\.com\/ignore: "\/metadata\/ownerReferences" may not be ignored/,
      ],
      [
        'ignore deletionDelay',
        Annotations.ignore,
        '/metadata/annotations/smith.atlassian.com~1deletionDelay',
        /resource "a": annotation smith\.atlassian\.com\/ignore: ".*deletionDelay" may not be ignored: smith\.atlassian\.com\/deletionDelay is the operator's own/,
      ],
    ] as const
  ).map(([title, annotation, value, says]): OperatorCase => ({
    title: `the drift annotation ${title}`,
    resources: (i) => [
      res('a', withMeta(`drift-${title.replace(/[^a-z]/gi, '').toLowerCase()}-${i}`, { annotations: { [annotation]: value } })),
    ],
    says,
  })),
  // CEL readiness rules (spec.healthChecks): judged before anything is applied, by the operator and by validate alike.
  {
    title: 'a CEL readiness rule that does not compile',
    resources: (i) => [res('a', cm(`cel-syntax-${i}`))],
    spec: { healthChecks: [{ apiVersion: 'v1', kind: 'ConfigMap', current: "data.a == 'b' &&" }] },
    says: /spec\.healthChecks\[0\]\.current: does not compile: at 1:/,
  },
  {
    title: 'a CEL readiness rule naming an unknown function',
    resources: (i) => [res('a', cm(`cel-fn-${i}`))],
    spec: { healthChecks: [{ apiVersion: 'v1', kind: 'ConfigMap', current: 'isReady(data)' }] },
    says: /spec\.healthChecks\[0\]\.current: unknown function: isReady/,
  },
  {
    title: 'a CEL readiness rule that can only return a non-bool',
    resources: (i) => [res('a', cm(`cel-type-${i}`))],
    spec: { healthChecks: [{ apiVersion: 'v1', kind: 'ConfigMap', current: 'true', failed: 'data.map(k, k)' }] },
    says: /spec\.healthChecks\[0\]\.failed: returns a list \(map or filter\), not a bool/,
  },
  {
    title: 'a CEL readiness rule nesting too deep',
    resources: (i) => [res('a', cm(`cel-deep-${i}`))],
    spec: { healthChecks: [{ apiVersion: 'v1', kind: 'ConfigMap', current: `data${'.a'.repeat(150)} == 'b'` }] },
    says: /spec\.healthChecks\[0\]\.current: nests deeper than 100 levels/,
  },
];

/**
 * Refused at the door by the CRD's schema: the apply fails and its error
 * names the field; `validate` refuses it with a message `says` matches too.
 * `spec` holds the spec's fields beside resources; `strict` cases are
 * applied with `kubectl apply`, whose strict field validation (its default)
 * refuses unknown fields in the words validate uses (the API client's apply
 * sets no field validation, and the API server prunes them).
 */
export interface DoorCase {
  title: string;
  resources: RawResource[];
  says: RegExp;
  spec?: Record<string, unknown>;
  strict?: boolean;
}

export const doorCases: DoorCase[] = [
  {
    title: 'a CEL readiness rule without current',
    resources: [res('a', cm('cel-nocurrent'))],
    spec: { healthChecks: [{ apiVersion: 'v1', kind: 'ConfigMap', failed: 'true' }] },
    says: /spec\.healthChecks\[0\]\.current: Required value/,
  },
  {
    title: 'two CEL readiness rules for one kind',
    resources: [res('a', cm('cel-dup'))],
    spec: {
      healthChecks: [
        { apiVersion: 'v1', kind: 'ConfigMap', current: 'true' },
        { apiVersion: 'v1', kind: 'ConfigMap', current: 'false' },
      ],
    },
    says: /spec\.healthChecks: duplicate entries for key \[apiVersion="v1",kind="ConfigMap"\]/,
  },
  {
    title: 'a CEL expression over 4096 characters',
    resources: [res('a', cm('cel-long'))],
    spec: { healthChecks: [{ apiVersion: 'v1', kind: 'ConfigMap', current: `true${' || true'.repeat(600)}` }] },
    says: /spec\.healthChecks\[0\]\.current: Too long: may not be (longer|more) than 4096/,
  },
  {
    title: 'duplicate resource names (resources is a list keyed by name)',
    resources: [res('a', cm('dup1')), res('a', cm('dup2'))],
    says: /duplicate entries for key \[name="a"\]/,
  },
  {
    title: 'a self reference (a CEL rule)',
    resources: [res('a', cm('self'), [{ resource: 'a' }])],
    says: /spec\.resources\[0\]\.references: Invalid value: a resource may not reference itself/,
  },
  {
    title: '10,000 resources',
    resources: Array.from({ length: 10_000 }, (_, i) => res(`r${i}`, cm(`many-${i}`))),
    says: /spec\.resources: Too many: 10000: must have at most 256 items/,
  },
  {
    title: '33 references',
    resources: [
      res(
        'a',
        cm('refs'),
        Array.from({ length: 33 }, () => ({ resource: 'b' })),
      ),
      res('b', cm('refs-b')),
    ],
    says: /spec\.resources\[0\]\.references: Too many: 33: must have at most 32 items/,
  },
  { title: 'an empty resource name', resources: [res('', cm('empty'))], says: /spec\.resources\[0\]\.name/ },
  { title: 'a resource name with upper case', resources: [res('Upper', cm('upper'))], says: /spec\.resources\[0\]\.name/ },
  {
    title: 'an object without a name',
    resources: [res('a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} })],
    says: /spec\.resources\[0\]\.spec\.object\.metadata\.name: Required value/,
  },
  {
    title: 'an object without a kind',
    resources: [res('a', { apiVersion: 'v1', metadata: { name: 'nokind' } })],
    says: /spec\.resources\[0\]\.spec\.object\.kind: Required value/,
  },
  {
    title: 'a misspelt resources (strict field validation)',
    resources: [],
    spec: { resourses: [res('a', cm('misspelt'))] },
    strict: true,
    says: /unknown field "spec\.resourses"/,
  },
  {
    title: 'a misspelt references (strict field validation)',
    resources: [{ name: 'a', referencess: [{ resource: 'b' }], spec: { object: cm('misspelt-ref') } }],
    strict: true,
    says: /unknown field "spec\.resources\[0\]\.referencess"/,
  },
  {
    title: 'a deletionDefaults policy that is not one',
    resources: [res('a', cm('bad-default'))],
    spec: { deletionDefaults: { deletionPolicy: 'Keep' } },
    says: /spec\.deletionDefaults\.deletionPolicy: Unsupported value: "Keep": supported values: "Delete", "Orphan", "Approve"/,
  },
  {
    title: 'a deletionDefaults delay that is not a Go duration (a CEL rule)',
    resources: [res('a', cm('bad-default-delay'))],
    spec: { deletionDefaults: { deletionDelay: '1h-30m' } },
    says: /spec\.deletionDefaults\.deletionDelay: Invalid value: .*must be a non-negative Go duration/,
  },
  {
    title: 'a driftDefaults apply that is not one',
    resources: [res('a', cm('bad-drift-apply'))],
    spec: { driftDefaults: { apply: 'Once' } },
    says: /spec\.driftDefaults\.apply: Unsupported value: "Once": supported values: "Always", "IfNotPresent"/,
  },
  {
    title: 'a driftDefaults drift that is not one',
    resources: [res('a', cm('bad-drift-mode'))],
    spec: { driftDefaults: { drift: 'Ignore' } },
    says: /spec\.driftDefaults\.drift: Unsupported value: "Ignore": supported values: "Correct", "Warn"/,
  },
  {
    title: 'a driftDefaults ignore that is not a JSON pointer',
    resources: [res('a', cm('bad-drift-pointer'))],
    spec: { driftDefaults: { ignore: ['spec/replicas'] } },
    says: /spec\.driftDefaults\.ignore\[0\]: Invalid value: "spec\/replicas": spec\.driftDefaults\.ignore\[0\] in body should match/,
  },
  {
    title: 'a driftDefaults ignore of the kind (a CEL rule)',
    resources: [res('a', cm('bad-drift-kind'))],
    spec: { driftDefaults: { ignore: ['/kind'] } },
    says: /spec\.driftDefaults\.ignore\[0\]: Invalid value: .*may not ignore apiVersion or kind/,
  },
  {
    title: 'a driftDefaults ignore of ownerReferences (a CEL rule)',
    resources: [res('a', cm('bad-drift-refs'))],
    spec: { driftDefaults: { ignore: ['/metadata/ownerReferences/0'] } },
    says: /spec\.driftDefaults\.ignore\[0\]: Invalid value: .*may not ignore metadata, its name, namespace or ownerReferences/,
  },
  {
    title: "a driftDefaults ignore of the operator's label (a CEL rule)",
    resources: [res('a', cm('bad-drift-label'))],
    spec: { driftDefaults: { ignore: ['/metadata/labels/smith.atlassian.com~1managed'] } },
    says: /spec\.driftDefaults\.ignore\[0\]: Invalid value: .*may not ignore the operator's own smith\.atlassian\.com annotations and labels/,
  },
  {
    title: 'a deletionDefaults gate that is not one',
    resources: [res('a', cm('bad-gate'))],
    spec: { deletionDefaults: { deleteWhen: 'Later' } },
    says: /spec\.deletionDefaults\.deleteWhen: Unsupported value: "Later"/,
  },
];
