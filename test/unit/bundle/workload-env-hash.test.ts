/**
 * Where the envRefHash goes on each workload kind, what turns it off, the
 * volumes option, and how a pass decides with it: Smith's value on the
 * template, a missing source blocks, the Bundle's own ConfigMap is applied
 * before the workload hashes it.
 */
import { Annotations, Reasons } from '../../../src/api/names.js';
import { configMapData, secretData, type SourceData } from '../../../src/core/bundle/env-ref-hash.js';
import type { EnvSourceRead, ResourcePlan } from '../../../src/core/bundle/plan.js';
import { planBundle } from '../../../src/core/bundle/plan.js';
import { decideEnvRefHash, envSourcesOf, workloadSourceRefs } from '../../../src/core/bundle/workload-env-hash.js';
import {
  bundle,
  configMap,
  controlledByBundle,
  deployment,
  live,
  object,
  planInput,
  resource,
  withAnnotation,
  withData,
  withRef,
  withResource,
  withSpec,
  type Obj,
} from './builders.js';

const SMITH_INITIAL = '97b5461821487e047e760880764dd9b31a5b7f39e8961b98b809c6d3f5b3cf3a';
const SMITH_CM_CHANGED = '5fb60505d125dd42160a9ef237873345020a90e8d607861ced50a641c3a800a9';
const b64 = (s: string) => Buffer.from(s).toString('base64');

const envFrom = [{ configMapRef: { name: 'map1' } }, { secretRef: { name: 'secret1' } }];
const podSpec = (extra: Record<string, unknown> = {}) => ({ containers: [{ name: 'c', image: 'busybox', envFrom }], ...extra });
const sources = (cm: Record<string, string> = { a: 'b' }): Record<string, SourceData> => ({
  'ConfigMap/map1': configMapData({ data: cm }),
  'Secret/secret1': secretData({ data: { x: b64('b') } }),
});
const lookupOf = (s: Record<string, SourceData>) => (kind: 'ConfigMap' | 'Secret', name: string) => s[`${kind}/${name}`];

const templateAnnotation = (o: unknown, path: readonly string[]): unknown => {
  let v: unknown = o;
  for (const p of [...path, 'metadata', 'annotations', Annotations.envRefHash])
    v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[p] : undefined;
  return v;
};

describe('decideEnvRefHash: the workload kinds', () => {
  it.each<[string, Obj, readonly string[]]>([
    ['Deployment', deployment('d', withSpec({ template: { spec: podSpec() } })), ['spec', 'template']],
    ['StatefulSet', object('apps/v1', 'StatefulSet', 's', withSpec({ template: { spec: podSpec() } })), ['spec', 'template']],
    ['DaemonSet', object('apps/v1', 'DaemonSet', 'ds', withSpec({ template: { spec: podSpec() } })), ['spec', 'template']],
    ['Job (new)', object('batch/v1', 'Job', 'j', withSpec({ template: { spec: podSpec() } })), ['spec', 'template']],
    [
      'CronJob',
      object('batch/v1', 'CronJob', 'cj', withSpec({ schedule: '* * * * *', jobTemplate: { spec: { template: { spec: podSpec() } } } })),
      ['spec', 'jobTemplate', 'spec', 'template'],
    ],
  ])("%s: Smith's value on its pod template", (_kind, manifest, path) => {
    const decision = decideEnvRefHash(manifest, undefined, lookupOf(sources()));
    expect(decision.kind).toBe('stamped');
    if (decision.kind === 'stamped') expect(templateAnnotation(decision.object, path)).toBe(SMITH_INITIAL);
    expect(templateAnnotation(manifest, path)).toBeUndefined(); // the input is not changed
  });

  it('other kinds, templates that read nothing, and "disabled" are left as they are', () => {
    expect(decideEnvRefHash(configMap('cm'), undefined, lookupOf({}))).toEqual({ kind: 'unchanged' });
    expect(
      decideEnvRefHash(deployment('d', withSpec({ template: { spec: { containers: [{ name: 'c' }] } } })), undefined, lookupOf({})),
    ).toEqual({ kind: 'unchanged' });
    const disabled = deployment(
      'd',
      withSpec({ template: { metadata: { annotations: { [Annotations.envRefHash]: 'disabled' } }, spec: podSpec() } }),
    );
    expect(decideEnvRefHash(disabled, undefined, lookupOf({}))).toEqual({ kind: 'unchanged' });
    expect(workloadSourceRefs(disabled)).toEqual([]);
  });

  it('an existing Job keeps the value its immutable template has (or none)', () => {
    const job = (annotation?: string) =>
      object(
        'batch/v1',
        'Job',
        'j',
        withSpec({
          template: { ...(annotation ? { metadata: { annotations: { [Annotations.envRefHash]: annotation } } } : {}), spec: podSpec() },
        }),
      );
    const kept = decideEnvRefHash(job(), live(job('old-hash')), lookupOf(sources({ a: 'changed' })));
    expect(kept.kind === 'stamped' && templateAnnotation(kept.object, ['spec', 'template'])).toBe('old-hash');
    const none = decideEnvRefHash(job('written-by-hand'), live(job()), lookupOf(sources()));
    expect(none.kind === 'stamped' && templateAnnotation(none.object, ['spec', 'template'])).toBeUndefined();
  });

  it('a missing source that is not optional: the workload waits, naming it', () => {
    expect(decideEnvRefHash(deployment('d', withSpec({ template: { spec: podSpec() } })), undefined, lookupOf({}))).toEqual({
      kind: 'missing',
      message: 'ConfigMap "map1" not found',
    });
  });
});

