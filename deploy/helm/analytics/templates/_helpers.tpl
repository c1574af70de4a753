{{/* Chart name, for the app.kubernetes.io/name label. */}}
{{- define "analytics.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Base of every object name: the release name (or fullnameOverride). Cut to 40 characters so that
"<base>-<deployable>" stays a valid Service name (63 characters at most).
*/}}
{{- define "analytics.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "analytics.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "analytics.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: analytics
{{- end -}}

{{/* Selector labels of one deployable; dict "root" $ "name" <deployable>. */}}
{{- define "analytics.selectorLabels" -}}
app.kubernetes.io/name: {{ include "analytics.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{/* The Secret the pods read: the operator's, or the one templates/secret.yaml makes. */}}
{{- define "analytics.secretName" -}}
{{- default (include "analytics.fullname" .) .Values.secret.existingSecret -}}
{{- end -}}

{{/* In-cluster address of one service; dict "root" $ "name" <service>. */}}
{{- define "analytics.serviceUrl" -}}
{{- $svc := index .root.Values .name -}}
{{- printf "http://%s-%s:%v" (include "analytics.fullname" .root) .name $svc.port -}}
{{- end -}}

{{/* Fails the render on settings the processes would refuse at start-up. */}}
{{- define "analytics.validate" -}}
{{- $s := .Values.secret -}}
{{- if not $s.existingSecret -}}
{{- range $key, $env := dict "jwtSecret" "JWT_SECRET" "apiKeyPepper" "API_KEY_PEPPER" "internalToken" "INTERNAL_TOKEN" -}}
{{- if lt (len (toString (index $s $key))) 32 -}}
{{- fail (printf "secret.%s (%s) must be at least 32 characters, or set secret.existingSecret" $key $env) -}}
{{- end -}}
{{- end -}}
{{- if and $s.adminToken (lt (len (toString $s.adminToken)) 16) -}}
{{- fail "secret.adminToken (ADMIN_TOKEN) must be at least 16 characters when set" -}}
{{- end -}}
{{- if not (or .Values.database.url $s.databaseUrl) -}}
{{- fail "set database.url or secret.databaseUrl (DATABASE_URL), or use secret.existingSecret" -}}
{{- end -}}
{{- if not (or .Values.nats.url $s.natsUrl) -}}
{{- fail "set nats.url or secret.natsUrl (NATS_URL), or use secret.existingSecret" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* One env var read from the Secret; dict "root" $ "env" <NAME> "optional" <bool>. */}}
{{- define "analytics.secretEnv" -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ include "analytics.secretName" .root }}
      key: {{ .env }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end -}}

{{/* Environment of one deployable; dict "root" $ "name" <deployable> "config" <merged values>. */}}
{{- define "analytics.env" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
- name: NODE_ENV
  value: {{ $v.config.nodeEnv | quote }}
- name: LOG_LEVEL
  value: {{ $v.config.logLevel | quote }}
- name: HOST
  value: {{ $v.config.host | quote }}
{{- if $v.database.url }}
- name: DATABASE_URL
  value: {{ $v.database.url | quote }}
{{- else }}
{{ include "analytics.secretEnv" (dict "root" $root "env" "DATABASE_URL") }}
{{- end }}
{{- if $v.nats.url }}
- name: NATS_URL
  value: {{ $v.nats.url | quote }}
{{- else }}
{{ include "analytics.secretEnv" (dict "root" $root "env" "NATS_URL") }}
{{- end }}
- name: NATS_STREAM
  value: {{ $v.nats.stream | quote }}
- name: NATS_SUBJECT_PREFIX
  value: {{ $v.nats.subjectPrefix | quote }}
{{ include "analytics.secretEnv" (dict "root" $root "env" "INTERNAL_TOKEN") }}
{{- if eq .name "gateway" }}
- name: PORT
  value: {{ .config.port | quote }}
{{ include "analytics.secretEnv" (dict "root" $root "env" "JWT_SECRET") }}
{{ include "analytics.secretEnv" (dict "root" $root "env" "API_KEY_PEPPER") }}
{{ include "analytics.secretEnv" (dict "root" $root "env" "ADMIN_TOKEN" "optional" true) }}
- name: TOKEN_TTL_SECONDS
  value: {{ $v.config.tokenTtlSeconds | quote }}
- name: AUTH_MAX_FAILURES
  value: {{ $v.config.authMaxFailures | quote }}
- name: AUTH_FAILURE_WINDOW_SECONDS
  value: {{ $v.config.authFailureWindowSeconds | quote }}
{{- /* Only enabled services get an address; the others keep the config default (unused). */}}
{{- range $svc := list "catalogue" "pricing" "orders" "inventory" "events" "planning" }}
{{- if (index $v $svc).enabled }}
- name: {{ upper $svc }}_URL
  value: {{ include "analytics.serviceUrl" (dict "root" $root "name" $svc) | quote }}
{{- end }}
{{- end }}
{{- else }}
- name: SERVICE_PORT
  value: {{ .config.port | quote }}
- name: HEALTH_PORT
  value: {{ $v.healthPort | quote }}
- name: OUTBOX_POLL_MS
  value: {{ $v.config.outboxPollMs | quote }}
{{- end }}
{{- with .config.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
Deployment + Service (+ PodDisruptionBudget for the gateway) of one deployable:
  {{ include "analytics.deployable" (dict "root" $ "name" "catalogue") }}
Nothing is rendered when <name>.enabled is false.
*/}}
{{- define "analytics.deployable" -}}
{{- $root := .root -}}
{{- $name := .name -}}
{{- $own := index $root.Values $name -}}
{{- if $own.enabled -}}
{{- include "analytics.validate" $root -}}
{{- $c := mergeOverwrite (deepCopy $root.Values.defaults) (deepCopy $own) -}}
{{- $gateway := eq $name "gateway" -}}
{{- $fullname := printf "%s-%s" (include "analytics.fullname" $root) $name -}}
{{- $sel := dict "root" $root "name" $name -}}
{{- $image := $c.image | default dict -}}
{{- $repository := $image.repository | default $root.Values.image.repository -}}
{{- $tag := $image.tag | default $root.Values.image.tag | default $root.Chart.AppVersion -}}
{{- $main := ternary "dist/gateway/main.js" (printf "dist/services/%s/main.js" $name) $gateway -}}
{{- $command := $c.command | default (list "node" $main) -}}
{{- $portName := ternary "http" "h2c" $gateway -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "analytics.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  replicas: {{ $c.replicas }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 0
      maxSurge: 1
  selector:
    matchLabels:
      {{- include "analytics.selectorLabels" $sel | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "analytics.labels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ $name }}
        {{- with $c.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- if not $root.Values.secret.existingSecret }}
        checksum/secret: {{ include (print $root.Template.BasePath "/secret.yaml") $root | sha256sum }}
        {{- end }}
        {{- with $c.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      # No process of the platform talks to the Kubernetes API.
      automountServiceAccountToken: false
      enableServiceLinks: false
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $c.podSecurityContext | nindent 8 }}
      terminationGracePeriodSeconds: {{ $c.terminationGracePeriodSeconds }}
      containers:
        - name: {{ $name }}
          image: "{{ $repository }}:{{ $tag }}"
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          command:
            {{- toYaml $command | nindent 12 }}
          ports:
            - name: {{ $portName }}
              containerPort: {{ $c.port }}
              protocol: TCP
            {{- if not $gateway }}
            - name: health
              containerPort: {{ $root.Values.healthPort }}
              protocol: TCP
            {{- end }}
          env:
            {{- include "analytics.env" (dict "root" $root "name" $name "config" $c) | nindent 12 }}
          {{- if $gateway }}
          # The gateway serves HTTP/1.1: /healthz (process up) and /readyz (Postgres and every
          # service it calls answer).
          startupProbe:
            httpGet:
              path: /healthz
              port: http
            {{- toYaml $c.probes.startup | nindent 12 }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
            {{- toYaml $c.probes.liveness | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: http
            {{- toYaml $c.probes.readiness | nindent 12 }}
          {{- else }}
          # Services speak HTTP/2 cleartext (Connect) on their port, and plain HTTP/1.1 on the
          # health port for the kubelet: /healthz (process up) and /readyz (its Postgres and NATS
          # answer, within 2 s). The ports open after migrations ran; consumers and the outbox
          # relay start only after that.
          startupProbe:
            httpGet:
              path: /healthz
              port: health
            {{- toYaml $c.probes.startup | nindent 12 }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: health
            {{- toYaml $c.probes.liveness | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: health
            {{- toYaml $c.probes.readiness | nindent 12 }}
          {{- end }}
          resources:
            {{- toYaml $c.resources | nindent 12 }}
          securityContext:
            {{- toYaml $c.securityContext | nindent 12 }}
          volumeMounts:
            # The root filesystem is read-only; /tmp stays writable for Node and its libraries.
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
      {{- with $c.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "analytics.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
  {{- with ($c.service | default dict).annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ ($c.service | default dict).type | default "ClusterIP" }}
  selector:
    {{- include "analytics.selectorLabels" $sel | nindent 4 }}
  ports:
    - name: {{ $portName }}
      port: {{ $c.port }}
      targetPort: {{ $portName }}
      protocol: TCP
      appProtocol: {{ ternary "http" "kubernetes.io/h2c" $gateway }}
{{- if and $gateway $c.pdb $c.pdb.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "analytics.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  minAvailable: {{ $c.pdb.minAvailable }}
  selector:
    matchLabels:
      {{- include "analytics.selectorLabels" $sel | nindent 6 }}
{{- end }}
{{- end -}}
{{- end -}}
