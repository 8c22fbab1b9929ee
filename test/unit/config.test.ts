import { metricsSecure, parseArgs } from '../../src/config.js';

describe('operator flags', () => {
  it('has defaults that run a single writer on all namespaces', () => {
    const result = parseArgs([]);
    expect(result).toMatchObject({
      ok: true,
      config: {
        leaderElect: false,
        gc: 'cluster',
        metricsAddr: ':8080',
        metricsAuth: 'none',
        healthAddr: ':8081',
        logLevel: 'info',
        leaseDurationSeconds: 15,
      },
    });
  });

  it.each([
    [['--leader-elect'], { leaderElect: true }],
    [['--leader-elect=false'], { leaderElect: false }],
    [
      ['--leader-elect=true', '--leader-election-namespace', 'ops', '--leader-election-id=x', '--lease-duration-seconds', '4'],
      { leaderElect: true, leaderElectionNamespace: 'ops', leaderElectionId: 'x', leaseDurationSeconds: 4 },
    ],
    [['--gc=bundles', '--namespace', 'team-a', '--workers', '8'], { gc: 'bundles', namespace: 'team-a', workers: 8 }],
    [
      ['--metrics-addr', '0', '--health-addr=127.0.0.1:9000', '--log-level', 'debug'],
      { metricsAddr: '0', healthAddr: '127.0.0.1:9000', logLevel: 'debug' },
    ],
    [['--impersonate', 'system:serviceaccount:ops:bundlesmith'], { impersonate: 'system:serviceaccount:ops:bundlesmith' }],
    [['--metrics-auth=kubernetes'], { metricsAuth: 'kubernetes' }],
    [['--default-service-account', 'bundles'], { defaultServiceAccount: 'bundles' }],
    [['--bundle-selector', 'shard in (a,b),!canary'], { bundleSelector: { text: 'shard in (a,b),!canary' } }],
    [['--sweep-released=false'], { sweepReleased: false }],
    [[], { sweepReleased: true }],
  ])('%j', (argv, want) => {
    expect(parseArgs(argv)).toMatchObject({ ok: true, config: want });
  });

  it.each([
    [['--gc=sometimes'], /^--gc: /],
    [['--lease-duration-seconds', '1'], /^--lease-duration-seconds: /],
    [['--metrics-addr', 'localhost'], /^--metrics-addr: must be host:port/],
    [['--log-level', 'loud'], /^--log-level: /],
    [['--metrics-auth', 'basic'], /^--metrics-auth: /],
    [['--frobnicate'], /^unknown flag --frobnicate$/],
    [['--namespace'], /^flag --namespace needs a value$/],
    [['stray'], /^unexpected argument "stray"$/],
    [['--default-service-account', 'Not_A_Name'], /^--default-service-account: must be a ServiceAccount name/],
    [['--default-service-account', 'bundles', '--impersonate', 'someone'], /exclude each other/],
    [['--bundle-selector', 'shard in (a'], /^--bundle-selector: unbalanced parentheses/],
    [['--metrics-auth=kubernetes', '--metrics-secure=false'], /bearer tokens would cross the network in clear/],
    [['--metrics-cert-dir', '/certs', '--metrics-secure=false'], /^--metrics-cert-dir needs --metrics-secure/],
    [['--metrics-cert-name', 'a/b'], /^--metrics-cert-name: must be a file name/],
  ])('rejects %j', (argv, message) => {
    const result = parseArgs(argv);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]).toMatch(message);
  });

  it.each([
    [[], false],
    [['--metrics-auth=kubernetes'], true],
    [['--metrics-secure'], true],
    [['--metrics-cert-dir', '/certs'], true],
    [['--metrics-secure=false'], false],
    [['--metrics-auth=kubernetes', '--metrics-cert-dir=/certs', '--metrics-cert-name=cert.pem', '--metrics-cert-key=key.pem'], true],
  ])('serves /metrics over HTTPS for %j: %s', (argv, secure) => {
    const result = parseArgs(argv);
    if (!result.ok) throw new Error(result.errors.join('; '));
    expect(metricsSecure(result.config)).toBe(secure);
  });
});
