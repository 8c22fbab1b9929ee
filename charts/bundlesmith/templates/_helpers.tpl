{{/* Chart name, trimmed to the 63 characters a label value allows. */}}
{{- define "bundlesmith.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Release-qualified name; the release name alone when it already contains the chart name. */}}
{{- define "bundlesmith.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "bundlesmith.selectorLabels" -}}
app.kubernetes.io/name: {{ include "bundlesmith.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "bundlesmith.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "bundlesmith.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "bundlesmith.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "bundlesmith.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* repository@digest when image.digest is set (the tag is then ignored), else repository:tag. */}}
{{- define "bundlesmith.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
--metrics-addr: every interface when metrics.auth=kubernetes (each request
is authenticated and authorized), else metrics.bindAddress (loopback by
default: /metrics unreachable from the network).
*/}}
{{- define "bundlesmith.metricsAddr" -}}
{{- $host := ternary "" .Values.metrics.bindAddress (eq .Values.metrics.auth "kubernetes") -}}
{{- if contains ":" $host -}}
{{- printf "[%s]:%d" $host (int .Values.metrics.port) -}}
{{- else -}}
{{- printf "%s:%d" $host (int .Values.metrics.port) -}}
{{- end -}}
{{- end -}}

{{/* "true" when /metrics listens on more than the loopback interface. */}}
{{- define "bundlesmith.metricsExposed" -}}
{{- if eq .Values.metrics.auth "kubernetes" -}}
true
{{- else -}}
{{- has .Values.metrics.bindAddress (list "127.0.0.1" "::1" "localhost") | not -}}
{{- end -}}
{{- end -}}

{{/*
The operator's own rights on the objects Bundles list, which may be of any
namespaced kind: read them (informers, fresh reads before deletes), create
and patch them (server-side apply, soft-delete stamps, release on Bundle
deletion) and delete them (prune). The released-object sweeper and the
garbage collector in "bundles" mode need exactly these rights as well.
*/}}
{{- define "bundlesmith.bundleRules" -}}
- apiGroups: ["smith.atlassian.com"]
  resources: ["bundles"]
  verbs: ["get", "list", "watch", "update", "patch"]
- apiGroups: ["smith.atlassian.com"]
  resources: ["bundles/status"]
  verbs: ["get", "update", "patch"]
# Setting blockOwnerDeletion on a Bundle's objects requires update on the
# owner's finalizers where OwnerReferencesPermissionEnforcement is enabled.
- apiGroups: ["smith.atlassian.com"]
  resources: ["bundles/finalizers"]
  verbs: ["update"]
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create"]
# Bundles may list objects of any kind.
- apiGroups: ["*"]
  resources: ["*"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
{{- end -}}
