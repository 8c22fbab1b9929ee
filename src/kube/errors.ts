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
/** A failed UID or resourceVersion precondition on DELETE or a stale update: re-read and decide again. */
export const isPreconditionFailed = (err: unknown): boolean => err instanceof KubeApiError && err.code === 409 && err.reason === 'Conflict';

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
