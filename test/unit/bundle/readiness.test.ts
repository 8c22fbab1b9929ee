import type { HealthCheck } from '../../../src/api/health-checks.js';
import { Annotations } from '../../../src/api/names.js';
import { healthCheckIssues, healthCheckTable, readHealthChecksFile } from '../../../src/core/bundle/health-checks.js';
import type { CrdReadinessTable } from '../../../src/core/bundle/kinds.js';
import type { LiveObject } from '../../../src/core/bundle/objects.js';
import { crdReadinessFromAnnotations, readinessOf, type Readiness } from '../../../src/core/bundle/readiness.js';
import {
  configMap,
  deployment,
  live,
  object,
  secret,
  service,
  widget,
  withConditions,
  withGeneration,
  withSpec,
  withStatus,
  type Mod,
  type Obj,
} from './builders.js';

const ready: Readiness = { state: 'ready' };
const inProgress = (message: string): Readiness => ({ state: 'in-progress', message });
const terminalError = (message: string): Readiness => ({ state: 'error', terminal: true, message });

const dep = (status: Record<string, unknown>, ...mods: Mod<Obj>[]): LiveObject =>
  live(deployment('d', withGeneration(2), withSpec({ replicas: 3 }), withStatus({ observedGeneration: 2, ...status }), ...mods));
const fullDeployment = { replicas: 3, updatedReplicas: 3, availableReplicas: 3 };

describe('readinessOf built-in kinds', () => {
  it.each<[string, LiveObject, Readiness]>([
    ['Deployment rolled out', dep(fullDeployment), ready],
    [
      'Deployment not observed yet',
      dep({ ...fullDeployment, observedGeneration: 1 }),
      inProgress('waiting for the controller to observe generation 2 (observed 1)'),
    ],
    [
      'Deployment without status',
      live(deployment('d', withGeneration(1))),
      inProgress('waiting for the controller to observe generation 1 (observed none)'),
    ],
    ['Deployment updating', dep({ ...fullDeployment, updatedReplicas: 1 }), inProgress('1 of 3 replicas updated')],
    ['Deployment with old replicas left', dep({ ...fullDeployment, replicas: 4 }), inProgress('1 old replicas pending termination')],
    ['Deployment not available', dep({ ...fullDeployment, availableReplicas: 2 }), inProgress('2 of 3 updated replicas available')],
    [
      'Deployment with unavailable replicas',
      dep({ ...fullDeployment, unavailableReplicas: 1 }),
      inProgress('3 of 3 updated replicas available'),
    ],
    [
      'Deployment replicas default to 1',
      live(deployment('d', withStatus({ replicas: 1, updatedReplicas: 1, availableReplicas: 1 }))),
      ready,
    ],
    [
      'Deployment past its progress deadline (terminal)',
      dep(
        { ...fullDeployment, updatedReplicas: 1 },
        withConditions({
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: 'ReplicaSet "d-1" has timed out progressing.',
        }),
      ),
      terminalError('rollout exceeded its progress deadline: ReplicaSet "d-1" has timed out progressing.'),
    ],
    [
      'StatefulSet ready',
      live(
        object(
          'apps/v1',
          'StatefulSet',
          's',
          withSpec({ replicas: 2 }),
          withStatus({ readyReplicas: 2, updatedReplicas: 2, currentRevision: 'r1', updateRevision: 'r1' }),
        ),
      ),
      ready,
    ],
    [
      'StatefulSet not ready',
      live(object('apps/v1', 'StatefulSet', 's', withSpec({ replicas: 2 }), withStatus({ readyReplicas: 1 }))),
      inProgress('1 of 2 replicas ready'),
    ],
    [
      'StatefulSet rolling',
      live(
        object(
          'apps/v1',
          'StatefulSet',
          's',
          withSpec({ replicas: 2 }),
          withStatus({ readyReplicas: 2, updatedReplicas: 2, currentRevision: 'r1', updateRevision: 'r2' }),
        ),
      ),
      inProgress('rolling out revision r2'),
    ],
    [
      'StatefulSet OnDelete ignores revisions',
      live(
        object(
          'apps/v1',
          'StatefulSet',
          's',
          withSpec({ replicas: 2, updateStrategy: { type: 'OnDelete' } }),
          withStatus({ readyReplicas: 2, currentRevision: 'r1', updateRevision: 'r2' }),
        ),
      ),
      ready,
    ],
    [
      'StatefulSet generation not observed',
      live(object('apps/v1', 'StatefulSet', 's', withGeneration(3), withStatus({ observedGeneration: 2 }))),
      inProgress('waiting for the controller to observe generation 3 (observed 2)'),
    ],
    [
      'DaemonSet ready',
      live(object('apps/v1', 'DaemonSet', 'ds', withStatus({ desiredNumberScheduled: 3, numberReady: 3, updatedNumberScheduled: 3 }))),
      ready,
    ],
    [
      'DaemonSet updating',
      live(object('apps/v1', 'DaemonSet', 'ds', withStatus({ desiredNumberScheduled: 3, numberReady: 3, updatedNumberScheduled: 2 }))),
      inProgress('2 of 3 pods updated'),
    ],
    [
      'DaemonSet not ready',
      live(object('apps/v1', 'DaemonSet', 'ds', withStatus({ desiredNumberScheduled: 3, numberReady: 1, updatedNumberScheduled: 3 }))),
      inProgress('1 of 3 pods ready'),
    ],
    ['Job complete', live(object('batch/v1', 'Job', 'j', withConditions({ type: 'Complete', status: 'True' }))), ready],
    ['Job running', live(object('batch/v1', 'Job', 'j', withStatus({ active: 1 }))), inProgress('job has not completed')],
    [
      'Job failed (terminal)',
      live(
        object(
          'batch/v1',
          'Job',
          'j',
          withConditions({
            type: 'Failed',
            status: 'True',
            reason: 'BackoffLimitExceeded',
            message: 'Job has reached the specified backoff limit',
          }),
        ),
      ),
      terminalError('job failed: BackoffLimitExceeded: Job has reached the specified backoff limit'),
    ],
    ['PVC bound', live(object('v1', 'PersistentVolumeClaim', 'p', withStatus({ phase: 'Bound' }))), ready],
    ['PVC pending', live(object('v1', 'PersistentVolumeClaim', 'p', withStatus({ phase: 'Pending' }))), inProgress('claim is Pending')],
    ['PVC without status', live(object('v1', 'PersistentVolumeClaim', 'p')), inProgress('claim is not bound yet')],
    [
      'PVC lost (terminal)',
      live(object('v1', 'PersistentVolumeClaim', 'p', withStatus({ phase: 'Lost' }))),
      terminalError('claim lost its volume (phase Lost)'),
    ],
    ['ClusterIP Service', live(service('s', withSpec({ type: 'ClusterIP' }))), ready],
    ['Service without type', live(service('s')), ready],
    [
      'LoadBalancer Service waiting',
      live(service('s', withSpec({ type: 'LoadBalancer' }), withStatus({ loadBalancer: {} }))),
      inProgress('waiting for a load balancer ingress'),
    ],
    [
      'LoadBalancer Service with an empty ingress list',
      live(service('s', withSpec({ type: 'LoadBalancer' }), withStatus({ loadBalancer: { ingress: [] } }))),
      inProgress('waiting for a load balancer ingress'),
    ],
    [
      'LoadBalancer Service with ingress',
      live(service('s', withSpec({ type: 'LoadBalancer' }), withStatus({ loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } }))),
      ready,
    ],
    ['ConfigMap', live(configMap('c')), ready],
    ['Secret', live(secret('s')), ready],
    ['ServiceAccount', live(object('v1', 'ServiceAccount', 'sa')), ready],
    ['RoleBinding', live(object('rbac.authorization.k8s.io/v1', 'RoleBinding', 'rb')), ready],
    ['built-in kind with a status but no rule (Namespace)', live(object('v1', 'Namespace', 'n', withStatus({ phase: 'Active' }))), ready],
  ])('%s', (_name, o, expected) => {
    expect(readinessOf(o)).toEqual(expected);
  });
});

