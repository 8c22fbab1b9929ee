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
    /** The Status's details.causes: what a 422 found wrong (a field and why), or the JSON patch's own error. */
    readonly causes: readonly { field?: string; message?: string; reason?: string }[] = [],
  ) {
    super(message);
    this.name = 'KubeApiError';
  }

  static fromStatus(code: number, body: unknown, verb: string, path: string): KubeApiError {
    const status = isApiStatus(body) ? body : undefined;
    const reason = status?.reason ?? (code === 0 ? 'NetworkError' : `HTTP${code}`);
    const message = status?.message ?? (typeof body === 'string' && body.length > 0 ? body.slice(0, 500) : `${verb} ${path}: HTTP ${code}`);
    const causes = status?.details?.causes ?? [];
    // A patch the server could not apply says why only in its cause: keep it in the message people read.
    const detail = causes.find((c) => c.reason === UNAPPLICABLE_PATCH_CAUSE)?.message;
    return new KubeApiError(code, reason, detail ? `${message}: ${detail}` : message, verb, path, causes);
  }
}

/**
 * Asked at the moment a request is sent; a reason (a string) refuses it.
 * Used for the checks that must hold when a write leaves, not only when its
 * pass began: this process still holds its Lease, the Bundle is unchanged.
 */
export type SendGuard = () => string | undefined;

/** A request the client did not send because a SendGuard refused it: nothing reached the server. */
export class SendRefused extends KubeApiError {
  constructor(reason: string, verb: string, path: string) {
    super(0, 'SendRefused', `not sent: ${reason}`, verb, path);
    this.name = 'SendRefused';
  }
}

export const isSendRefused = (err: unknown): err is SendRefused => err instanceof SendRefused;

/**
 * Whether a write that failed may still have been carried out: no answer
 * (a network error, a timeout of ours, a connection cut), or the API
 * server's own timeout (it may finish the write after answering). Any other
 * answer, a webhook's 500 included, means nothing was written; a write the
 * client never sent (SendRefused) wrote nothing either.
 */
export function mayHaveLanded(err: unknown): boolean {
  if (isSendRefused(err)) return false;
  if (!(err instanceof KubeApiError)) return true;
  return err.code === 0 || err.code === 504 || err.reason === 'Timeout' || err.reason === 'ServerTimeout';
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
  isInvalid(err) ||
  (err instanceof KubeApiError && err.code === 500 && /failed to create typed patch object|field not declared in schema/.test(err.message));

/**
 * The cause type the API server may give a JSON patch it could not apply to
 * the object as stored. v1.36 gives none at all: a bare 422 Invalid, "the
 * server rejected our request due to an error in our request", with no
 * causes (test/integration/limits.test.ts pins the real answers).
 */
const UNAPPLICABLE_PATCH_CAUSE = 'UnexpectedServerResponse';

/**
 * A write refused because the object changed since it was read: a failed UID
 * or resourceVersion precondition (409 Conflict), or a JSON patch that no
 * longer applies to the object as stored (a failed `test`, a path to remove
 * that is gone): a 422 with no field causes. The answer is to re-read and
 * decide again.
 *
 * A 422 that names fields is not stale: the server found the write itself
 * invalid (a label value over 63 characters, a field out of range), and
 * sending it again after a re-read fails the same way: isInvalidWrite. (400
 * is a malformed request: not stale either.)
 */
export const isStaleWrite = (err: unknown): boolean =>
  err instanceof KubeApiError && (err.code === 409 || (err.code === 422 && err.causes.every((c) => c.reason === UNAPPLICABLE_PATCH_CAUSE)));

/** A write the server found invalid as such (422, not a patch that stopped applying): report it, never retry it silently. */
export const isInvalidWrite = (err: unknown): boolean => err instanceof KubeApiError && err.code === 422 && !isStaleWrite(err);

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
