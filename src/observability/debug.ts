/**
 * The read-only debug endpoint, on --debug-addr (off unless set): the
 * garbage collector's view of one owner's dependents,
 *   GET /debug/gc/graph?kind=KIND&name=NAME[&namespace=NS][&uid=UID][&format=dot|json]
 * It reads the collector's graph and writes nothing; bind it to localhost
 * (the default host when only a port is given) and reach it with
 * `kubectl port-forward`: it names objects across the cluster.
 */
import { createServer } from 'node:http';
import { dependentsView, findOwners, toDot } from '../core/gc/graph-view.js';
import type { Graph } from '../core/gc/graph.js';
import { listen } from './http.js';
import type { Logger } from './logger.js';

export interface DebugEndpointOptions {
  /** host:port; a bare ":port" binds 127.0.0.1. */
  addr: string;
  /** The collector's graph, or undefined when no collector runs here (--gc=off, or a standby). */
  graph: () => Graph | undefined;
  logger: Logger;
}

export async function startDebugEndpoint(o: DebugEndpointOptions): Promise<{ close(): Promise<void>; port: number }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://debug');
    const reply = (code: number, type: string, body: string) => {
      res.writeHead(code, { 'Content-Type': type });
      res.end(body);
    };
    if (req.method !== 'GET' || url.pathname !== '/debug/gc/graph')
      return reply(404, 'text/plain', 'not found: GET /debug/gc/graph?kind=KIND&name=NAME[&namespace=NS][&uid=UID][&format=dot|json]\n');
    const graph = o.graph();
    if (!graph) return reply(503, 'text/plain', 'no garbage collector runs in this replica (--gc=off, or not the leader)\n');
    const kind = url.searchParams.get('kind') ?? '';
    const name = url.searchParams.get('name') ?? '';
    const uid = url.searchParams.get('uid');
    if ((kind === '' || name === '') && uid === null) return reply(400, 'text/plain', 'kind and name (or uid) are required\n');
    const namespace = url.searchParams.get('namespace');
    const owners = findOwners(graph, { kind, name, ...(namespace !== null ? { namespace } : {}), ...(uid !== null ? { uid } : {}) });
    if (owners.length === 0)
      return reply(404, 'text/plain', `the collector's graph holds no ${kind}/${name}${namespace ? ` in ${namespace}` : ''}\n`);
    const view = dependentsView(owners);
    if (url.searchParams.get('format') === 'dot') return reply(200, 'text/vnd.graphviz', `${toDot(view)}\n`);
    return reply(200, 'application/json', `${JSON.stringify(view, null, 2)}\n`);
  });
  if (!(await listen(server, o.addr, '127.0.0.1'))) throw new Error(`--debug-addr ${o.addr}: nothing to listen on`);
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  o.logger.info({ addr: o.addr, port }, 'debug endpoint listening (read-only)');
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
