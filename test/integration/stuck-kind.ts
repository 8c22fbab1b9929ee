/**
 * A kind whose watch cannot sync: a CRD served at v1 and v2 whose
 * conversion webhook is down (nothing listens on 127.0.0.1:9), so a list at
 * the version not stored fails. A Bundle that lists one of its objects stops
 * every pass at WatchNotSynced (and a finalizer that must list it holds on
 * KindNotListable) until the conversion is switched back to None: what the
 * red-team tests use to keep a Bundle from deciding.
 */
export const DOWN_CONVERSION = {
  strategy: 'Webhook',
  webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:9/convert' } },
} as const;

/** The CRD of `Widget.<group>` with the conversion webhook down. */
export function widgetCrdWithDownConversion(group: string): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
        {
          name: 'v2',
          served: true,
          storage: false,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
      conversion: DOWN_CONVERSION,
    },
  };
}