describe('readinessOf custom resources', () => {
  const crd: CrdReadinessTable = new Map([['example.com/v1/Widget', { fieldPath: 'status.phase', fieldValue: 'Ready' }]]);
  const numeric: CrdReadinessTable = new Map([['example.com/v1/Widget', { fieldPath: "status['count']", fieldValue: '3' }]]);
  const broken: CrdReadinessTable = new Map([['example.com/v1/Widget', { fieldPath: 'status..phase', fieldValue: 'Ready' }]]);

  it.each<[string, LiveObject, CrdReadinessTable, Readiness]>([
    ['CRD field matches', live(widget('w', withStatus({ phase: 'Ready' }))), crd, ready],
    [
      'CRD field differs',
      live(widget('w', withStatus({ phase: 'Pending' }))),
      crd,
      inProgress('waiting for status.phase to be "Ready" (is "Pending")'),
    ],
    ['CRD field absent', live(widget('w')), crd, inProgress('waiting for status.phase to be "Ready" (not set)')],
    ['CRD field compared as a string', live(widget('w', withStatus({ count: 3 }))), numeric, ready],
    [
      'CRD annotation path unreadable',
      live(widget('w')),
      broken,
      { state: 'error', terminal: false, message: 'CRD readiness annotation: path "status..phase": empty field name at offset 7' },
    ],
    [
      'CRD annotations win over conditions',
      live(widget('w', withStatus({ phase: 'Pending' }), withConditions({ type: 'Ready', status: 'True' }))),
      crd,
      inProgress('waiting for status.phase to be "Ready" (is "Pending")'),
    ],
    ['no status: ready when present', live(widget('w')), new Map(), ready],
    ['empty status: ready when present', live(widget('w', withStatus({}))), new Map(), ready],
    ['Ready=True', live(widget('w', withConditions({ type: 'Ready', status: 'True' }))), new Map(), ready],
    [
      'Ready=True for the current generation',
      live(widget('w', withGeneration(2), withConditions({ type: 'Ready', status: 'True', observedGeneration: 2 }))),
      new Map(),
      ready,
    ],
    [
      'Ready=True for an older generation',
      live(widget('w', withGeneration(3), withConditions({ type: 'Ready', status: 'True', observedGeneration: 2 }))),
      new Map(),
      inProgress('Ready condition is for generation 2, object is at 3'),
    ],
    [
      'Ready=True, status observedGeneration old',
      live(widget('w', withGeneration(3), withStatus({ observedGeneration: 1 }), withConditions({ type: 'Ready', status: 'True' }))),
      new Map(),
      inProgress('waiting for the controller to observe generation 3 (observed 1)'),
    ],
    [
      'Ready=False with a reason',
      live(widget('w', withConditions({ type: 'Ready', status: 'False', reason: 'Provisioning', message: 'creating database' }))),
      new Map(),
      inProgress('not ready: Provisioning: creating database'),
    ],
    [
      'Ready=Unknown',
      live(widget('w', withConditions({ type: 'Ready', status: 'Unknown' }))),
      new Map(),
      inProgress('not ready: no reason given'),
    ],
    [
      'status without a Ready condition',
      live(widget('w', withStatus({ phase: 'x' }))),
      new Map(),
      inProgress('waiting for a Ready condition'),
    ],
  ])('%s', (_name, o, table, expected) => {
    expect(readinessOf(o, table)).toEqual(expected);
  });

  it.each<[string, Record<string, string> | undefined, unknown]>([
    [
      'both annotations',
      { [Annotations.crReadyWhenFieldPath]: 'status.phase', [Annotations.crReadyWhenFieldValue]: 'Ready' },
      { fieldPath: 'status.phase', fieldValue: 'Ready' },
    ],
    ['only the path', { [Annotations.crReadyWhenFieldPath]: 'status.phase' }, undefined],
    ['none', undefined, undefined],
  ])('crdReadinessFromAnnotations: %s', (_name, annotations, expected) => {
    expect(crdReadinessFromAnnotations(annotations)).toEqual(expected);
  });
});

