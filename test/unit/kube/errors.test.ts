import { KubeApiError, SendRefused, mayHaveLanded } from '../../../src/kube/errors.js';

describe('mayHaveLanded: whether a failed write may still have been carried out', () => {
  const status = (code: number, reason: string) => new KubeApiError(code, reason, 'x', 'PATCH', '/api/v1/namespaces/n/configmaps/c');
  it.each<[string, unknown, boolean]>([
    ['no answer (a network error)', new Error('socket hang up'), true],
    ['a timeout of ours', new Error('PATCH /api/v1/...: timed out after 1000 ms'), true],
    ["the API server's own timeout (504)", status(504, 'Timeout'), true],
    ["the API server's own timeout (500, reason Timeout)", status(500, 'Timeout'), true],
    ['a connection error with no status', status(0, 'NetworkError'), true],
    // Red team 18: a webhook down under failurePolicy Fail answers 500; nothing was written.
    ["a webhook's 500", status(500, 'InternalError'), false],
    ['a conflict', status(409, 'Conflict'), false],
    ['a failed JSON-patch test', status(422, 'Invalid'), false],
    ['forbidden', status(403, 'Forbidden'), false],
    ['not sent at all (a send-time check refused it)', new SendRefused('the Bundle changed', 'PATCH', '/x'), false],
  ])('%s', (_name, err, expected) => {
    expect(mayHaveLanded(err)).toBe(expected);
  });
});
