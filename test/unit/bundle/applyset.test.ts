import { createHash } from 'node:crypto';
import { APPLYSET_TOOLING, ApplySetAnnotations, ApplySetLabels } from '../../../src/api/names.js';
import {
  applySetParentApply,
  applySetParentMetadata,
  carriesParentMetadata,
  containsGroupKinds,
} from '../../../src/core/bundle/applyset-parent.js';
import { applySetId, partOfRemoval, partOfTakeover } from '../../../src/core/bundle/applyset.js';
import { buildDesired } from '../../../src/core/bundle/desired.js';
import { referencesPatch } from '../../../src/core/bundle/release.js';
import type { LiveObject } from '../../../src/core/bundle/objects.js';
import { BUNDLE_UID, configMap, NAMESPACE } from './builders.js';

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

describe('applySetId', () => {
  it("is KEP-3659's id of a Bundle parent: applyset-, base64url (unpadded) sha256 of name.namespace.Bundle.smith.atlassian.com, -v1", () => {
    // Values computed outside this code (Python: base64.urlsafe_b64encode(hashlib.sha256(...).digest()).rstrip('=')).
    expect(applySetId('hello', 'demo')).toBe('applyset-Yx9YrzvfAOzTP2BOz1SRspBMn-a68H8S4kaySNveC2E-v1');
    expect(applySetId('a'.repeat(253), 'ns')).toBe('applyset-o-4gZu9GQLMICDQYXqu4KOM-9cS3MlCcE2Y7XsfIs7U-v1');
  });

  it('spells the hash exactly as the KEP does (Go base64.RawURLEncoding)', () => {
    const raw = createHash('sha256')
      .update('web.team-a.Bundle.smith.atlassian.com')
      .digest('base64')
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
    expect(applySetId('web', 'team-a')).toBe(`applyset-${raw}-v1`);
  });

  it('is a valid label value of fixed length, for any name up to 253 characters', () => {
    for (const name of ['a', 'x'.repeat(63), `${'a.'.repeat(126)}b`, 'z'.repeat(253)]) {
      const id = applySetId(name, 'n'.repeat(63));
      expect(id).toHaveLength(55);
      expect(id.length).toBeLessThanOrEqual(63);
      expect(id).toMatch(LABEL_VALUE);
    }
  });

  it('differs by name and by namespace', () => {
    // (A namespace is a DNS label, without dots, so the KEP's '.'-joined input cannot be read two ways.)
    expect(applySetId('a', 'b')).not.toBe(applySetId('b', 'a'));
    expect(applySetId('a.b', 'c')).not.toBe(applySetId('a.b', 'd'));
  });
});

describe('containsGroupKinds', () => {
  it('is Kind.group (Kind for the core group), each once, sorted, comma-separated', () => {
    expect(containsGroupKinds(['Service', 'Deployment.apps', 'ConfigMap', 'Certificate.cert-manager.io'])).toBe(
      'Certificate.cert-manager.io,ConfigMap,Deployment.apps,Service',
    );
  });

  it('reads the inventory entries earlier versions wrote (group/version/Kind) and folds them with today’s', () => {
    expect(containsGroupKinds(['apps/v1/Deployment', 'Deployment.apps', 'v1/ConfigMap'])).toBe('ConfigMap,Deployment.apps');
  });

  it('is empty for no kinds, and drops unreadable entries', () => {
    expect(containsGroupKinds(undefined)).toBe('');
    expect(containsGroupKinds([])).toBe('');
    expect(containsGroupKinds(['', '.apps'])).toBe('');
  });
});