describe('readinessOf with CEL rules (spec.healthChecks, --health-checks-file)', () => {
  const database = (status: Record<string, unknown>, ...mods: Mod<Obj>[]): LiveObject =>
    live(widget('db', withGeneration(2), withStatus(status), ...mods));
  const rule: HealthCheck = {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    inProgress: 'status.phase == "Provisioning"',
    failed: 'status.phase == "Failed"',
    current: 'status.phase == "Available" && status.endpoint != ""',
  };
  const table = healthCheckTable(undefined, [rule]);

  it.each<[string, LiveObject, Readiness]>([
    ['current', database({ phase: 'Available', endpoint: 'db:5432' }), ready],
    ['inProgress', database({ phase: 'Provisioning' }), inProgress('spec.healthChecks[0].inProgress is true')],
    ['failed: terminal', database({ phase: 'Failed' }), terminalError('failed by spec.healthChecks[0].failed (status.phase == "Failed")')],
    ['none true: in progress', database({ phase: 'Available', endpoint: '' }), inProgress('spec.healthChecks[0].current is false')],
    [
      'a field not there yet: in progress with the reason',
      live(widget('db', withStatus({ other: 1 }))),
      inProgress('spec.healthChecks[0].inProgress cannot be evaluated yet: field not found: phase'),
    ],
    [
      'a status for an older generation comes first',
      database({ phase: 'Available', endpoint: 'x', observedGeneration: 1 }),
      inProgress('waiting for the controller to observe generation 2 (observed 1)'),
    ],
    // The rule is tried before a Ready condition or the CRD annotations would say ready.
    [
      'the rule before a Ready condition',
      database({ phase: 'Provisioning', conditions: [{ type: 'Ready', status: 'True' }] }),
      inProgress('spec.healthChecks[0].inProgress is true'),
    ],
  ])('%s', (_name, o, expected) => {
    expect(readinessOf(o, new Map([['example.com/v1/Widget', { fieldPath: 'status.phase', fieldValue: 'Provisioning' }]]), table)).toEqual(
      expected,
    );
  });

  it('is tried before a built-in kind', () => {
    const strict = healthCheckTable(undefined, [{ apiVersion: 'v1', kind: 'ConfigMap', current: 'has(data.ready)' }]);
    expect(readinessOf(live(configMap('c')), new Map(), strict)).toEqual(
      inProgress('spec.healthChecks[0].current cannot be evaluated yet: unresolved attribute'),
    );
  });

  it('a non-bool result is a terminal error of the resource, never ready', () => {
    const wrong = healthCheckTable(undefined, [{ apiVersion: 'example.com/v1', kind: 'Widget', current: 'status.phase' }]);
    expect(readinessOf(database({ phase: 'Available' }), new Map(), wrong)).toEqual(
      terminalError('spec.healthChecks[0].current: returned a string, not a bool'),
    );
  });

  it('a rule out of budget is an error of the resource, retried', () => {
    const costly = healthCheckTable(undefined, [
      { apiVersion: 'example.com/v1', kind: 'Widget', current: 'status.items.all(a, status.items.all(b, a == b || true))' },
    ]);
    const items = Array.from({ length: 2000 }, (_, i) => ({ i }));
    expect(readinessOf(database({ items }), new Map(), costly)).toEqual({
      state: 'error',
      terminal: false,
      message: 'spec.healthChecks[0].current: evaluation cost limit exceeded (100000 units)',
    });
  });

  it("the Bundle's rule wins over the operator's for the same kind; the operator's apply to the rest", () => {
    const both = healthCheckTable(
      [
        { apiVersion: 'example.com/v1', kind: 'Widget', current: 'false' },
        { apiVersion: 'v1', kind: 'ConfigMap', current: 'false' },
      ],
      [{ apiVersion: 'example.com/v1', kind: 'Widget', current: 'true' }],
    );
    expect(readinessOf(database({}), new Map(), both)).toEqual(ready);
    expect(readinessOf(live(configMap('c')), new Map(), both)).toEqual(inProgress('--health-checks-file[1].current is false'));
  });
});

