/** Errors from the API server, as one typed class the rest of the code can switch on. */

/** The parts of a metav1.Status the operator looks at. */
export interface ApiStatus {
  kind?: string;
  code?: number;
  reason?: string;
  message?: string;
  details?: { causes?: { field?: string; message?: string; reason?: string }[] };
}

export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly verb: string,
    readonly path: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }

  static fromStatus(code: number, body: unknown, verb: string, path: string): KubeApiError {
    const status = isApiStatus(body) ? body : undefined;
    const reason = status?.reason ?? (code === 0 ? 'NetworkError' : `HTTP${code}`);
    const message = status?.message ?? (typeof body === 'string' && body.length > 0 ? body.slice(0, 500) : `${verb} ${path}: HTTP ${code}`);
    return new KubeApiError(code, reason, message, verb, path);
  }
}

export function isApiStatus(value: unknown): value is ApiStatus {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'Status';
}

export const isNotFound = (err: unknown): boolean => err instanceof KubeApiError && err.code === 404;
export const isConflict = (err: unknown): boolean => err instanceof KubeApiError && err.code === 409;
export const isGone = (err: unknown): boolean => err instanceof KubeApiError && err.code === 410;
export const isAlreadyExists = (err: unknown): boolean => err instanceof KubeApiError && err.code === 409 && err.reason === 'AlreadyExists';
export const isForbidden = (err: unknown): boolean => err instanceof KubeApiError && err.code === 403;
export const isInvalid = (err: unknown): boolean => err instanceof KubeApiError && (err.code === 422 || err.code === 400);
/**
 * The server refused a manifest as such, so sending it again cannot help: a
 * 400 or 422, or server-side apply's 500 for a field the type's schema does
 * not declare ("failed to create typed patch object ...: field not declared
 * in schema"), which the apiserver reports as an internal error.
 */
export const isManifestRejected = (err: unknown): boolean =>
  isInvalid(err) || (err instanceof KubeApiError && err.code === 500 && /failed to create typed patch object|field not declared in schema/.test(err.message));

/**
 * A write refused because the object changed since it was read: a failed UID
 * or resourceVersion precondition (409 Conflict) or a failed JSON-patch `test`
 * op, which the apiserver answers with a bare 422 Invalid ("the server
 * rejected our request due to an error in our request"). The operator's
 * patches are otherwise well-formed, so any 422 on them is taken as stale: at
 * worst one extra re-read. The answer is always the same: re-read, decide
 * again. (400 is not stale: it is a malformed request and re-reading will not
 * fix it.)
 */
export const isStaleWrite = (err: unknown): boolean => err instanceof KubeApiError && (err.code === 409 || err.code === 422);

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
