/**
 * The HTTP transport to the API server. Authentication and TLS settings come
 * from @kubernetes/client-node's KubeConfig (kubeconfig files, in-cluster
 * service-account tokens, exec plugins); requests go through one keep-alive
 * agent so that hundreds of parallel DELETEs reuse connections, and through
 * node:https directly so that watch streams and metadata-only Accept headers
 * are under our control.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError, SendRefused, type SendGuard } from './errors.js';
import { DateHeaderServerTime, parseHttpDate, systemClock } from './clock.js';
import { RequestBudget, type RequestLimiter, type RequestPriority } from './request-budget.js';

export interface TransportOptions {
  /** Connections kept per host; parallel requests beyond it wait for a free socket. */
  maxSockets?: number;
  /** Per-request timeout for non-watch requests. */
  requestTimeoutMs?: number;
  /** Impersonate this user (Impersonate-User header), e.g. a ServiceAccount in tests. */
  impersonateUser?: string;
  impersonateGroups?: readonly string[];
  /**
   * The process's request budget, shared with its other transports (the
   * operator makes one from --qps/--burst for all its clients). Takes
   * precedence over qps/burst.
   */
  limiter?: RequestLimiter;
  /** This transport's place in the budget's queue (default normal; the Lease and reviews go first). */
  priority?: RequestPriority;
  /** A budget of this transport's own, in requests per second (0 = none), when no shared limiter is given. */
  qps?: number;
  burst?: number;
  /**
   * Asked right before every write is sent, after the request budget's
   * wait: a reason refuses the write (SendRefused). A write is any verb but
   * GET, except the reviews (access and token reviews are POSTs that write
   * nothing). The operator's clients refuse while this process does not hold
   * its leader-election Lease; the Lease's own client has none.
   */
  writeFence?: SendGuard;
  /**
   * Told of every request's outcome, watches included (client-go's
   * rest_client_requests_total): the HTTP status code as text, or "<error>"
   * when no answer came; the API server's host:port.
   */
  requestObserver?: (request: { method: string; code: string; host: string }) => void;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  accept?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Extra headers for this request (a client that impersonates another identity sets them on every request). */
  headers?: Readonly<Record<string, string | readonly string[]>>;
  /**
   * Asked at the moment the request is sent (after every wait): a reason
   * refuses it with SendRefused. A decision checked when its pass began may
   * be wrong by the time a long pass reaches this request.
   */
  guard?: SendGuard;
}

/** A request that may change something: any verb but GET, except the reviews, which are POSTs that store nothing. */
function isWrite(method: string, path: string): boolean {
  return (
    method !== 'GET' &&
    !/\/(selfsubjectaccessreviews|subjectaccessreviews|localsubjectaccessreviews|selfsubjectrulesreviews|tokenreviews|selfsubjectreviews)$/.test(
      path,
    )
  );
}

/** Refresh credentials (bound service-account tokens rotate) this often. */
const AUTH_REFRESH_MS = 60_000;

export class KubeTransport {
  private readonly server: URL;
  private readonly agent: http.Agent;
  private readonly watchAgent: http.Agent;
  private readonly isHttps: boolean;
  private headers: Record<string, string> = {};
  private headersAt = -Infinity;
  private readonly limiter: RequestLimiter | undefined;
  private readonly priority: RequestPriority;
  private sent = 0;
  /** The server's clock, estimated from the `Date` header of every answer. */
  readonly serverTime = new DateHeaderServerTime();

