/**
 * The storeless informer (InformerOptions.index) the collector runs: every
 * page goes to the index as it arrives, `listed` comes only after a complete
 * list (a partial one would make the graph drop objects that exist), and
 * watch events go straight through. The client is a KubeClient whose list
 * and watch are scripted; nothing is timed.
 */
import { KubeClient, type ListOptions, type WatchOptions } from '../../../src/kube/client.js';
import type { KubeTransport } from '../../../src/kube/transport.js';
import type { KubeObject, ResourceType, WatchEvent } from '../../../src/kube/types.js';
import { SupervisedInformer, type InformerIndex } from '../../../src/runtime/informer.js';

const CONFIG_MAPS: ResourceType = {
  group: '',
  version: 'v1',
  apiVersion: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
  verbs: ['list', 'watch'],
};

function cm(name: string, resourceVersion = '1'): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion } };
}

/** Lists are scripted page by page (an Error page fails the list there); each watch plays its events, then waits until aborted. */
class ScriptedClient extends KubeClient {
  readonly lists: (KubeObject[] | Error)[][] = [];
  readonly watches: WatchEvent[][] = [];

  constructor() {
    super(undefined as unknown as KubeTransport);
  }

  override async listPages(
    _rt: ResourceType,
    _ns: string | undefined,
    _opts: ListOptions,
    onPage: (items: KubeObject[]) => void,
  ): Promise<string> {
    const pages = this.lists.shift() ?? [[]];
    for (const page of pages) {
      await Promise.resolve();
      if (page instanceof Error) throw page;
      onPage(page);
    }
    return '100';
  }

  override watch(
    _rt: ResourceType,
    _ns: string | undefined,
    _rv: string,
    opts: WatchOptions,
    onEvent: (event: WatchEvent) => void,
  ): Promise<void> {
    for (const event of this.watches.shift() ?? []) onEvent(event);
    return new Promise((resolve) => {
      if (opts.signal?.aborted) resolve();
      opts.signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  }
}

/** Records what the index was told, in order. */
function recordingIndex(): InformerIndex & { said: string[] } {
  const said: string[] = [];
  return {
    said,
    observed: (obj) => said.push(`observed ${obj.metadata.name}@${obj.metadata.resourceVersion ?? ''}`),
    deleted: (obj) => said.push(`deleted ${obj.metadata.name}`),
    listed: (uids) => said.push(`listed ${[...uids].sort().join(',')}`),
  };
}

async function until(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

describe('SupervisedInformer without a store (the graph is its index)', () => {
  let informer: SupervisedInformer | undefined;
  afterEach(async () => {
    await informer?.stop();
    informer = undefined;
  });

  it('hands every page to the index, then the UIDs of the whole list, and is synced only then', async () => {
    const client = new ScriptedClient();
    client.lists.push([[cm('a'), cm('b')], [cm('c')]]);
    const index = recordingIndex();
    informer = new SupervisedInformer(client, CONFIG_MAPS, { index });
    informer.start();
    await informer.waitForSync();
    expect(index.said).toEqual(['observed a@1', 'observed b@1', 'observed c@1', 'listed uid-a,uid-b,uid-c']);
    expect(informer.size()).toBe(0);
  });

  it('a list that fails part-way says nothing about deletions; the next complete list does', async () => {
    const client = new ScriptedClient();
    client.lists.push([[cm('a')], new Error('connection reset')] as (KubeObject[] | Error)[]);
    client.lists.push([[cm('a')], [cm('b')]]);
    const index = recordingIndex();
    const errors: string[] = [];
    informer = new SupervisedInformer(client, CONFIG_MAPS, { index, backoffInitialMs: 1, onError: (err) => errors.push(String(err)) });
    informer.start();
    await informer.waitForSync();
    expect(errors).toEqual(['Error: connection reset']);
    expect(index.said).toEqual(['observed a@1', 'observed a@1', 'observed b@1', 'listed uid-a,uid-b']);
  });

  it('watch events go straight to the index; bookmarks do not', async () => {
    const client = new ScriptedClient();
    client.lists.push([[cm('a')]]);
    client.watches.push([
      { type: 'ADDED', object: cm('b', '2') },
      { type: 'MODIFIED', object: cm('a', '3') },
      { type: 'BOOKMARK', object: cm('', '4') },
      { type: 'DELETED', object: cm('b', '5') },
    ]);
    const index = recordingIndex();
    informer = new SupervisedInformer(client, CONFIG_MAPS, { index });
    informer.start();
    await until('the watch events', () => index.said.length === 5);
    expect(index.said).toEqual(['observed a@1', 'listed uid-a', 'observed b@2', 'observed a@3', 'deleted b']);
  });

  it('takes no handlers (it has no store to replay to them)', () => {
    informer = new SupervisedInformer(new ScriptedClient(), CONFIG_MAPS, { index: recordingIndex() });
    expect(() => informer?.addHandler({ onAdd: () => undefined })).toThrow(/keeps no store/);
  });
});
