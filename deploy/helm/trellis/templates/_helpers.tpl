{{/* The chart's name, and the release's full name (both cut to 63 characters for DNS). */}}
{{- define "trellis.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "trellis.fullname" -}}
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

{{- define "trellis.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "trellis.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels of one component (api or worker): call with (dict "root" $ "component" "api"). */}}
{{- define "trellis.selectorLabels" -}}
app.kubernetes.io/name: {{ include "trellis.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "trellis.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "trellis.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "trellis.secretName" -}}
{{- default (include "trellis.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{- define "trellis.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Ports as Trellis reads them from its configuration (config.Server.Port, config.Metrics.WorkerPort). */}}
{{- define "trellis.apiPort" -}}
{{- dig "Server" "Port" 6262 .Values.config }}
{{- end }}

{{- define "trellis.workerPort" -}}
{{- dig "Metrics" "WorkerPort" 9464 .Values.config }}
{{- end }}

{{- define "trellis.metricsEnabled" -}}
{{- if dig "Metrics" "Enabled" false .Values.config }}true{{ end }}
{{- end }}

{{/* Pod annotations: restart on a configuration or Secret change; Prometheus scraping. */}}
{{- define "trellis.podAnnotations" -}}
{{- $root := .root -}}
checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
{{- if not $root.Values.secrets.existingSecret }}
checksum/secret: {{ include (print $root.Template.BasePath "/secret.yaml") $root | sha256sum }}
{{- end }}
{{- if and (include "trellis.metricsEnabled" $root) $root.Values.metrics.podAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .port | quote }}
prometheus.io/path: /metrics
{{- end }}
{{- with .extra }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The pod spec both Deployments share; call with
(dict "root" $ "component" "worker" "role" "worker" "port" 9464 "portName" "probes" "values" .Values.worker).
*/}}
{{- define "trellis.podSpec" -}}
{{- $root := .root -}}
serviceAccountName: {{ include "trellis.serviceAccountName" $root }}
automountServiceAccountToken: false
{{- with $root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml $root.Values.podSecurityContext | nindent 2 }}
terminationGracePeriodSeconds: {{ .values.terminationGracePeriodSeconds }}
containers:
  - name: {{ .component }}
    image: {{ include "trellis.image" $root | quote }}
    imagePullPolicy: {{ $root.Values.image.pullPolicy }}
    args: ["--role", {{ .role | quote }}]
    env:
      - name: TRELLIS_CONFIG
        value: /etc/trellis/trellis.config.json
      - name: TRELLIS__Server__Host
        value: 0.0.0.0
      - name: TRELLIS__DataDirectory
        value: /var/lib/trellis
      - name: TRELLIS__Database__Url
        valueFrom:
          secretKeyRef:
            name: {{ include "trellis.secretName" $root }}
            key: database-url
      - name: TRELLIS__Security__EncryptionKey
        valueFrom:
          secretKeyRef:
            name: {{ include "trellis.secretName" $root }}
            key: encryption-key
      - name: TRELLIS__Security__Basic__Users
        valueFrom:
          secretKeyRef:
            name: {{ include "trellis.secretName" $root }}
            key: basic-users
            optional: true
      - name: TRELLIS__Temporal__ApiKey
        valueFrom:
          secretKeyRef:
            name: {{ include "trellis.secretName" $root }}
            key: temporal-api-key
            optional: true
      - name: TRELLIS__Security__Bearer__Secret
        valueFrom:
          secretKeyRef:
            name: {{ include "trellis.secretName" $root }}
            key: bearer-secret
            optional: true
      {{- with $root.Values.extraEnv }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    ports:
      - name: {{ .portName }}
        containerPort: {{ .port }}
        protocol: TCP
    startupProbe:
      httpGet:
        path: /livez
        port: {{ .portName }}
      periodSeconds: {{ $root.Values.probes.startup.periodSeconds }}
      failureThreshold: {{ $root.Values.probes.startup.failureThreshold }}
    livenessProbe:
      httpGet:
        path: /livez
        port: {{ .portName }}
      periodSeconds: {{ $root.Values.probes.liveness.periodSeconds }}
      timeoutSeconds: {{ $root.Values.probes.liveness.timeoutSeconds }}
      failureThreshold: {{ $root.Values.probes.liveness.failureThreshold }}
    readinessProbe:
      httpGet:
        path: /readyz
        port: {{ .portName }}
      periodSeconds: {{ $root.Values.probes.readiness.periodSeconds }}
      timeoutSeconds: {{ $root.Values.probes.readiness.timeoutSeconds }}
      failureThreshold: {{ $root.Values.probes.readiness.failureThreshold }}
    resources:
      {{- toYaml .values.resources | nindent 6 }}
    securityContext:
      {{- toYaml $root.Values.securityContext | nindent 6 }}
    volumeMounts:
      - name: config
        mountPath: /etc/trellis/trellis.config.json
        subPath: trellis.config.json
        readOnly: true
      - name: data
        mountPath: /var/lib/trellis
      - name: tmp
        mountPath: /tmp
      {{- if $root.Values.temporalTls.secretName }}
      - name: temporal-tls
        mountPath: /etc/trellis/temporal-tls
        readOnly: true
      {{- end }}
      {{- with $root.Values.extraVolumeMounts }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
volumes:
  - name: config
    configMap:
      name: {{ include "trellis.fullname" $root }}
  - name: data
    emptyDir:
      sizeLimit: {{ $root.Values.dataDirectory.sizeLimit }}
  - name: tmp
    emptyDir:
      sizeLimit: 256Mi
  {{- if $root.Values.temporalTls.secretName }}
  - name: temporal-tls
    secret:
      secretName: {{ $root.Values.temporalTls.secretName }}
  {{- end }}
  {{- with $root.Values.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