  private constructor(
    private readonly kubeConfig: KubeConfig,
    tls: https.AgentOptions,
    private readonly options: TransportOptions,
  ) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
    this.isHttps = this.server.protocol === 'https:';
    const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 64 };
    this.agent = this.isHttps ? new https.Agent({ ...tls, ...agentOptions }) : new http.Agent(agentOptions);
    // Every watch holds its socket for minutes: watches get their own,
    // uncapped pool, so a hundred of them (one per resource for the garbage
    // collector) can never starve the request pool above.
    this.watchAgent = this.isHttps ? new https.Agent({ ...tls, keepAlive: false }) : new http.Agent({ keepAlive: false });
    this.limiter =
      options.limiter ??
      (options.qps && options.qps > 0
        ? new RequestBudget(systemClock, { qps: options.qps, burst: options.burst ?? Math.max(1, Math.ceil(options.qps * 1.5)) })
        : undefined);
    this.priority = options.priority ?? 'normal';
  }

  static async create(kubeConfig: KubeConfig, options: TransportOptions = {}): Promise<KubeTransport> {
    const opts: https.RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(opts);
    const tls: https.AgentOptions = {};
    if (opts.ca) tls.ca = opts.ca;
    if (opts.cert) tls.cert = opts.cert;
    if (opts.key) tls.key = opts.key;
    if (opts.rejectUnauthorized !== undefined) tls.rejectUnauthorized = opts.rejectUnauthorized;
    const transport = new KubeTransport(kubeConfig, tls, options);
    await transport.refreshHeaders();
    return transport;
  }

  /** True when every request impersonates a user set at creation (TransportOptions.impersonateUser). */
  get impersonates(): boolean {
    return this.options.impersonateUser !== undefined;
  }

  /** The budget this transport's requests draw from (undefined: unlimited). */
  get requestLimiter(): RequestLimiter | undefined {
    return this.limiter;
  }

  /** Requests sent so far, watches not counted (they take no token). */
  get requestsSent(): number {
    return this.sent;
  }

  get serverUrl(): string {
    return this.server.toString();
  }

  close(): void {
    this.agent.destroy();
    this.watchAgent.destroy();
  }

  private async refreshHeaders(): Promise<void> {
    const opts: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (typeof v === 'string') headers[k] = v;
    }
    if (typeof opts.auth === 'string') headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    if (this.options.impersonateUser) headers['Impersonate-User'] = this.options.impersonateUser;
    this.headers = headers;
    this.headersAt = Date.now();
  }

  private async authHeaders(): Promise<Record<string, string>> {
    if (Date.now() - this.headersAt > AUTH_REFRESH_MS) await this.refreshHeaders();
    return this.headers;
  }

  private url(path: string, query: RequestOptions['query']): URL {
    const url = new URL(path, this.server);
    // The server URL may carry a path prefix (proxies); keep it.
    if (this.server.pathname !== '/' && !path.startsWith(this.server.pathname))
      url.pathname = this.server.pathname.replace(/\/$/, '') + path;
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  private async open(
    method: string,
    path: string,
    opts: RequestOptions,
    agent: http.Agent = this.agent,
  ): Promise<{ res: http.IncomingMessage; req: http.ClientRequest }> {
    // Watches are long-lived streams, not request load: client-go does not rate-limit them either.
    if (agent === this.agent) {
      if (this.limiter) await this.limiter.take(this.priority);
      this.sent++;
    }
    const headers: http.OutgoingHttpHeaders = { ...(await this.authHeaders()), Accept: opts.accept ?? 'application/json' };
    const groups = this.options.impersonateGroups ?? [];
    if (groups.length > 0) headers['Impersonate-Group'] = [...groups];
    for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k] = typeof v === 'string' ? v : [...v];
    let payload: Buffer | undefined;
    if (opts.body !== undefined) {
      payload = Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = payload.length;
    }
    const url = this.url(path, opts.query);
    // The last moment before the request leaves: nothing below waits. A write decided earlier is checked here again.
    const refusal = (isWrite(method, url.pathname) ? this.options.writeFence?.() : undefined) ?? opts.guard?.();
    if (refusal !== undefined) throw new SendRefused(refusal, method, url.pathname);
    const mod = this.isHttps ? https : http;
    return await new Promise((resolve, reject) => {
      const sentAt = this.serverTime.monotonicNow();
      let answered = false;
      const req = mod.request(url, { method, headers, agent, signal: opts.signal }, (res) => {
        answered = true;
        this.options.requestObserver?.({ method, code: String(res.statusCode ?? 0), host: this.server.host });
        const dateMs = parseHttpDate(res.headers.date);
        if (dateMs !== undefined) this.serverTime.observe({ dateMs, sentAt, receivedAt: this.serverTime.monotonicNow() });
        resolve({ res, req });
      });
      const timeoutMs = opts.timeoutMs ?? this.options.requestTimeoutMs;
      if (timeoutMs) req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${url.pathname}: timed out after ${timeoutMs} ms`)));
      req.on('error', (err) => {
        if (!answered) this.options.requestObserver?.({ method, code: '<error>', host: this.server.host });
        reject(new KubeApiError(0, 'NetworkError', `${method} ${url.pathname}: ${err.message}`, method, url.pathname));
      });
      if (payload) req.write(payload);
      req.end();
    });
  }

  /** One request; resolves with the parsed body for 2xx, throws KubeApiError otherwise. */
  async request(method: string, path: string, opts: RequestOptions = {}): Promise<unknown> {
    const { res } = await this.open(method, path, opts);
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    if (text.length > 0 && (res.headers['content-type'] ?? '').includes('json')) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) throw KubeApiError.fromStatus(status, body, method, path);
    return body;
  }

  /**
   * A streaming GET (watch): calls onLine for each newline-delimited JSON
   * value until the server ends the stream or `signal` aborts. Resolves when
   * the stream ends; rejects on HTTP or network errors.
   */
  async stream(path: string, opts: RequestOptions, onValue: (value: unknown) => void): Promise<void> {
    const { res } = await this.open('GET', path, opts, this.watchAgent);
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      let body: unknown = Buffer.concat(chunks).toString('utf8');
      try {
        body = JSON.parse(body as string);
      } catch {
        /* keep text */
      }
      throw KubeApiError.fromStatus(status, body, 'WATCH', path);
    }
    let buffered = '';
    try {
      for await (const chunk of res) {
        buffered += (chunk as Buffer).toString('utf8');
        let newline = buffered.indexOf('\n');
        while (newline >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line.length > 0) onValue(JSON.parse(line));
          newline = buffered.indexOf('\n');
        }
      }
    } catch (err) {
      if (opts.signal?.aborted) return;
      throw err;
    }
    if (buffered.trim().length > 0) onValue(JSON.parse(buffered));
  }
}