describe('kstatus conventions for custom resources', () => {
  it.each<[string, LiveObject, Readiness]>([
    [
      'Stalled True: an error, retried',
      live(widget('w', withConditions({ type: 'Stalled', status: 'True', reason: 'BadConfig' }, { type: 'Ready', status: 'False' }))),
      { state: 'error', terminal: false, message: 'stalled: BadConfig' },
    ],
    [
      'Reconciling True: in progress even if Ready',
      live(widget('w', withConditions({ type: 'Reconciling', status: 'True', reason: 'Progressing' }, { type: 'Ready', status: 'True' }))),
      inProgress('reconciling: Progressing'),
    ],
    [
      'status for an older generation before the CRD annotation',
      live(widget('w', withGeneration(2), withStatus({ observedGeneration: 1, phase: 'Ready' }))),
      inProgress('waiting for the controller to observe generation 2 (observed 1)'),
    ],
  ])('%s', (_name, o, expected) => {
    expect(readinessOf(o, new Map([['example.com/v1/Widget', { fieldPath: 'status.phase', fieldValue: 'Ready' }]]))).toEqual(expected);
  });
});

describe('healthCheckIssues and the --health-checks-file', () => {
  it('names every expression that cannot run, and a second rule for one kind', () => {
    expect(
      healthCheckIssues(
        [
          { apiVersion: 'example.com/v1', kind: 'Widget', current: 'status.phase ==', failed: '"no"' },
          { apiVersion: 'example.com/v1', kind: 'Widget', current: 'true' },
        ],
        'spec.healthChecks',
      ),
    ).toEqual([
      'spec.healthChecks[0].current: does not compile: at 1:14: found = but expecting end of input',
      'spec.healthChecks[0].failed: returns a string, not a bool',
      'spec.healthChecks[1]: a second rule for example.com/v1 Widget (first at spec.healthChecks[0])',
    ]);
  });

  it('reads a list, a Bundle-style healthChecks or a Flux-style healthCheckExprs block', () => {
    const rules = [{ apiVersion: 'example.com/v1', kind: 'Widget', current: 'true' }];
    expect(readHealthChecksFile(rules)).toEqual({ ok: true, rules });
    expect(readHealthChecksFile({ healthChecks: rules })).toEqual({ ok: true, rules });
    expect(readHealthChecksFile({ healthCheckExprs: rules })).toEqual({ ok: true, rules });
  });

  it('refuses a file with a rule that does not compile or has no current', () => {
    expect(readHealthChecksFile([{ apiVersion: 'example.com/v1', kind: 'Widget', current: 'foo(' }])).toMatchObject({
      ok: false,
      issues: [expect.stringMatching(/^--health-checks-file\[0\]\.current: does not compile/)],
    });
    expect(readHealthChecksFile([{ apiVersion: 'example.com/v1', kind: 'Widget' }])).toMatchObject({ ok: false });
  });
});
