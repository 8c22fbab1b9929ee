/**
 * The Helm chart installed on the test API server and run as its own
 * ServiceAccount: helm install, the flags of each rendered Deployment, a
 * kubeconfig that authenticates with a token of the chart's ServiceAccount
 * (as the operator's pod would), and what the operator was refused.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, parseDocument, stringify } from 'yaml';
import { repoRoot } from '../../src/api/crd-paths.js';
import { kubeconfigPath, run } from './harness.js';
import type { OperatorProcess } from './operator.js';

export const chart = join(repoRoot(), 'charts', 'bundlesmith');

/** One Deployment the chart rendered: its name, pod count and operator flags (minus the HTTP addresses). */
export interface ChartDeployment {
  name: string;
  replicas: number;
  args: string[];
  /** The pod's topologySpreadConstraints, as rendered. */
  topologySpread: unknown[] | undefined;
}

export interface InstalledChart {
  deployments: ChartDeployment[];
  /** The chart's ServiceAccount name, in the release namespace. */
  serviceAccountName: string;
  /** The chart's ServiceAccount, as a user name. */
  user: string;
  /** Every object the release holds, by kind and name. */
  objects: { kind: string; name: string }[];
}

interface RenderedPodSpec {
  serviceAccountName: string;
  containers: { args?: string[] }[];
  topologySpreadConstraints?: unknown[];
}

interface RenderedObject {
  kind?: string;
  metadata?: { name?: string };
  spec?: { replicas?: number; template?: { spec: RenderedPodSpec } };
}

/** Installs the chart (the Bundle CRD stays the global setup's) and reads back what it rendered. */
export async function installChart(release: string, namespace: string, set: string[]): Promise<InstalledChart> {
  const setArgs = ['crds.install=false', ...set].flatMap((s) => ['--set', s]);
  const install = await run('helm', ['install', release, chart, '-n', namespace, ...setArgs]);
  if (install.code !== 0) throw new Error(`helm install failed: ${install.stderr}`);
  const rendered = await run('helm', ['get', 'manifest', release, '-n', namespace]);
  const docs = parseAllDocuments(rendered.stdout)
    .map((d) => d.toJS() as RenderedObject | null)
    .filter((d): d is RenderedObject => d !== null);
  const deployments = docs.flatMap((d) => {
    const pod = d.spec?.template?.spec;
    if (d.kind !== 'Deployment' || !pod) return [];
    const args = (pod.containers[0]?.args ?? []).filter((a) => !a.startsWith('--metrics-addr') && !a.startsWith('--health-addr'));
    return [
      {
        name: d.metadata?.name ?? '',
        replicas: d.spec?.replicas ?? 1,
        args,
        topologySpread: pod.topologySpreadConstraints,
        serviceAccountName: pod.serviceAccountName,
      },
    ];
  });
  const first = deployments[0];
  if (!first) throw new Error('the chart rendered no Deployment');
  return {
    deployments: deployments.map(({ serviceAccountName: _sa, ...d }) => d),
    serviceAccountName: first.serviceAccountName,
    user: `system:serviceaccount:${namespace}:${first.serviceAccountName}`,
    objects: docs.map((d) => ({ kind: d.kind ?? '', name: d.metadata?.name ?? '' })),
  };
}

/**
 * A kubeconfig that authenticates as a ServiceAccount with a token from the
 * TokenRequest API, as the operator's pod would (impersonation cannot nest,
 * and lockdown impersonates each Bundle's ServiceAccount).
 */
export async function serviceAccountKubeconfig(namespace: string, name: string): Promise<string> {
  const token = await run('kubectl', ['create', 'token', name, '-n', namespace, '--duration', '2h']);
  if (token.code !== 0) throw new Error(`kubectl create token failed: ${token.stderr}`);
  const config = parseDocument(readFileSync(kubeconfigPath(), 'utf8')).toJS() as {
    users: { name: string; user: Record<string, unknown> }[];
  };
  for (const u of config.users) u.user = { token: token.stdout.trim() };
  const path = join(tmpdir(), `bundlesmith-${namespace}-${name}.kubeconfig`);
  writeFileSync(path, stringify(config), { mode: 0o600 });
  return path;
}

/** The operator's log lines that mention a refusal. */
export function forbiddenLines(operator: OperatorProcess): string[] {
  return readFileSync(operator.logFile, 'utf8')
    .split('\n')
    .filter((l) => /forbidden|\b403\b/i.test(l));
}

/** `kubectl auth can-i`; a subresource goes in --subresource (kubectl reads "pods/exec" as pods named "exec"). */
export async function canI(user: string, verb: string, resource: string, namespace?: string): Promise<boolean> {
  const [type = resource, subresource] = resource.split('/');
  const result = await run('kubectl', [
    'auth',
    'can-i',
    verb,
    type,
    ...(subresource ? ['--subresource', subresource] : []),
    '--as',
    user,
    ...(namespace ? ['-n', namespace] : ['--all-namespaces']),
  ]);
  return result.stdout.trim() === 'yes';
}