describe('decideEnvRefHash: rollOnChange: volumes', () => {
  const volumes = [
    { name: 'files', configMap: { name: 'files', items: [{ key: 'app.conf', path: 'app.conf' }] } },
    { name: 'tls', secret: { secretName: 'tls' } },
    { name: 'all', projected: { sources: [{ configMap: { name: 'proj', optional: true } }, { secret: { name: 'proj-secret' } }] } },
  ];
  const withVolumes = (...mods: ((o: Obj) => void)[]) => deployment('d', withSpec({ template: { spec: podSpec({ volumes }) } }), ...mods);
  const all = {
    ...sources(),
    'ConfigMap/files': configMapData({ data: { 'app.conf': 'v1', other: 'ignored' } }),
    'Secret/tls': secretData({ data: { 'tls.crt': b64('c') } }),
    'Secret/proj-secret': secretData({ data: { k: b64('v') } }),
  };
  const hashOf = (o: Obj, s: Record<string, SourceData>) => {
    const d = decideEnvRefHash(o, undefined, lookupOf(s));
    return d.kind === 'stamped' ? templateAnnotation(d.object, ['spec', 'template']) : d;
  };

  it("without the annotation, volumes do not count (Smith's value)", () => {
    expect(hashOf(withVolumes(), sources())).toBe(SMITH_INITIAL);
  });

  it('with it, the mounted ConfigMaps and Secrets (direct and projected, only the items a volume names) count after the environment', () => {
    const opted = withVolumes(withAnnotation(Annotations.rollOnChange, 'volumes'));
    expect(workloadSourceRefs(opted).map((r) => `${r.kind}/${r.name}`)).toEqual([
      'ConfigMap/map1',
      'Secret/secret1',
      'ConfigMap/files',
      'Secret/tls',
      'ConfigMap/proj',
      'Secret/proj-secret',
    ]);
    const before = hashOf(opted, all);
    expect(before).toMatch(/^[0-9a-f]{64}$/);
    expect(before).not.toBe(SMITH_INITIAL);
    expect(hashOf(opted, { ...all, 'ConfigMap/files': configMapData({ data: { 'app.conf': 'v1', other: 'changed' } }) })).toBe(before); // not an item
    expect(hashOf(opted, { ...all, 'ConfigMap/files': configMapData({ data: { 'app.conf': 'v2', other: 'ignored' } }) })).not.toBe(before);
    expect(hashOf(opted, { ...all, 'Secret/tls': secretData({ data: { 'tls.crt': b64('rotated') } }) })).not.toBe(before);
    const { ['Secret/tls']: _gone, ...withoutTls } = all;
    expect(hashOf(opted, withoutTls)).toEqual({ kind: 'missing', message: 'Secret "tls" not found' });
  });

  it('a template that mounts nothing hashes as Smith does, with or without the option', () => {
    expect(
      hashOf(deployment('d', withAnnotation(Annotations.rollOnChange, 'volumes'), withSpec({ template: { spec: podSpec() } })), sources()),
    ).toBe(SMITH_INITIAL);
  });
});

