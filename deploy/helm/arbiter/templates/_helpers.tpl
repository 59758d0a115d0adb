{{/* The chart's name, or nameOverride. */}}
{{- define "arbiter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: resources are named after it. */}}
{{- define "arbiter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "arbiter.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "arbiter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "arbiter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "arbiter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "arbiter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "arbiter.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Lease replicas elect a leader on: --leader-election-id, else Arbiter's default. */}}
{{- define "arbiter.leaseName" -}}
{{- default (printf "arbiter-%s" .Values.schedulerName) .Values.leaderElection.id }}
{{- end }}

{{/* The Secret holding values given inline (database URL, OIDC client secret). */}}
{{- define "arbiter.secretName" -}}
{{- include "arbiter.fullname" . }}
{{- end }}

{{- define "arbiter.databaseSecret" -}}
{{- if .Values.database.existingSecret }}{{ .Values.database.existingSecret }}{{ else }}{{ include "arbiter.secretName" . }}{{ end }}
{{- end }}

{{- define "arbiter.oidcSecret" -}}
{{- if .Values.oidc.existingSecret }}{{ .Values.oidc.existingSecret }}{{ else }}{{ include "arbiter.secretName" . }}{{ end }}
{{- end }}

{{/* Whether the chart stores anything in a Secret of its own. */}}
{{- define "arbiter.ownSecret" -}}
{{- if or (and (not .Values.database.existingSecret) .Values.database.url) (and (not .Values.oidc.existingSecret) .Values.oidc.clientSecret) }}true{{ end }}
{{- end }}

{{- define "arbiter.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
