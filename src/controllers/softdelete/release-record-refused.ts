import type { RecordedObject } from '../../core/softdelete/release-record.js';
import { KubeApiError } from '../../kube/errors.js';

/** A release record the API server refused to write (RBAC, an admission policy): the failure names the record and its object. */
export class ReleaseRecordRefused extends KubeApiError {
  constructor(
    readonly object: RecordedObject,
    readonly record: string,
    err: KubeApiError,
    /** What the server said, alone (the message names the record too). */
    readonly refusal = err.message,
  ) {
    const about = `${object.kind} ${object.namespace}/${object.name}`;
    super(
      err.code,
      err.reason,
      `the release record of ${about} (ConfigMap ${record}) may not be written: ${err.message}`,
      err.verb,
      err.path,
      err.causes,
    );
  }
}