describe('envSourcesOf', () => {
  it('lists each source once, with names given by references resolved against the live objects', () => {
    const a = resource('a', deployment('a', withSpec({ template: { spec: podSpec() } })));
    const viaRef = deployment(
      'b',
      withSpec({
        template: {
          spec: { containers: [{ name: 'c', envFrom: [{ configMapRef: { name: 'map1' } }, { configMapRef: { name: '!{cm-name}' } }] }] },
        },
      }),
    );
    const b = resource('b', viaRef, withRef('config', { name: 'cm-name', path: 'metadata.name' }));
    const config = resource('config', configMap('settings'));
    expect(envSourcesOf([a, b, config], new Map())).toEqual([
      { kind: 'ConfigMap', name: 'map1' },
      { kind: 'Secret', name: 'secret1' },
    ]);
    expect(envSourcesOf([a, b, config], new Map([['config', live(configMap('settings'))]]))).toEqual([
      { kind: 'ConfigMap', name: 'map1' },
      { kind: 'Secret', name: 'secret1' },
      { kind: 'ConfigMap', name: 'settings' },
    ]);
  });
});

describe('planBundle with envRefHash', () => {
  const app = deployment('app', withSpec({ template: { spec: podSpec() } }));
  const reads = (cm: Record<string, string> | null): Map<string, EnvSourceRead> =>
    new Map<string, EnvSourceRead>([
      ['ConfigMap/map1', cm === null ? null : configMapData({ data: cm })],
      ['Secret/secret1', secretData({ data: { x: b64('b') } })],
    ]);
  const planOf = (
    b: ReturnType<typeof bundle>,
    liveByResource: Record<string, Obj>,
    envSources: Map<string, EnvSourceRead>,
  ): ResourcePlan[] => planBundle(planInput(b, liveByResource, { envSources })).resources;
  const desiredAnnotation = (p: ResourcePlan | undefined) =>
    p && 'apply' in p ? templateAnnotation(p.apply.desired, ['spec', 'template']) : p;

  it('applies the workload with the hash of the external ConfigMap and Secret, and a new one when the ConfigMap changes', () => {
    const b = bundle('b', withResource(resource('app', app)));
    expect(desiredAnnotation(planOf(b, {}, reads({ a: 'b' }))[0])).toBe(SMITH_INITIAL);
    expect(desiredAnnotation(planOf(b, {}, reads({ a: 'b', b: 'a' }))[0])).toBe(SMITH_CM_CHANGED);
  });

  it('a missing source blocks the workload with EnvSourceNotFound (not an error), and its dependents with it', () => {
    const [plan] = planOf(bundle('b', withResource(resource('app', app))), {}, reads(null));
    expect(plan).toMatchObject({
      action: 'blocked',
      reason: Reasons.EnvSourceNotFound,
      blockedByError: false,
      message: 'waiting for ConfigMap "map1" not found: the pod template reads it (not optional)',
    });
  });

  it("a source the Bundle's identity may not read is that workload's error", () => {
    const envSources = new Map<string, EnvSourceRead>([['ConfigMap/map1', { unreadable: 'configmaps "map1" is forbidden' }]]);
    expect(planOf(bundle('b', withResource(resource('app', app))), {}, envSources)[0]).toMatchObject({
      action: 'error',
      terminal: false,
      message: 'cannot read ConfigMap "map1" for the pod template\'s envRefHash: configmaps "map1" is forbidden',
    });
  });

  it("the Bundle's own ConfigMap is applied first: the workload waits while its apply is due, then hashes the applied data", () => {
    const cm = configMap('map1', withData({ a: 'b', b: 'a' }));
    const b = bundle('b', withResource(resource('config', cm), resource('app', app)));
    const stale = live(configMap('map1', withData({ a: 'b' })), controlledByBundle());
    const [config, waiting] = planOf(b, { config: stale }, reads({ a: 'b' }));
    expect(config).toMatchObject({ name: 'config', action: 'apply', apply: { needed: true } });
    expect(waiting).toMatchObject({
      name: 'app',
      action: 'blocked',
      reason: Reasons.DependenciesNotReady,
      waitingFor: ['config'],
      blockedByError: false,
    });
    const applied = planBundle(planInput(b, { config: stale }, { envSources: reads({ a: 'b' }) })).resources[0];
    const appliedLive = live(structuredClone((applied as Extract<ResourcePlan, { action: 'apply' }>).apply.desired), controlledByBundle());
    expect(desiredAnnotation(planOf(b, { config: appliedLive }, reads({ a: 'b', b: 'a' }))[1])).toBe(SMITH_CM_CHANGED);
  });
});
