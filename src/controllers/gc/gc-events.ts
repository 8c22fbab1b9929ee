/**
 * What the collector says (its Events, and its log of what it deleted).
 * Collections (issue 13.2): every object in the structured log and the
 * deletes-by-kind metric, and one GarbageCollected Event per owner cascade
 * (core/gc/cascade-events.ts), created on the owner and updated as a series
 * while the cascade runs, at most once per `flushMs`: an Event per object
 * would double the API server's work in a large cascade (kube-controller-
 * manager writes none). Other events (a broken cycle, a reference to
 * another namespace) are written one by one. None of it ever fails the
 * collector's work.
 */
import { CascadeEvents, type CascadeEventWrite, type CascadeOwner } from '../../core/gc/cascade-events.js';
import type { DeletionPropagation } from '../../api/names.js';
import { describeOwnerChain } from '../../core/gc/decide.js';
import { formatIdentity, type Identity } from '../../core/gc/graph-identity.js';
import type { Graph } from '../../core/gc/graph.js';
import type { OwnerRef } from '../../core/gc/graph-node.js';
import { errorMessage } from '../../kube/errors.js';
import type { Clock } from '../../kube/clock.js';
import type { GcEventText } from '../../core/gc/events.js';
import { eventInput, microTime, writeEvent } from '../events.js';
import type { GcLog } from './gc-log.js';
import type { GcMetrics } from './metrics.js';
import type { GcApi } from './writes.js';

/** A cascade quiet this long is done: a later collection under the same owner starts a new Event. */
const CASCADE_IDLE_MS = 60_000;

export class GcEvents {
  private readonly cascades = new CascadeEvents(CASCADE_IDLE_MS);
  private timer: ReturnType<typeof setTimeout> | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly sending = new Set<Promise<void>>();

  constructor(
    private readonly api: GcApi,
    private readonly graph: Graph,
    private readonly clock: Clock,
    private readonly instance: string,
    private readonly metrics: GcMetrics,
    private readonly log: GcLog,
    private readonly flushMs: number,
  ) {}

  /** The collector deleted `identity` because of `causes` (its owner references that let it go). */
  collected(identity: Identity, propagation: DeletionPropagation, causes: readonly OwnerRef[]): void {
    const ownerChain = describeOwnerChain(this.graph, causes);
    this.log('info', 'garbage collected', {
      apiVersion: identity.apiVersion,
      kind: identity.kind,
      namespace: identity.namespace,
      name: identity.name,
      uid: identity.uid,
      propagation,
      ownerChain,
    });
    const cause = causes[0];
    if (cause === undefined) return;
    this.cascades.record(
      this.ownerOf(cause, identity),
      propagation,
      { kind: identity.kind, name: identity.name },
      this.clock.now(),
      ownerChain,
    );
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.flushMs);
  }

  /** One Event about `about`, written in the background. */
  emit(about: Identity, text: GcEventText): void {
    const sent = writeEvent(this.api, this.clock, this.instance, { target: about, ...text }, (err) => {
      this.metrics.error(about.kind, 'event');
      this.log('warn', `event ${text.reason} on ${formatIdentity(about)} not recorded: ${errorMessage(err)}`);
    });
    this.sending.add(sent);
    void sent.finally(() => this.sending.delete(sent));
  }

  /** Writes what is due now, and waits for every Event in flight (tests and stop call it; the timer does otherwise). Never rejects. */
  async flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writeDue());
    await this.flushing;
    await Promise.allSettled([...this.sending]);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /**
   * The Event's subject: the owner, seen from the dependent's namespace
   * (where a namespaced owner has to be, and where its user looks); the
   * owner of a cluster-scoped dependent is cluster-scoped too.
   */
  private ownerOf(cause: OwnerRef, dependent: Identity): CascadeOwner {
    return { uid: cause.uid, apiVersion: cause.type.apiVersion, kind: cause.type.kind, name: cause.name, namespace: dependent.namespace };
  }

  private async writeDue(): Promise<void> {
    const writes = this.cascades.due(this.clock.now());
    await Promise.all(writes.map((w) => this.write(w)));
  }

  private async write(w: CascadeEventWrite): Promise<void> {
    const target = {
      apiVersion: w.owner.apiVersion,
      kind: w.owner.kind,
      name: w.owner.name,
      uid: w.owner.uid,
      ...(w.owner.namespace ? { namespace: w.owner.namespace } : {}),
    };
    try {
      if (w.kind === 'create') {
        const name = await this.api.createEvent(
          eventInput(this.clock, this.instance, { target, type: 'Normal', reason: w.reason, action: w.action, message: w.message }),
        );
        this.cascades.created(w.owner.uid, name);
      } else {
        await this.api.updateEventSeries(
          w.owner.namespace || 'default',
          w.eventName,
          { count: w.count, lastObservedTime: microTime(w.lastObservedAt) },
          w.message,
        );
      }
    } catch (err) {
      this.cascades.failed(w);
      this.metrics.error(w.owner.kind, 'event');
      this.log('warn', `GarbageCollected event on ${w.owner.kind} ${w.owner.name} not recorded: ${errorMessage(err)}`);
    }
  }
}