describe('the parent metadata', () => {
  const wanted = applySetParentMetadata({ name: 'web', namespace: 'team-a' }, ['Deployment.apps', 'ConfigMap']);

  it('is the id label, the tooling annotation and contains-group-kinds', () => {
    expect(wanted).toEqual({
      labels: { [ApplySetLabels.id]: applySetId('web', 'team-a') },
      annotations: {
        [ApplySetAnnotations.tooling]: APPLYSET_TOOLING,
        [ApplySetAnnotations.containsGroupKinds]: 'ConfigMap,Deployment.apps',
      },
    });
    expect(APPLYSET_TOOLING).toMatch(/^[a-z0-9-]+\/v\d+/);
  });

  it('is carried when present beside anything else the Bundle has, and not when one value differs', () => {
    expect(
      carriesParentMetadata(
        { labels: { ...wanted.labels, team: 'a' }, annotations: { ...wanted.annotations, 'meta.helm.sh/release-name': 'r' } },
        wanted,
      ),
    ).toBe(true);
    expect(carriesParentMetadata({ labels: wanted.labels }, wanted)).toBe(false);
    expect(
      carriesParentMetadata(
        { labels: wanted.labels, annotations: { ...wanted.annotations, [ApplySetAnnotations.containsGroupKinds]: 'ConfigMap' } },
        wanted,
      ),
    ).toBe(false);
  });

  it('is applied with the uid and resourceVersion as preconditions and nothing of the spec', () => {
    const body = applySetParentApply(
      { name: 'web', namespace: 'team-a', uid: 'u', resourceVersion: '7', apiVersion: 'smith.atlassian.com/v1' },
      wanted,
    );
    expect(body).toEqual({
      apiVersion: 'smith.atlassian.com/v1',
      kind: 'Bundle',
      metadata: {
        name: 'web',
        namespace: 'team-a',
        uid: 'u',
        resourceVersion: '7',
        labels: wanted.labels,
        annotations: wanted.annotations,
      },
    });
  });
});

describe('the part-of label of members', () => {
  const bundle = { name: 'b', namespace: NAMESPACE, uid: BUNDLE_UID };
  const ours = applySetId('b', NAMESPACE);
  const controllerRef = {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    name: 'b',
    uid: BUNDLE_UID,
    controller: true,
    blockOwnerDeletion: true,
  };
  const member = (labels: Record<string, string>, ownerReferences = [controllerRef]): LiveObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm', namespace: NAMESPACE, uid: 'cm-uid', resourceVersion: '1', labels, ownerReferences },
  });

  it('is written on every object the Bundle applies, over a value the manifest sets', () => {
    expect(buildDesired({ bundle, object: configMap('cm'), dependencies: [] }).manifest.metadata.labels?.[ApplySetLabels.partOf]).toBe(
      ours,
    );
    const claimed = configMap('cm');
    claimed.metadata.labels = { [ApplySetLabels.partOf]: 'applyset-other-v1' };
    expect(buildDesired({ bundle, object: claimed, dependencies: [] }).manifest.metadata.labels?.[ApplySetLabels.partOf]).toBe(ours);
  });

  it('goes in the same guarded patch that lets the object go, when it names the Bundle whose reference goes', () => {
    const ops = referencesPatch(member({ [ApplySetLabels.partOf]: ours }), {});
    expect(ops[0]).toEqual({ op: 'test', path: '/metadata/ownerReferences', value: [controllerRef] });
    expect(ops).toContainEqual({ op: 'remove', path: '/metadata/labels/applyset.kubernetes.io~1part-of' });
  });

  it('stays when it names another set, or when no Bundle reference goes', () => {
    expect(
      referencesPatch(member({ [ApplySetLabels.partOf]: 'applyset-other-v1' }), {}).some(
        (op) => op.op === 'remove' && op.path.includes('part-of'),
      ),
    ).toBe(false);
    expect(partOfRemoval(member({ [ApplySetLabels.partOf]: ours }), [])).toEqual([]);
    expect(partOfRemoval(member({ [ApplySetLabels.partOf]: ours }), [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'b' }])).toEqual([]);
  });

  it('is absent from the patch when the object has none', () => {
    expect(referencesPatch(member({}), {}).some((op) => op.path.includes('part-of'))).toBe(false);
  });

  it("is set to the taking Bundle's id when a takeover finds another set's", () => {
    expect(partOfTakeover(member({ [ApplySetLabels.partOf]: applySetId('old', NAMESPACE) }), bundle)).toEqual([
      { op: 'add', path: '/metadata/labels/applyset.kubernetes.io~1part-of', value: ours },
    ]);
    expect(partOfTakeover(member({ [ApplySetLabels.partOf]: ours }), bundle)).toEqual([]);
    expect(partOfTakeover(member({}), bundle)).toEqual([]);
  });
});
