import { RefusedWatches } from '../../../src/controllers/softdelete/refused-watches.js';
import { FakeClock } from '../fake-clock.js';

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('RefusedWatches', () => {
  it('leaves a refused resource alone for five minutes, then lets it be tried again', () => {
    const clock = new FakeClock(0);
    const refused = new RefusedWatches(clock);
    expect(refused.refuse('/configmaps')).toBe(true);
    expect(refused.refuse('/configmaps')).toBe(false);
    expect(refused.recentlyRefused('/configmaps')).toBe(true);
    expect(refused.recentlyRefused('/secrets')).toBe(false);
    clock.advance(5 * 60_000);
    expect(refused.recentlyRefused('/configmaps')).toBe(false);
  });

  it('a Bundle deletion brings the refused watches back within a second, at most once per ten seconds (seed 19614)', async () => {
    const clock = new FakeClock(0);
    const refused = new RefusedWatches(clock);
    let resyncs = 0;
    const resync = (): Promise<void> => {
      resyncs++;
      return Promise.resolve();
    };
    refused.retrySoon(resync); // nothing refused: nothing to do
    clock.advance(1_000);
    expect(resyncs).toBe(0);

    refused.refuse('/configmaps');
    refused.retrySoon(resync);
    refused.retrySoon(resync); // the same deletion's other events
    clock.advance(1_000);
    expect(resyncs).toBe(1);
    expect(refused.recentlyRefused('/configmaps')).toBe(false);
    await settle();

    refused.refuse('/configmaps'); // refused again by the retry
    refused.retrySoon(resync);
    clock.advance(5_000);
    expect(resyncs).toBe(1);
    clock.advance(5_000); // ten seconds after the last retry
    refused.retrySoon(resync);
    clock.advance(1_000);
    expect(resyncs).toBe(2);
    refused.stop();
  });
});
