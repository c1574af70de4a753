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

{{/* Labels every pod of the release carries: the gateway and every service. */}}
{{- define "analytics.releaseSelector" -}}
app.kubernetes.io/name: {{ include "analytics.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Selector labels of one deployable; dict "root" $ "name" <deployable>. */}}
{{- define "analytics.selectorLabels" -}}
{{ include "analytics.releaseSelector" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{/* The Secret the pods read: the operator's, or the one templates/secret.yaml makes. */}}
{{- define "analytics.secretName" -}}
{{- default (include "analytics.fullname" .) .Values.secret.existingSecret -}}
{{- end -}}

{{/* The ServiceAccount of every pod. */}}
{{- define "analytics.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "analytics.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* "true" when a deployable is enabled (its own `enabled`, else defaults.enabled); dict "root" $ "name" <deployable>. */}}
{{- define "analytics.enabled" -}}
{{- $own := index .root.Values.deployables .name | default dict -}}
{{- if dig "enabled" .root.Values.defaults.enabled $own }}true{{ end -}}
{{- end -}}

{{/*
In-cluster address of one service; dict "root" $ "name" <service>. The Service is headless, so this
name resolves to the addresses of the service's ready pods.
*/}}
{{- define "analytics.serviceUrl" -}}
{{- $svc := index .root.Values.deployables .name -}}
{{- printf "http://%s-%s:%v" (include "analytics.fullname" .root) .name $svc.port -}}
{{- end -}}

{{/*
The Secret key that holds one deployable's own DATABASE_URL, or "" (it uses the shared one);
dict "root" $ "name" <deployable> "config" <merged values>.
*/}}
{{- define "analytics.databaseSecretKey" -}}
{{- $db := .config.database | default dict -}}
{{- $s := .root.Values.secret -}}
{{- if $db.secretKey -}}
{{- $db.secretKey -}}
{{- else if and (not $s.existingSecret) (index ($s.databaseUrls | default dict) .name) -}}
{{- printf "%s_DATABASE_URL" (upper .name) -}}
{{- end -}}
{{- end -}}

{{/* Fails the render on settings the processes would refuse at start-up. */}}
{{- define "analytics.validate" -}}
{{- $root := . -}}
{{- $s := .Values.secret -}}
{{- /* The events service refuses the pair at start (libs/config); the chart says so before a rollout. */ -}}
{{- if and (eq (toString .Values.webhooks.allowPrivate) "true") (eq (toString .Values.config.nodeEnv) "production") -}}
{{- fail "webhooks.allowPrivate (WEBHOOK_ALLOW_PRIVATE) must not be true with config.nodeEnv production: it lets webhook deliveries reach the cluster's own services and the cloud metadata endpoint (tests and local development only)" -}}
{{- end -}}
{{- if not $s.existingSecret -}}
{{- range $key, $env := dict "jwtSecret" "JWT_SECRET" "apiKeyPepper" "API_KEY_PEPPER" "internalToken" "INTERNAL_TOKEN" -}}
{{- if lt (len (toString (index $s $key))) 32 -}}
{{- fail (printf "secret.%s (%s) must be at least 32 characters, or set secret.existingSecret" $key $env) -}}
{{- end -}}
{{- end -}}
{{- if and $s.imageUrlKey (not (regexMatch "^[0-9a-f]{64}$" (toString $s.imageUrlKey))) -}}
{{- fail "secret.imageUrlKey (IMAGE_URL_KEY) must be 64 lowercase hex digits: the key derived from JWT_SECRET (the chart README, section Image URL key)" -}}
{{- end -}}
{{- if and $s.adminToken (lt (len (toString $s.adminToken)) 16) -}}
{{- fail "secret.adminToken (ADMIN_TOKEN) must be at least 16 characters when set" -}}
{{- end -}}
{{- if not (or .Values.nats.url $s.natsUrl) -}}
{{- fail "set nats.url or secret.natsUrl (NATS_URL), or use secret.existingSecret" -}}
{{- end -}}
{{- range $name, $entry := .Values.deployables -}}
{{- $own := $entry | default dict -}}
{{- $db := $own.database | default dict -}}
{{- $sel := dict "root" $root "name" $name "config" $own -}}
{{- if and (include "analytics.enabled" $sel) (not (or $db.url (include "analytics.databaseSecretKey" $sel) $root.Values.database.url $s.databaseUrl)) -}}
{{- fail (printf "%s has no database: set database.url or secret.databaseUrl (DATABASE_URL), deployables.%s.database, or use secret.existingSecret" $name $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $connections := 0 -}}
{{- $terms := list -}}
{{- range $name, $own := .Values.deployables -}}
{{- $c := mergeOverwrite (deepCopy $root.Values.defaults) (deepCopy ($own | default dict)) -}}
{{- if and $c.autoscaling.enabled (lt (int $c.autoscaling.maxReplicas) (int $c.autoscaling.minReplicas)) -}}
{{- fail (printf "deployables.%s: autoscaling.maxReplicas is below minReplicas" $name) -}}
{{- end -}}
{{- /* The pod's grace holds its preStop sleep, its drain and its longest request (see config). */ -}}
{{- $cfg := $root.Values.config -}}
{{- $longestMs := ternary (add $cfg.planningQueryTimeoutMs $cfg.serviceCallTimeoutMs) (ternary $cfg.planningQueryTimeoutMs $cfg.serviceCallTimeoutMs (eq $name "planning")) (eq $name "gateway") -}}
{{- $needed := add (int $cfg.preStopSleepSeconds) (div (add $cfg.shutdownDrainMs $longestMs 999) 1000) -}}
{{- if and $c.enabled (lt (int $c.terminationGracePeriodSeconds) (int $needed)) -}}
{{- fail (printf "deployables.%s: terminationGracePeriodSeconds %d is under preStopSleepSeconds + shutdownDrainMs + its longest request (%d ms) = %d s" $name (int $c.terminationGracePeriodSeconds) (int $longestMs) (int $needed)) -}}
{{- end -}}
{{- /* A rolling update runs maxSurge pods more; a Secret change rolls every Deployment at once. */ -}}
{{- $db := $c.database | default dict -}}
{{- if and $c.enabled (not (or $db.url (include "analytics.databaseSecretKey" (dict "root" $root "name" $name "config" $c)))) -}}
{{- $pods := add (ternary $c.autoscaling.maxReplicas $c.replicas $c.autoscaling.enabled) $c.rollingUpdate.maxSurge -}}
{{- $connections = add $connections (mul $pods (add $c.dbPoolMax 1)) -}}
{{- $terms = append $terms (printf "%s %d x (%d + 1)" $name (int $pods) (int $c.dbPoolMax)) -}}
{{- end -}}
{{- end -}}
{{- $budget := sub (int .Values.postgres.maxConnections) (int .Values.postgres.reservedConnections) -}}
{{- if gt (int $connections) (int $budget) -}}
{{- /* The one value that fixes it comes first: an operator who only turned on autoscaling knows what to set. */ -}}
{{- fail (printf "connections: %d during a rolling update of every Deployment (%s) exceed postgres.maxConnections - reservedConnections = %d: set postgres.maxConnections to at least %d (after raising Postgres's max_connections, or a session-mode PgBouncer's max_client_conn, to it: docs/operations.md, \"Poolers\"), or lower replicas, autoscaling.maxReplicas, dbPoolMax or rollingUpdate.maxSurge" (int $connections) (join ", " $terms) (int $budget) (add $connections .Values.postgres.reservedConnections)) -}}
{{- end -}}
{{- end -}}

{{/*
One env var read from the Secret; dict "root" $ "env" <NAME> "key" <key, default NAME> "optional" <bool>
"secretName" <another Secret than the pods' (the migration Job's)>.
*/}}
{{/* "true" when the Secret holds IMAGE_URL_KEY: the chart's (secret.imageUrlKey) or the operator's (secret.existingSecretHasImageUrlKey). */}}
{{- define "analytics.hasImageUrlKey" -}}
{{- $s := .Values.secret -}}
{{- if (ternary $s.existingSecretHasImageUrlKey $s.imageUrlKey (not (empty $s.existingSecret))) -}}true{{- end -}}
{{- end -}}

{{- define "analytics.secretEnv" -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .secretName | default (include "analytics.secretName" .root) }}
      key: {{ .key | default .env }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end -}}

{{/*
DATABASE_URL of one deployable, first found of: its own database.url, its own Secret key
(database.secretKey or secret.databaseUrls.<name>), database.url, key DATABASE_URL of the Secret.
dict "root" $ "name" <deployable> "config" <merged values> ["secretName" <the Secret to read>].
*/}}
{{- define "analytics.databaseEnv" -}}
{{- $db := .config.database | default dict -}}
{{- $key := include "analytics.databaseSecretKey" . -}}
{{- if $db.url -}}
- name: DATABASE_URL
  value: {{ $db.url | quote }}
{{- else if $key -}}
{{ include "analytics.secretEnv" (dict "root" .root "env" "DATABASE_URL" "key" $key "secretName" .secretName) }}
{{- else if .root.Values.database.url -}}
- name: DATABASE_URL
  value: {{ .root.Values.database.url | quote }}
{{- else -}}
{{ include "analytics.secretEnv" (dict "root" .root "env" "DATABASE_URL" "secretName" .secretName) }}
{{- end -}}
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
{{ include "analytics.databaseEnv" . }}
- name: DB_POOL_MAX
  value: {{ .config.dbPoolMax | int | quote }}
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
- name: NATS_STREAM_REPLICAS
  value: {{ $v.nats.streamReplicas | int | quote }}
{{- /* Every process brings the stream to these limits at start: all must have the same. */}}
- name: NATS_STREAM_MAX_AGE_SECONDS
  value: {{ $v.nats.streamMaxAgeSeconds | int | quote }}
- name: NATS_STREAM_MAX_BYTES
  value: {{ $v.nats.streamMaxBytes | int64 | quote }}
{{- /* Producers and consumers must agree on the partitions an account's messages travel on. */}}
- name: NATS_PARTITIONS
  value: {{ $v.nats.partitions | int | quote }}
- name: METRICS_PORT
  value: {{ $v.metrics.port | int | quote }}
{{- /* With the migration Job, the pods wait for their schema instead of migrating. */}}
- name: MIGRATIONS
  value: {{ ternary "verify" "apply" (eq (toString $v.migrations.job.enabled) "true") | quote }}
{{ include "analytics.secretEnv" (dict "root" $root "env" "INTERNAL_TOKEN") }}
{{- if eq .name "gateway" }}
- name: PORT
  value: {{ .config.port | int | quote }}
{{ include "analytics.secretEnv" (dict "root" $root "env" "JWT_SECRET") }}
{{- if include "analytics.hasImageUrlKey" $root }}
{{ include "analytics.secretEnv" (dict "root" $root "env" "IMAGE_URL_KEY") }}
{{- end }}
{{ include "analytics.secretEnv" (dict "root" $root "env" "API_KEY_PEPPER") }}
{{ include "analytics.secretEnv" (dict "root" $root "env" "ADMIN_TOKEN" "optional" true) }}
- name: TOKEN_TTL_SECONDS
  value: {{ $v.config.tokenTtlSeconds | int | quote }}
- name: AUTH_MAX_FAILURES
  value: {{ $v.config.authMaxFailures | int | quote }}
- name: AUTH_FAILURE_WINDOW_SECONDS
  value: {{ $v.config.authFailureWindowSeconds | int | quote }}
- name: TRUST_PROXY_HOPS
  value: {{ $v.config.trustProxyHops | int | quote }}
- name: SERVICE_DNS_REFRESH_MS
  value: {{ $v.config.serviceDnsRefreshMs | int | quote }}
- name: SERVICE_FIRST_BYTE_TIMEOUT_MS
  value: {{ $v.config.serviceFirstByteTimeoutMs | int | quote }}
- name: SERVICE_CALL_TIMEOUT_MS
  value: {{ $v.config.serviceCallTimeoutMs | int | quote }}
{{- with $v.config.publicBaseUrl }}
- name: PUBLIC_BASE_URL
  value: {{ . | quote }}
{{- end }}
{{- /* Only enabled services get an address; the others keep the config default (unused: their routes answer 503). */}}
{{- range $svc, $_ := $v.deployables }}
{{- if and (ne $svc "gateway") (include "analytics.enabled" (dict "root" $root "name" $svc)) }}
- name: {{ upper $svc }}_URL
  value: {{ include "analytics.serviceUrl" (dict "root" $root "name" $svc) | quote }}
{{- end }}
{{- end }}
{{- else }}
- name: SERVICE_PORT
  value: {{ .config.port | int | quote }}
- name: HEALTH_PORT
  value: {{ $v.healthPort | int | quote }}
- name: OUTBOX_POLL_MS
  value: {{ $v.config.outboxPollMs | int | quote }}
{{- if eq .name "events" }}
{{- /* Webhook deliveries carry the image URLs GET /events gives: signed as the gateway signs them,
       with IMAGE_URL_KEY when the Secret holds it (then these pods hold no JWT_SECRET). */}}
{{ include "analytics.secretEnv" (dict "root" $root "env" (ternary "IMAGE_URL_KEY" "JWT_SECRET" (eq (include "analytics.hasImageUrlKey" $root) "true"))) }}
{{- with $v.config.publicBaseUrl }}
- name: PUBLIC_BASE_URL
  value: {{ . | quote }}
{{- end }}
- name: EVENTS_GAP_HOLD_SECONDS
  value: {{ $v.eventQueue.gapHoldSeconds | quote }}
- name: WEBHOOK_CONCURRENCY_PER_ENDPOINT
  value: {{ $v.webhooks.concurrencyPerEndpoint | int | quote }}
- name: WEBHOOK_MAX_IN_FLIGHT
  value: {{ $v.webhooks.maxInFlight | int | quote }}
- name: WEBHOOK_POLL_MS
  value: {{ $v.webhooks.pollMs | int | quote }}
- name: WEBHOOK_ALLOW_PRIVATE
  value: {{ ternary "true" "false" (eq (toString $v.webhooks.allowPrivate) "true") | quote }}
{{- end }}
{{- end }}
{{- if has .name (list "gateway" "planning") }}
- name: PLANNING_QUERY_TIMEOUT_MS
  value: {{ $v.config.planningQueryTimeoutMs | int | quote }}
{{- end }}
{{- if and (eq .name "planning") $v.config.planningAccountMaxAnswers }}
- name: PLANNING_ACCOUNT_MAX_ANSWERS
  value: {{ $v.config.planningAccountMaxAnswers | int | quote }}
{{- end }}
- name: SHUTDOWN_DRAIN_MS
  value: {{ $v.config.shutdownDrainMs | int | quote }}
{{- with .config.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
Every object of one deployable, from its entry in `deployables` merged over `defaults`:
Deployment, Service, and when they apply PodDisruptionBudget, HorizontalPodAutoscaler and
NetworkPolicy. dict "root" $ "name" <deployable>; nothing when the deployable is disabled.
*/}}
{{/* The image reference of one deployable (its own image over the global one); dict "root" $ "own" <its entry>. */}}
{{- define "analytics.image" -}}
{{- $root := .root -}}
{{- $image := .own.image | default dict -}}
{{- $repository := $image.repository | default $root.Values.image.repository -}}
{{- /* A deployable's own tag or digest wins over the global ones; a digest wins over a tag. */ -}}
{{- $digest := $image.digest | default (ternary "" $root.Values.image.digest (not (empty $image.tag))) -}}
{{- $tag := $image.tag | default $root.Values.image.tag | default $root.Chart.AppVersion -}}
{{- ternary (printf "%s@%s" $repository $digest) (printf "%s:%s" $repository $tag) (not (empty $digest)) -}}
{{- end -}}

{{- define "analytics.deployable" -}}
{{- $root := .root -}}
{{- $name := .name -}}
{{- $own := index $root.Values.deployables $name | default dict -}}
{{- $c := mergeOverwrite (deepCopy $root.Values.defaults) (deepCopy $own) -}}
{{- if $c.enabled -}}
{{- include "analytics.validate" $root -}}
{{- $gateway := eq $name "gateway" -}}
{{- $fullname := printf "%s-%s" (include "analytics.fullname" $root) $name -}}
{{- $sel := dict "root" $root "name" $name -}}
{{- $imageRef := include "analytics.image" (dict "root" $root "own" $own) -}}
{{- $main := ternary "dist/gateway/main.js" (printf "dist/services/%s/main.js" $name) $gateway -}}
{{- $command := $c.command | default (list "node" $main) -}}
{{- $portName := ternary "http" "h2c" $gateway -}}
{{- $metricsPort := $root.Values.metrics.port -}}
{{- $minReplicas := ternary $c.autoscaling.minReplicas $c.replicas $c.autoscaling.enabled -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "analytics.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  {{- if not $c.autoscaling.enabled }}
  replicas: {{ $c.replicas | int }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: {{ $c.rollingUpdate.maxUnavailable | int }}
      maxSurge: {{ $c.rollingUpdate.maxSurge | int }}
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
        {{- if $root.Values.metrics.podAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $metricsPort | int | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with $c.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "analytics.serviceAccountName" $root }}
      # No process of the platform talks to the Kubernetes API.
      automountServiceAccountToken: false
      enableServiceLinks: false
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $c.podSecurityContext | nindent 8 }}
      terminationGracePeriodSeconds: {{ $c.terminationGracePeriodSeconds | int }}
      containers:
        - name: {{ $name }}
          image: {{ $imageRef | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          command:
            {{- toYaml $command | nindent 12 }}
          ports:
            - name: {{ $portName }}
              containerPort: {{ $c.port | int }}
              protocol: TCP
            {{- if not $gateway }}
            - name: health
              containerPort: {{ $root.Values.healthPort | int }}
              protocol: TCP
            {{- end }}
            - name: metrics
              containerPort: {{ $metricsPort | int }}
              protocol: TCP
          env:
            {{- include "analytics.env" (dict "root" $root "name" $name "config" $c) | nindent 12 }}
          {{- /*
            The gateway serves HTTP/1.1 on its port; a service speaks HTTP/2 cleartext (Connect) on
            its port and plain HTTP/1.1 on the health port, which the kubelet can probe. /healthz:
            the process is up; /readyz: its own database answers. The ports open after migrations ran.
          */}}
          {{- $probePort := ternary "http" "health" $gateway }}
          startupProbe:
            httpGet:
              path: /healthz
              port: {{ $probePort }}
            {{- toYaml $c.probes.startup | nindent 12 }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: {{ $probePort }}
            {{- toYaml $c.probes.liveness | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: {{ $probePort }}
            {{- toYaml $c.probes.readiness | nindent 12 }}
          {{- with $root.Values.config.preStopSleepSeconds }}
          # Endpoints and the gateways' DNS let the pod go before SIGTERM (the image may have no sleep binary).
          lifecycle:
            preStop:
              exec:
                command: ["node", "-e", "setTimeout(() => {}, {{ . | int }}000)"]
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
      {{- /* The operator's affinity and spread replace the chart's soft defaults, each on this deployable's pods. */}}
      {{- if $c.affinity }}
      affinity:
        {{- toYaml $c.affinity | nindent 8 }}
      {{- else if eq $c.podAntiAffinity "hard" }}
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - topologyKey: kubernetes.io/hostname
              labelSelector:
                matchLabels:
                  {{- include "analytics.selectorLabels" $sel | nindent 18 }}
      {{- else if eq $c.podAntiAffinity "soft" }}
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector:
                  matchLabels:
                    {{- include "analytics.selectorLabels" $sel | nindent 20 }}
      {{- end }}
      {{- if $c.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml $c.topologySpreadConstraints | nindent 8 }}
      {{- else if $c.spread.enabled }}
      topologySpreadConstraints:
        {{- range $c.spread.topologyKeys }}
        - maxSkew: {{ $c.spread.maxSkew | int }}
          topologyKey: {{ . }}
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- include "analytics.selectorLabels" $sel | nindent 14 }}
        {{- end }}
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
  {{- if $gateway }}
  type: {{ ($c.service | default dict).type | default "ClusterIP" }}
  {{- else }}
  # Headless: the name resolves to every ready pod's address, not to one virtual IP. A virtual IP
  # balances connections, and a Connect client keeps one HTTP/2 connection, so each gateway pod
  # would send all its calls to one replica; with the pod addresses the gateway spreads its calls
  # over the replicas, call by call.
  clusterIP: None
  {{- end }}
  selector:
    {{- include "analytics.selectorLabels" $sel | nindent 4 }}
  ports:
    - name: {{ $portName }}
      port: {{ $c.port | int }}
      targetPort: {{ $portName }}
      protocol: TCP
      appProtocol: {{ ternary "http" "kubernetes.io/h2c" $gateway }}
{{- if and $c.pdb.enabled (gt (int $minReplicas) 1) }}
---
# More than one replica: a node drain takes them down one at a time.
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "analytics.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  maxUnavailable: {{ $c.pdb.maxUnavailable | int }}
  selector:
    matchLabels:
      {{- include "analytics.selectorLabels" $sel | nindent 6 }}
{{- end }}
{{- if $c.autoscaling.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "analytics.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ $fullname }}
  minReplicas: {{ $c.autoscaling.minReplicas | int }}
  maxReplicas: {{ $c.autoscaling.maxReplicas | int }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $c.autoscaling.targetCPUUtilizationPercentage | int }}
{{- end }}
{{- with $root.Values.networkPolicy }}
{{- if .enabled }}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "analytics.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  podSelector:
    matchLabels:
      {{- include "analytics.selectorLabels" $sel | nindent 6 }}
  policyTypes: [Ingress, Egress]
  ingress:
    # The metrics port from networkPolicy.metricsFrom (empty: anyone).
    - ports:
        - port: metrics
          protocol: TCP
      {{- with .metricsFrom }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- if $gateway }}
    # The gateway is the entry point: its port from networkPolicy.gatewayFrom (empty: anyone).
    - ports:
        - port: http
          protocol: TCP
      {{- with .gatewayFrom }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- else }}
    # The Connect port only from the release's own pods: the gateway and the other services.
    - from:
        - podSelector:
            matchLabels:
              {{- include "analytics.releaseSelector" $root | nindent 14 }}
      ports:
        - port: h2c
          protocol: TCP
    # The health port (/healthz, /readyz, no data) from anyone: the kubelet probes it.
    - ports:
        - port: health
          protocol: TCP
    {{- end }}
  egress:
    # DNS, wherever the cluster's resolver is.
    - ports:
        - port: 53
          protocol: UDP
        - port: 53
          protocol: TCP
    # Postgres.
    - ports:
        - port: {{ .postgres.port | int }}
          protocol: TCP
      {{- with .postgres.to }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    # NATS.
    - ports:
        - port: {{ .nats.port | int }}
          protocol: TCP
      {{- with .nats.to }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    # The services' Connect ports, on the release's own pods.
    - to:
        - podSelector:
            matchLabels:
              {{- include "analytics.releaseSelector" $root | nindent 14 }}
      ports:
        - port: h2c
          protocol: TCP
    {{- if and (eq $name "events") .webhookEgress.enabled }}
    # Webhook deliveries: HTTPS to public addresses only (networkPolicy.webhookEgress).
    - ports:
        {{- range .webhookEgress.ports }}
        - port: {{ . | int }}
          protocol: TCP
        {{- end }}
      {{- with .webhookEgress.to }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
    {{- with .extraEgress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}
{{- end }}
{{- end -}}
{{- end -}}
