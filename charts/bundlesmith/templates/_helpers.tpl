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
# write-record is no API verb: the record guard (recordguard.yaml) exempts whoever
# RBAC grants it, so every release of the chart lets every operator write its record.
- apiGroups: ["smith.atlassian.com"]
  resources: ["bundles/status"]
  verbs: ["get", "update", "patch", "write-record"]
# Setting blockOwnerDeletion on a Bundle's objects requires update on the
# owner's finalizers where OwnerReferencesPermissionEnforcement is enabled.
- apiGroups: ["smith.atlassian.com"]
  resources: ["bundles/finalizers"]
  verbs: ["update"]
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create"]
{{- $verbs := include "bundlesmith.objectVerbs" . | fromJsonArray }}
{{- range .Values.rbac.objectResources }}
- apiGroups: {{ toJson .apiGroups }}
  resources: {{ toJson .resources }}
  verbs: {{ toJson $verbs }}
{{- end }}
{{- if .Values.tenancy.defaultServiceAccount }}
# Lockdown: a Bundle's objects are written by its own ServiceAccount, which
# the operator impersonates (any ServiceAccount of a Bundle's namespace:
# spec.serviceAccountName may name one).
- apiGroups: [""]
  resources: ["serviceaccounts"]
  verbs: ["impersonate"]
{{- end }}
{{- end -}}

{{/*
The operator's verbs on rbac.objectResources: reads always (caches, the
finalizer's decisions); writes only when it writes Bundle objects itself
(no lockdown), or for the collector (gc.mode=bundles: it patches away
dangling owner references and deletes dependents, as kube-controller-manager
does, with the operator's identity).
*/}}
{{- define "bundlesmith.objectVerbs" -}}
{{- $verbs := list "get" "list" "watch" -}}
{{- if not .Values.tenancy.defaultServiceAccount -}}
{{- $verbs = concat $verbs (list "create" "patch" "delete") -}}
{{- else if eq .Values.gc.mode "bundles" -}}
{{- $verbs = concat $verbs (list "patch" "delete") -}}
{{- end -}}
{{- toJson $verbs -}}
{{- end -}}

{{/*
The API groups the cluster serves (from helm's view of discovery at install
or upgrade), for gc.mode=cluster: rules name groups, never "*", so that
admission webhooks stay out of reach; the core group is listed by resource
so that no subresource (pods/exec, serviceaccounts/token, nodes/proxy) is
matched.
*/}}
{{- define "bundlesmith.apiGroups" -}}
{{- $groups := dict -}}
{{- range .Capabilities.APIVersions -}}
{{- $parts := splitList "/" . -}}
{{- if and (eq (len $parts) 2) (not (regexMatch "^v[0-9]+((alpha|beta)[0-9]+)?$" (index $parts 0))) -}}
{{- $_ := set $groups (index $parts 0) true -}}
{{- end -}}
{{- end -}}
{{- toJson (keys $groups | sortAlpha) -}}
{{- end -}}

{{/* The operator's user name: its ServiceAccount, system:serviceaccount:<release namespace>:<name>. */}}
{{- define "bundlesmith.operatorUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "bundlesmith.serviceAccountName" .) -}}
{{- end -}}

{{/*
The users whose deletes the deletion guard judges, as a CEL list: the
configured collectors (kube-controller-manager's) and, when bundlesmith's
own collector runs, the operator's ServiceAccount.
*/}}
{{- define "bundlesmith.deletionGuardCollectors" -}}
{{- $users := list -}}
{{- range .Values.deletionGuard.collectors -}}
{{- $users = append $users . -}}
{{- end -}}
{{- if ne .Values.gc.mode "off" -}}
{{- $users = append $users (include "bundlesmith.operatorUser" .) -}}
{{- end -}}
{{- $users | toJson -}}
{{- end -}}

{{/*
The Leases the Deployments hold, as a JSON list: <leaseName>, or
<leaseName>-<shard> for each shard (deployment.yaml's --leader-election-id).
*/}}
{{- define "bundlesmith.leaseNames" -}}
{{- $names := list -}}
{{- range (.Values.sharding.shards | default (list (dict "name" ""))) -}}
{{- $names = append $names (printf "%s%s" $.Values.leaderElection.leaseName (ternary (printf "-%s" .name) "" (ne .name ""))) -}}
{{- end -}}
{{- $names | toJson -}}
{{- end -}}

{{/*
The pod's labels a shard's Deployment selects on: the release's, and the
shard's name when sharded.
*/}}
{{- define "bundlesmith.shardSelectorLabels" -}}
{{- include "bundlesmith.selectorLabels" .root }}
{{- with .shard.name }}
bundlesmith.dev/shard: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* A duration of s, m, h and d units ("1h30m") in seconds, for alert thresholds on *_seconds gauges. */}}
{{- define "bundlesmith.seconds" -}}
{{- $total := 0 -}}
{{- range regexFindAll "[0-9]+[smhd]" . -1 -}}
{{- $n := regexFind "[0-9]+" . | int -}}
{{- $unit := regexFind "[smhd]$" . -}}
{{- $total = add $total (mul $n (get (dict "s" 1 "m" 60 "h" 3600 "d" 86400) $unit)) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/*
The metrics certificate's Secret: metrics.tls.secretName, or with
cert-manager the one its Certificate fills; empty: self-signed at start.
*/}}
{{- define "bundlesmith.metricsTlsSecret" -}}
{{- if .Values.metrics.tls.secretName -}}
{{- .Values.metrics.tls.secretName -}}
{{- else if .Values.metrics.tls.certManager.enabled -}}
{{- printf "%s-metrics-tls" (include "bundlesmith.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The PromQL selector of this release's scrape targets (the ServiceMonitor's job is the metrics Service's name). */}}
{{- define "bundlesmith.promSelector" -}}
job="{{ include "bundlesmith.fullname" . }}-metrics",namespace="{{ .Release.Namespace }}"
{{- end -}}
