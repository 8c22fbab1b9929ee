/**
 * Issue 12, "nothing secret leaves": a value a reference substituted (here
 * a Secret's password, read by a Bundle that adopted the Secret) must not
 * reach the Bundle's status, an event or the operator's log, even when the
 * apiserver echoes it in a refusal. The operator runs as a real process at
 * trace level, and everything it wrote is searched for the value.
 */
import { readFile } from 'node:fs/promises';
import { resourceType, conditionOf, connect, createNamespace, type TestEnv } from './harness.js';
import { applyBundle, waitForBundle, resourceCondition } from './bundles.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

const PASSWORD = 'hunter2-pw';
// The Secret's data as the apiserver returns it: base64, with '=' padding, which no label value may hold.
const PASSWORD_B64 = Buffer.from(PASSWORD).toString('base64');

let env: TestEnv;
let ns: string;
let operator: OperatorProcess | undefined;
let logFile = '';

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'redact');
  operator = startOperatorProcess(['--namespace', ns, '--log-level', 'trace', '--gc', 'off']);
  logFile = operator.logFile;
});

afterAll(async () => {
  await operator?.terminate();
  env.close();
});

it('a substituted Secret value the apiserver echoes in a refusal is redacted from status, events and logs', async () => {
  const secrets = await resourceType(env, 'v1', 'Secret');
  await env.client.create(secrets, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db-creds', namespace: ns },
    data: { password: PASSWORD_B64 },
  });
  // The Bundle lists the Secret by name (an orphan: adopted) and copies its password into a label, which the apiserver refuses.
  await applyBundle(env, ns, 'leaky', [
    { name: 'creds', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-creds' } } },
    {
      name: 'cm',
      references: [{ name: 'pw', resource: 'creds', path: 'data.password' }],
      object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'leaky-cm', labels: { pw: '!{pw}' } }, data: { a: 'b' } },
    },
  ]);
  const bundle = await waitForBundle(
    env,
    ns,
    'leaky',
    'the refused apply reported on cm',
    (b) => resourceCondition(b, 'cm', 'Error')?.status === 'True',
    60_000,
  );
  const message = resourceCondition(bundle, 'cm', 'Error')?.message ?? '';
  // The refusal is still said, with the value blanked.
  expect(message).toContain('[redacted]');
  expect(conditionOf(bundle, 'Error')?.status).toBe('True');

  const events = await env.client.list(await resourceType(env, 'events.k8s.io/v1', 'Event'), ns);
  const coreEvents = await env.client.list(await resourceType(env, 'v1', 'Event'), ns);
  await operator?.terminate();
  operator = undefined;
  const written = [
    JSON.stringify(bundle.status),
    JSON.stringify(events.items),
    JSON.stringify(coreEvents.items),
    await readFile(logFile, 'utf8'),
  ];
  for (const text of written) {
    expect(text).not.toContain(PASSWORD_B64);
    expect(text).not.toContain(PASSWORD);
  }
  // The log did see the refusal (so the search above searched something).
  expect(written[3]).toContain('apply failed');
});
