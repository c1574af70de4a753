import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv from "ajv";
import { serviceNames, serviceRegistry } from "@analytics/contracts";
import type { Bus } from "@analytics/bus";
import type { Db } from "@analytics/db";
import type { OutboxRelay } from "@analytics/outbox";
import { consumerLagMetrics, storeMetrics } from "@analytics/rpc";
import { consumerBatchDurations, createMetricsRegistry, httpRequestDurations, rpcServerDurations } from "@analytics/telemetry";
import { Deployment } from "kubernetes-models/apps/v1";
import { Job } from "kubernetes-models/batch/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Pod, Secret, Service, ServiceAccount } from "kubernetes-models/v1";
import { PrometheusRule, ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";

/**
 * The chart rendered as `helm template` renders it (deploy/helm/render: Go text/template with
 * sprig, no helm binary needed), every object validated against the Kubernetes schemas
 * (kubernetes-models) and the values against values.schema.json, and the topology asserted.
 */
const chart = join(__dirname, "../analytics");
const work = mkdtempSync(join(tmpdir(), "chart-test-"));
const renderer = join(work, "render");

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: any; [key: string]: any };
type Values = Record<string, any>;

/** What every install must give: the credentials and where Postgres and NATS are. */
const required: Values = {
  secret: { jwtSecret: "j".repeat(32), apiKeyPepper: "p".repeat(32), internalToken: "i".repeat(32) },
  database: { url: "postgres://analytics:pw@postgres:5432/analytics" },
  nats: { url: "nats://nats-0:4222,nats://nats-1:4222,nats://nats-2:4222" },
};

const digest = "sha256:" + "ab".repeat(32);

/** The events pods' rule for webhook deliveries, as values.yaml sets it. */
const webhookEgress = {
  ports: [{ port: 443, protocol: "TCP" }],
  to: [
    { ipBlock: { cidr: "0.0.0.0/0", except: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "127.0.0.0/8", "100.64.0.0/10"] } },
    { ipBlock: { cidr: "::/0", except: ["::1/128", "fc00::/7", "fe80::/10", "::ffff:0:0/96"] } },
  ],
};

/** Every feature on: autoscaling, Ingress, ServiceMonitor, per-service databases, image digest, an operator's Secret. */
const everything: Values = {
  secret: { existingSecret: "analytics-credentials" },
  nats: { url: "nats://nats:4222" },
  image: { repository: "registry.example.com/analytics-platform", digest },
  serviceAccount: { annotations: { "iam.example.com/role": "analytics" } },
  ingress: { enabled: true, className: "nginx", tls: [{ secretName: "analytics-tls", hosts: ["analytics.example.com"] }] },
  metrics: { serviceMonitor: { enabled: true, labels: { release: "prometheus" } } },
  config: { trustProxyHops: 1 },
  networkPolicy: { postgres: { to: [{ ipBlock: { cidr: "10.1.0.0/16" } }] }, metricsFrom: [{ namespaceSelector: { matchLabels: { name: "monitoring" } } }] },
  defaults: { autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 5 } },
  // Up to 6 gateways x 7 + 3 services on the shared database x 6 x 4 during a rollout.
  postgres: { maxConnections: 200 },
  deployables: {
    catalogue: { database: { secretKey: "CATALOGUE_DATABASE_URL" } },
    orders: { database: { url: "postgres://orders@orders-db:5432/orders" }, autoscaling: { minReplicas: 1, maxReplicas: 3 } },
    pricing: { database: { secretKey: "PRICING_DATABASE_URL" }, image: { tag: "0.1.1" } },
  },
};

let files = 0;
function args(overrides: Values[]): string[] {
  return overrides.flatMap((values) => {
    const file = join(work, `values-${files++}.json`);
    writeFileSync(file, JSON.stringify(values));
    return ["-f", file];
  });
}

function run(extra: string[], overrides: Values[]) {
  return spawnSync(renderer, ["-chart", chart, ...extra, ...args(overrides)], { encoding: "utf8" });
}

/** The objects `helm template` would print for these values files, in order. */
function render(...overrides: Values[]): K8sObject[] {
  const result = run([], overrides);
  if (result.status !== 0) throw new Error(`render failed: ${result.stderr}`);
  return (JSON.parse(result.stdout) as { object: K8sObject }[]).map((o) => o.object);
}

/** The error a render stops with. */
function renderError(...overrides: Values[]): string {
  const result = run([], overrides);
  expect(result.status).toBe(1);
  return result.stderr;
}

/** values.yaml with the overrides merged over it, as the templates see them. */
function mergedValues(...overrides: Values[]): Values {
  const result = run(["-values"], overrides);
  if (result.status !== 0) throw new Error(`render failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Values;
}

const models: Record<string, new (data: any) => { validate(): void }> = {
  "apps/v1/Deployment": Deployment,
  "batch/v1/Job": Job,
  "v1/ConfigMap": ConfigMap,
  "v1/Pod": Pod,
  "monitoring.coreos.com/v1/PrometheusRule": PrometheusRule,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "networking.k8s.io/v1/Ingress": Ingress,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "v1/ServiceAccount": ServiceAccount,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
};

/** Every object valid against its Kubernetes (or Prometheus operator) schema, and no two with one name and kind. */
function validateAll(objects: K8sObject[]) {
  const seen = new Set<string>();
  for (const o of objects) {
    const Model = models[`${o.apiVersion}/${o.kind}`];
    if (!Model) throw new Error(`no schema to validate ${o.apiVersion} ${o.kind} against`);
    expect(() => new Model(o).validate()).not.toThrow();
    const id = `${o.kind}/${o.metadata.name}`;
    expect(seen.has(id)).toBe(false);
    seen.add(id);
  }
}

const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const named = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
const component = (o: K8sObject) => o.metadata.labels?.["app.kubernetes.io/component"];
const container = (deployment: K8sObject) => deployment.spec.template.spec.containers[0];
const env = (deployment: K8sObject, name: string) => container(deployment).env.find((e: { name: string }) => e.name === name);

beforeAll(() => {
  const go = spawnSync("go", ["version"], { encoding: "utf8" });
  if (go.error || go.status !== 0) {
    throw new Error(
      "Go is needed to render the chart (deploy/helm/render) and is not installed: " +
        "apt-get install golang-go golang-github-masterminds-sprig-dev golang-gopkg-yaml.v3-dev (.ci/run does it)",
    );
  }
  // GOPATH mode against Debian's Go packages: no module download. Go's build cache is kept with
  // the checkout's other caches (not in the run's TMPDIR, which the run removes), so the next run reuses it.
  const build = spawnSync("go", ["build", "-o", renderer, "."], {
    cwd: join(__dirname, "../render"),
    encoding: "utf8",
    env: { ...process.env, GOPATH: "/usr/share/gocode", GO111MODULE: "off", GOFLAGS: "", GOCACHE: process.env.GOCACHE ?? join(__dirname, "../../../node_modules/.cache/go-build-chart") },
  });
  if (build.status !== 0) throw new Error(`go build deploy/helm/render failed:\n${build.stderr}`);
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("values", () => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validateValues = ajv.compile(JSON.parse(readFileSync(join(chart, "values.schema.json"), "utf8")));

  it("values.yaml, and it with every value set of these tests merged over it, match values.schema.json", () => {
    for (const overrides of [[], [required], [everything], [required, { deployables: { planning: { enabled: false } } }]]) {
      const values = mergedValues(...overrides);
      expect({ valid: validateValues(values), errors: validateValues.errors }).toEqual({ valid: true, errors: null });
    }
  });

  it("the schema refuses a misspelt key, a bad digest and stream replicas out of 1..5", () => {
    for (const wrong of [
      { deployables: { catalogue: { replica: 3 } } },
      { image: { digest: "sha256:short" } },
      { nats: { streamReplicas: 6 } },
      { defaults: { dbPoolMax: 0 } },
    ]) {
      expect(validateValues(mergedValues(required, wrong))).toBe(false);
    }
  });

  it("lists every service of the registry with its port, and the gateway", () => {
    const values = mergedValues();
    expect(Object.keys(values.deployables).sort()).toEqual(["gateway", ...serviceNames].sort());
    for (const name of serviceNames) expect(values.deployables[name].port).toBe(serviceRegistry[name].port);
  });
});

describe("render with the defaults", () => {
  let objects: K8sObject[];
  beforeAll(() => {
    objects = render(required);
  });

  it("is valid Kubernetes: every object against its schema", () => {
    expect(objects.length).toBeGreaterThan(0);
    validateAll(objects);
  });

  it("has a Deployment per deployable, each service on its registry port, and the gateway reaching each at its headless Service", () => {
    const deployments = byKind(objects, "Deployment");
    expect(deployments.map(component).sort()).toEqual(["gateway", ...serviceNames].sort());
    const gateway = named(objects, "Deployment", "analytics-gateway")!;
    for (const name of serviceNames) {
      const port = serviceRegistry[name].port;
      const deployment = named(objects, "Deployment", `analytics-${name}`)!;
      expect(env(deployment, "SERVICE_PORT").value).toBe(String(port));
      expect(env(deployment, "HEALTH_PORT").value).toBe("8081");
      expect(env(gateway, `${name.toUpperCase()}_URL`).value).toBe(`http://analytics-${name}:${port}`);
      const service = named(objects, "Service", `analytics-${name}`)!;
      expect(service.spec.clusterIP).toBe("None");
      expect(service.spec.ports.map((p: { name: string; port: number }) => [p.name, p.port])).toEqual([["h2c", port]]);
    }
    // The gateway's Service balances clients; only the services are headless.
    expect(named(objects, "Service", "analytics-gateway")!.spec.clusterIP).toBeUndefined();
  });

  it("drains every pod on termination: a preStop sleep, then SHUTDOWN_DRAIN_MS, within the grace period; the gateway's DNS refresh and first-byte check as values", () => {
    for (const deployment of byKind(objects, "Deployment")) {
      const pod = deployment.spec.template.spec;
      const container = pod.containers[0];
      expect(container.lifecycle.preStop.exec.command).toEqual(["node", "-e", "setTimeout(() => {}, 5000)"]);
      expect(env(deployment, "SHUTDOWN_DRAIN_MS").value).toBe("3000");
      // preStop + drain + the longest request fit in the grace period: a service call (10 s), or a
      // planning breakdown's statement (120 s), which the gateway waits for plus a call's deadline.
      const longest = { gateway: 120 + 10, planning: 120 }[component(deployment) as string] ?? 10;
      expect(5 + 3 + longest).toBeLessThanOrEqual(pod.terminationGracePeriodSeconds);
      const timeouts = { gateway: ["10000", "120000"], planning: [undefined, "120000"] }[component(deployment) as string] ?? [undefined, undefined];
      expect([env(deployment, "SERVICE_CALL_TIMEOUT_MS")?.value, env(deployment, "PLANNING_QUERY_TIMEOUT_MS")?.value]).toEqual(timeouts);
    }
    const gateway = named(objects, "Deployment", "analytics-gateway")!;
    expect([env(gateway, "SERVICE_DNS_REFRESH_MS").value, env(gateway, "SERVICE_FIRST_BYTE_TIMEOUT_MS").value]).toEqual(["10000", "500"]);
  });

  it("runs two replicas of each deployable with a PodDisruptionBudget each, and no autoscaler", () => {
    for (const deployment of byKind(objects, "Deployment")) expect(deployment.spec.replicas).toBe(2);
    expect(byKind(objects, "PodDisruptionBudget").map(component).sort()).toEqual(["gateway", ...serviceNames].sort());
    for (const pdb of byKind(objects, "PodDisruptionBudget")) {
      expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: named(objects, "Deployment", pdb.metadata.name)!.spec.selector });
    }
    expect(byKind(objects, "HorizontalPodAutoscaler")).toEqual([]);
  });

  it("keeps the connections of every pool, during a rolling update of every Deployment (maxSurge pods more), under Postgres's default max_connections (100) less 5", () => {
    const connections = byKind(objects, "Deployment")
      .map((d) => (d.spec.replicas + d.spec.strategy.rollingUpdate.maxSurge) * (Number(env(d, "DB_POOL_MAX").value) + 1))
      .reduce((a, b) => a + b, 0);
    expect(connections).toBe(3 * (6 + 1) + 6 * 3 * (3 + 1));
    expect(connections).toBeLessThanOrEqual(95);
  });

  it("keeps three copies of the stream and gives every process the NATS seeds, the shared database and the Secret", () => {
    for (const deployment of byKind(objects, "Deployment")) {
      expect(env(deployment, "NATS_STREAM_REPLICAS").value).toBe("3");
      expect(env(deployment, "NATS_URL").value).toBe(required.nats.url);
      expect(env(deployment, "DATABASE_URL").value).toBe(required.database.url);
      expect(env(deployment, "INTERNAL_TOKEN").valueFrom.secretKeyRef).toEqual({ name: "analytics", key: "INTERNAL_TOKEN" });
      expect(deployment.spec.template.spec.serviceAccountName).toBe("analytics");
      expect(deployment.spec.template.spec.automountServiceAccountToken).toBe(false);
    }
    expect(named(objects, "Secret", "analytics")!.stringData).toEqual({ JWT_SECRET: "j".repeat(32), API_KEY_PEPPER: "p".repeat(32), INTERNAL_TOKEN: "i".repeat(32) });
    expect(named(objects, "ServiceAccount", "analytics")!.automountServiceAccountToken).toBe(false);
  });

  it("probes the gateway on its port and each service on its health port, and annotates pods for scraping /metrics on their metrics port", () => {
    for (const deployment of byKind(objects, "Deployment")) {
      const gateway = component(deployment) === "gateway";
      const c = container(deployment);
      for (const [probe, path] of [["startupProbe", "/healthz"], ["livenessProbe", "/healthz"], ["readinessProbe", "/readyz"]]) {
        expect(c[probe].httpGet).toEqual({ path, port: gateway ? "http" : "health" });
      }
      expect(deployment.spec.template.metadata.annotations).toMatchObject({
        "prometheus.io/scrape": "true",
        "prometheus.io/port": "9090",
        "prometheus.io/path": "/metrics",
      });
    }
  });

  it("lets the services' Connect ports be reached only from the gateway and the services, and every pod reach only DNS, Postgres, NATS and the services (the events pods also HTTPS to public addresses)", () => {
    const releasePods = { podSelector: { matchLabels: { "app.kubernetes.io/name": "analytics", "app.kubernetes.io/instance": "analytics" } } };
    // The migration Job's own policy has its test below.
    const policies = byKind(objects, "NetworkPolicy").filter((p) => component(p) !== "migrations");
    expect(policies.map(component).sort()).toEqual(["gateway", ...serviceNames].sort());
    // The release's pods are exactly the Deployments' pods: the selector matches each of them.
    for (const deployment of byKind(objects, "Deployment")) {
      expect(deployment.spec.template.metadata.labels).toMatchObject(releasePods.podSelector.matchLabels);
    }
    for (const policy of policies) {
      expect(policy.spec.podSelector).toEqual(named(objects, "Deployment", policy.metadata.name)!.spec.selector);
      expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"]);
      const metrics = { ports: [{ port: "metrics", protocol: "TCP" }] };
      if (component(policy) === "gateway") {
        expect(policy.spec.ingress).toEqual([metrics, { ports: [{ port: "http", protocol: "TCP" }] }]);
      } else {
        expect(policy.spec.ingress).toEqual([metrics, { from: [releasePods], ports: [{ port: "h2c", protocol: "TCP" }] }, { ports: [{ port: "health", protocol: "TCP" }] }]);
      }
      expect(policy.spec.egress).toEqual([
        { ports: [{ port: 53, protocol: "UDP" }, { port: 53, protocol: "TCP" }] },
        { ports: [{ port: 5432, protocol: "TCP" }] },
        { ports: [{ port: 4222, protocol: "TCP" }] },
        { to: [releasePods], ports: [{ port: "h2c", protocol: "TCP" }] },
        // The events service delivers webhooks: HTTPS to public addresses, the cluster's own networks excluded.
        ...(component(policy) === "events" ? [webhookEgress] : []),
      ]);
    }
  });

  it("gives the events service what its webhook deliveries need: the image URL key and the WEBHOOK_* settings", () => {
    const events = named(objects, "Deployment", "analytics-events")!;
    expect(env(events, "JWT_SECRET").valueFrom.secretKeyRef).toEqual({ name: "analytics", key: "JWT_SECRET" });
    expect([env(events, "WEBHOOK_CONCURRENCY_PER_ENDPOINT").value, env(events, "WEBHOOK_MAX_IN_FLIGHT").value, env(events, "WEBHOOK_POLL_MS").value, env(events, "WEBHOOK_ALLOW_PRIVATE").value]).toEqual(["16", "256", "250", "false"]);
    expect(env(events, "EVENTS_GAP_HOLD_SECONDS").value).toBe("60");
    for (const deployment of byKind(objects, "Deployment")) {
      if (!["gateway", "events"].includes(component(deployment)!)) expect(env(deployment, "JWT_SECRET")).toBeUndefined();
      expect(env(deployment, "PUBLIC_BASE_URL")).toBeUndefined();
    }
  });

  it("gives the events pods the image URL key instead of JWT_SECRET when the Secret holds it, and the gateway the same key", () => {
    const key = "0123456789abcdef".repeat(4);
    for (const objects of [render(required, { secret: { imageUrlKey: key } }), render(everything, { secret: { existingSecretHasImageUrlKey: true } })]) {
      const secretName = named(objects, "Secret", "analytics") ? "analytics" : "analytics-credentials";
      const [events, gateway] = [named(objects, "Deployment", "analytics-events")!, named(objects, "Deployment", "analytics-gateway")!];
      expect(env(events, "IMAGE_URL_KEY").valueFrom.secretKeyRef).toEqual({ name: secretName, key: "IMAGE_URL_KEY" });
      expect(env(events, "JWT_SECRET")).toBeUndefined();
      expect(env(gateway, "IMAGE_URL_KEY").valueFrom.secretKeyRef).toEqual({ name: secretName, key: "IMAGE_URL_KEY" });
      expect(env(gateway, "JWT_SECRET")).toBeDefined();
    }
    expect(named(render(required, { secret: { imageUrlKey: key } }), "Secret", "analytics")!.stringData.IMAGE_URL_KEY).toBe(key);
    // Without it, as before: the events pods derive the key from JWT_SECRET.
    expect(env(named(objects, "Deployment", "analytics-gateway")!, "IMAGE_URL_KEY")).toBeUndefined();
    expect(renderError(required, { secret: { imageUrlKey: "x".repeat(64) } })).toMatch(/imageUrlKey/);
  });

  it("renders no Ingress, ServiceMonitor, PrometheusRule, dashboard or autoscaler unless asked", () => {
    expect(objects.map((o) => o.kind).filter((k) => ["Ingress", "ServiceMonitor", "PrometheusRule", "ConfigMap", "HorizontalPodAutoscaler"].includes(k))).toEqual([]);
  });
});

describe("render with every feature on", () => {
  let objects: K8sObject[];
  beforeAll(() => {
    objects = render(everything);
  });

  it("is valid Kubernetes and Prometheus operator objects", () => {
    validateAll(objects);
    expect(byKind(objects, "Secret")).toEqual([]);
  });

  it("autoscales every deployable, leaves replicas to the autoscaler, and has a PodDisruptionBudget only where minReplicas > 1", () => {
    for (const deployment of byKind(objects, "Deployment")) {
      expect(deployment.spec.replicas).toBeUndefined();
      const hpa = named(objects, "HorizontalPodAutoscaler", deployment.metadata.name)!;
      expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name: deployment.metadata.name });
    }
    expect(named(objects, "HorizontalPodAutoscaler", "analytics-orders")!.spec).toMatchObject({ minReplicas: 1, maxReplicas: 3 });
    expect(byKind(objects, "PodDisruptionBudget").map(component).sort()).toEqual(["gateway", ...serviceNames.filter((n) => n !== "orders")].sort());
  });

  it("gives each service its own database where set: its own value or its own key of the Secret", () => {
    const secretRef = (key: string) => ({ valueFrom: { secretKeyRef: { name: "analytics-credentials", key } } });
    expect(env(named(objects, "Deployment", "analytics-catalogue")!, "DATABASE_URL")).toEqual({ name: "DATABASE_URL", ...secretRef("CATALOGUE_DATABASE_URL") });
    expect(env(named(objects, "Deployment", "analytics-pricing")!, "DATABASE_URL")).toEqual({ name: "DATABASE_URL", ...secretRef("PRICING_DATABASE_URL") });
    expect(env(named(objects, "Deployment", "analytics-orders")!, "DATABASE_URL")).toEqual({ name: "DATABASE_URL", value: "postgres://orders@orders-db:5432/orders" });
    expect(env(named(objects, "Deployment", "analytics-events")!, "DATABASE_URL")).toEqual({ name: "DATABASE_URL", ...secretRef("DATABASE_URL") });
  });

  it("pulls the image by digest, except where a deployable names its own tag", () => {
    for (const deployment of byKind(objects, "Deployment")) {
      const image = component(deployment) === "pricing" ? "registry.example.com/analytics-platform:0.1.1" : `registry.example.com/analytics-platform@${digest}`;
      expect(container(deployment).image).toBe(image);
    }
  });

  it("routes the Ingress to the gateway's Service, scrapes every /metrics with one ServiceMonitor, and narrows the policies as set", () => {
    const ingress = byKind(objects, "Ingress")[0];
    expect(ingress.spec.ingressClassName).toBe("nginx");
    expect(ingress.spec.rules[0].http.paths[0]).toEqual({ path: "/v2/api", pathType: "Prefix", backend: { service: { name: "analytics-gateway", port: { name: "http" } } } });
    const monitor = byKind(objects, "ServiceMonitor")[0];
    expect(monitor.metadata.labels).toMatchObject({ release: "prometheus" });
    expect(monitor.spec.endpoints.map((e: { port: string; path: string }) => [e.port, e.path])).toEqual([["metrics", "/metrics"]]);
    // It selects the one metrics Service alone, whose port reaches every Deployment's pods on their metrics port.
    const selected = byKind(objects, "Service").filter((s) => Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels?.[k] === v));
    expect(selected.map((s) => s.metadata.name)).toEqual(["analytics-metrics"]);
    expect(selected[0].spec.ports).toEqual([{ name: "metrics", port: 9090, targetPort: "metrics", protocol: "TCP", appProtocol: "http" }]);
    for (const deployment of byKind(objects, "Deployment")) {
      expect(deployment.spec.template.metadata.labels).toMatchObject(selected[0].spec.selector);
      expect(container(deployment).ports).toContainEqual({ name: "metrics", containerPort: 9090, protocol: "TCP" });
    }
    const policy = named(objects, "NetworkPolicy", "analytics-events")!;
    expect(policy.spec.ingress[0]).toEqual({ ports: [{ port: "metrics", protocol: "TCP" }], from: everything.networkPolicy.metricsFrom });
    expect(policy.spec.egress[1].to).toEqual(everything.networkPolicy.postgres.to);
    expect(env(named(objects, "Deployment", "analytics-gateway")!, "TRUST_PROXY_HOPS").value).toBe("1");
    expect(named(objects, "ServiceAccount", "analytics")!.metadata.annotations).toEqual(everything.serviceAccount.annotations);
  });
});

describe("render variants", () => {
  it("gives PUBLIC_BASE_URL to the gateway and the events service alike, and the WEBHOOK_* values to the events service", () => {
    // allowPrivate only outside production (a test cluster).
    const objects = render(required, { config: { nodeEnv: "test", publicBaseUrl: "https://api.example.com" }, webhooks: { concurrencyPerEndpoint: 4, maxInFlight: 40, pollMs: 100, allowPrivate: true } });
    validateAll(objects);
    for (const name of ["analytics-gateway", "analytics-events"]) expect(env(named(objects, "Deployment", name)!, "PUBLIC_BASE_URL").value).toBe("https://api.example.com");
    const events = named(objects, "Deployment", "analytics-events")!;
    expect([env(events, "WEBHOOK_CONCURRENCY_PER_ENDPOINT").value, env(events, "WEBHOOK_MAX_IN_FLIGHT").value, env(events, "WEBHOOK_POLL_MS").value, env(events, "WEBHOOK_ALLOW_PRIVATE").value]).toEqual(["4", "40", "100", "true"]);
    expect(env(named(objects, "Deployment", "analytics-catalogue")!, "PUBLIC_BASE_URL")).toBeUndefined();
  });

  it("gives PLANNING_ACCOUNT_MAX_ANSWERS to planning only when set (0, the default: planning derives it from its pool)", () => {
    const planningEnv = (objects: K8sObject[]) => env(named(objects, "Deployment", "analytics-planning")!, "PLANNING_ACCOUNT_MAX_ANSWERS")?.value;
    expect(planningEnv(render(required))).toBeUndefined();
    const objects = render(required, { config: { planningAccountMaxAnswers: 3 } });
    expect(planningEnv(objects)).toBe("3");
    expect(env(named(objects, "Deployment", "analytics-gateway")!, "PLANNING_ACCOUNT_MAX_ANSWERS")).toBeUndefined();
  });

  it("fails the render when webhooks.allowPrivate is true with config.nodeEnv production (the default), naming both", () => {
    expect(renderError(required, { webhooks: { allowPrivate: true } })).toMatch(/webhooks\.allowPrivate \(WEBHOOK_ALLOW_PRIVATE\) must not be true with config\.nodeEnv production/);
    expect(renderError(required, { config: { nodeEnv: "production" }, webhooks: { allowPrivate: true } })).toMatch(/webhooks\.allowPrivate/);
    expect(env(named(render(required, { config: { nodeEnv: "development" }, webhooks: { allowPrivate: true } }), "Deployment", "analytics-events")!, "WEBHOOK_ALLOW_PRIVATE").value).toBe("true");
  });

  it("leaves the webhook egress out when turned off, and takes its own ports and peers", () => {
    const egressOf = (objects: K8sObject[]) => named(objects, "NetworkPolicy", "analytics-events")!.spec.egress;
    expect(egressOf(render(required, { networkPolicy: { webhookEgress: { enabled: false } } }))).not.toContainEqual(expect.objectContaining({ ports: [{ port: 443, protocol: "TCP" }] }));
    const peers = [{ ipBlock: { cidr: "203.0.113.0/24" } }];
    expect(egressOf(render(required, { networkPolicy: { webhookEgress: { ports: [443, 8443], to: peers } } })).at(-1)).toEqual({
      ports: [{ port: 443, protocol: "TCP" }, { port: 8443, protocol: "TCP" }],
      to: peers,
    });
  });

  it("leaves a disabled deployable out: no objects, and no address on the gateway", () => {
    const objects = render(required, { deployables: { planning: { enabled: false } } });
    validateAll(objects);
    expect(objects.filter((o) => component(o) === "planning")).toEqual([]);
    expect(env(named(objects, "Deployment", "analytics-gateway")!, "PLANNING_URL")).toBeUndefined();
    expect(env(named(objects, "Deployment", "analytics-gateway")!, "CATALOGUE_URL")).toBeDefined();
  });

  it("has no PodDisruptionBudget for a deployable with one replica", () => {
    const objects = render(required, { defaults: { replicas: 1 }, deployables: { gateway: { replicas: 3 } } });
    validateAll(objects);
    expect(byKind(objects, "PodDisruptionBudget").map(component)).toEqual(["gateway"]);
    expect(named(objects, "Deployment", "analytics-gateway")!.spec.replicas).toBe(3);
  });

  it("stores each service's own database URL in the chart's Secret, read by that service alone", () => {
    const objects = render(required, { secret: { databaseUrls: { inventory: "postgres://inv@inventory-db/inventory" } } });
    validateAll(objects);
    expect(named(objects, "Secret", "analytics")!.stringData.INVENTORY_DATABASE_URL).toBe("postgres://inv@inventory-db/inventory");
    expect(env(named(objects, "Deployment", "analytics-inventory")!, "DATABASE_URL").valueFrom.secretKeyRef).toEqual({ name: "analytics", key: "INVENTORY_DATABASE_URL" });
    expect(env(named(objects, "Deployment", "analytics-events")!, "DATABASE_URL").value).toBe(required.database.url);
  });

  it("renders no NetworkPolicy when turned off, and one NATS stream copy when set", () => {
    const objects = render(required, { networkPolicy: { enabled: false }, nats: { streamReplicas: 1 } });
    expect(byKind(objects, "NetworkPolicy")).toEqual([]);
    for (const deployment of byKind(objects, "Deployment")) expect(env(deployment, "NATS_STREAM_REPLICAS").value).toBe("1");
  });

  it("refuses what the processes would refuse at start-up", () => {
    expect(renderError()).toMatch(/secret\.\w+ \(\w+\) must be at least 32 characters/);
    expect(renderError({ ...required, database: { url: "" } })).toMatch(/has no database/);
    expect(renderError({ ...required, nats: { url: "" } })).toMatch(/set nats\.url or secret\.natsUrl/);
    expect(renderError(required, { defaults: { autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 2 } } })).toMatch(/maxReplicas is below minReplicas/);
    expect(renderError(required, { ingress: { enabled: true }, deployables: { gateway: { enabled: false } } })).toMatch(/ingress.enabled needs the gateway/);
    expect(renderError(required, { deployables: { planning: { terminationGracePeriodSeconds: 30 } } })).toMatch(
      /deployables\.planning: terminationGracePeriodSeconds 30 is under preStopSleepSeconds \+ shutdownDrainMs \+ its longest request \(120000 ms\) = 128 s/,
    );
    expect(renderError(required, { config: { serviceCallTimeoutMs: 30000 } })).toMatch(/deployables\.catalogue: terminationGracePeriodSeconds 30 is under .* = 38 s/);
  });
});

describe("production settings (issue 35 item 5)", () => {
  const selector = (o: K8sObject) => ({ matchLabels: { "app.kubernetes.io/name": "analytics", "app.kubernetes.io/instance": "analytics", "app.kubernetes.io/component": component(o) } });

  it("spreads each deployable's replicas over nodes and zones and away from each other, softly, unless overridden", () => {
    const objects = render(required, {
      deployables: {
        gateway: { topologySpreadConstraints: [{ maxSkew: 2, topologyKey: "rack", whenUnsatisfiable: "DoNotSchedule", labelSelector: { matchLabels: { app: "x" } } }] },
        orders: { podAntiAffinity: "hard", spread: { enabled: false } },
        pricing: { podAntiAffinity: "none", affinity: {} },
        events: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: "pool", operator: "In", values: ["events"] }] }] } } } },
      },
    });
    validateAll(objects);
    const pod = (name: string) => named(objects, "Deployment", `analytics-${name}`)!.spec.template.spec;
    for (const name of ["catalogue", "inventory", "planning"]) {
      const deployment = named(objects, "Deployment", `analytics-${name}`)!;
      expect(pod(name).topologySpreadConstraints).toEqual(
        ["kubernetes.io/hostname", "topology.kubernetes.io/zone"].map((topologyKey) => ({ maxSkew: 1, topologyKey, whenUnsatisfiable: "ScheduleAnyway", labelSelector: selector(deployment) })),
      );
      expect(pod(name).affinity).toEqual({ podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: "kubernetes.io/hostname", labelSelector: selector(deployment) } }] } });
      // The selector is the Deployment's own: its pods, not the release's.
      expect(selector(deployment)).toEqual(deployment.spec.selector);
    }
    expect(pod("gateway").topologySpreadConstraints).toEqual([{ maxSkew: 2, topologyKey: "rack", whenUnsatisfiable: "DoNotSchedule", labelSelector: { matchLabels: { app: "x" } } }]);
    expect(pod("orders").topologySpreadConstraints).toBeUndefined();
    expect(pod("orders").affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution).toEqual([{ topologyKey: "kubernetes.io/hostname", labelSelector: selector(named(objects, "Deployment", "analytics-orders")!) }]);
    expect(pod("pricing").affinity).toBeUndefined();
    expect(pod("events").affinity).toEqual({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: "pool", operator: "In", values: ["events"] }] }] } } });
  });

  it("gives every pod METRICS_PORT, the stream's age and size limits and the migration mode as values; the gateway's DNS refresh too", () => {
    const objects = render(required, { metrics: { port: 9100 }, nats: { streamMaxAgeSeconds: 172800, streamMaxBytes: 8589934592, partitions: 16 }, config: { serviceDnsRefreshMs: 2000 } });
    for (const deployment of byKind(objects, "Deployment")) {
      expect(env(deployment, "METRICS_PORT").value).toBe("9100");
      expect(container(deployment).ports).toContainEqual({ name: "metrics", containerPort: 9100, protocol: "TCP" });
      expect(deployment.spec.template.metadata.annotations["prometheus.io/port"]).toBe("9100");
      expect([env(deployment, "NATS_STREAM_MAX_AGE_SECONDS").value, env(deployment, "NATS_STREAM_MAX_BYTES").value, env(deployment, "NATS_PARTITIONS").value]).toEqual(["172800", "8589934592", "16"]);
      expect(env(deployment, "MIGRATIONS").value).toBe("verify");
    }
    expect(env(named(objects, "Deployment", "analytics-gateway")!, "SERVICE_DNS_REFRESH_MS").value).toBe("2000");
    const defaults = render(required);
    for (const deployment of byKind(defaults, "Deployment")) {
      expect([env(deployment, "NATS_STREAM_MAX_AGE_SECONDS").value, env(deployment, "NATS_STREAM_MAX_BYTES").value, env(deployment, "METRICS_PORT").value]).toEqual(["604800", "-1", "9090"]);
    }
  });

  it("migrates in a pre-install/pre-upgrade hook Job, a container per enabled deployable reading its database where its Deployment does", () => {
    const objects = render(required, { deployables: { planning: { enabled: false }, orders: { database: { url: "postgres://orders@orders-db/orders" } } } });
    validateAll(objects);
    const job = named(objects, "Job", "analytics-migrations")!;
    expect(job.metadata.annotations).toEqual({ "helm.sh/hook": "pre-install,pre-upgrade", "helm.sh/hook-weight": "0", "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded" });
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe("OnFailure");
    expect(pod.automountServiceAccountToken).toBe(false);
    const containers = pod.containers as { name: string; command: string[]; env: { name: string }[] }[];
    expect(containers.map((c) => c.name).sort()).toEqual(["gateway", ...serviceNames.filter((n) => n !== "planning")].sort());
    for (const c of containers) {
      const deployment = named(objects, "Deployment", `analytics-${c.name}`)!;
      expect(c.command).toEqual([...container(deployment).command, "migrate-only"]);
      expect(c.env.find((e) => e.name === "DATABASE_URL")).toEqual(env(deployment, "DATABASE_URL"));
      expect(env(deployment, "MIGRATIONS").value).toBe("verify");
    }
    expect(containers.find((c) => c.name === "orders")!.env).toContainEqual({ name: "DATABASE_URL", value: "postgres://orders@orders-db/orders" });
    // Plain URLs: no hook Secret is needed.
    expect(byKind(objects, "Secret").map((s) => s.metadata.name)).toEqual(["analytics"]);
  });

  it("gives the Job the chart-held database URLs in a hook Secret made before it (the release's Secret does not exist yet on an install), or the operator's Secret", () => {
    const objects = render({ ...required, database: { url: "" } }, { secret: { databaseUrl: "postgres://shared/db", databaseUrls: { inventory: "postgres://inv/inventory" } } });
    validateAll(objects);
    const hookSecret = named(objects, "Secret", "analytics-migrations")!;
    expect(hookSecret.stringData).toEqual({ DATABASE_URL: "postgres://shared/db", INVENTORY_DATABASE_URL: "postgres://inv/inventory" });
    expect(Number(hookSecret.metadata.annotations!["helm.sh/hook-weight"])).toBeLessThan(Number(named(objects, "Job", "analytics-migrations")!.metadata.annotations!["helm.sh/hook-weight"]));
    expect(hookSecret.metadata.annotations!["helm.sh/hook"]).toBe("pre-install,pre-upgrade");
    const jobEnv = (name: string) => named(objects, "Job", "analytics-migrations")!.spec.template.spec.containers.find((c: { name: string }) => c.name === name).env.find((e: { name: string }) => e.name === "DATABASE_URL");
    expect(jobEnv("inventory").valueFrom.secretKeyRef).toEqual({ name: "analytics-migrations", key: "INVENTORY_DATABASE_URL" });
    expect(jobEnv("catalogue").valueFrom.secretKeyRef).toEqual({ name: "analytics-migrations", key: "DATABASE_URL" });
    const operators = render(everything);
    expect(byKind(operators, "Secret")).toEqual([]);
    const operatorEnv = named(operators, "Job", "analytics-migrations")!.spec.template.spec.containers.find((c: { name: string }) => c.name === "catalogue").env;
    expect(operatorEnv).toContainEqual({ name: "DATABASE_URL", valueFrom: { secretKeyRef: { name: "analytics-credentials", key: "CATALOGUE_DATABASE_URL" } } });
  });

  it("requests what each deployable was measured to use (bench/footprint.mjs), its own figures merged over the defaults' limits", () => {
    const objects = render(required);
    const resources = (name: string) => container(named(objects, "Deployment", `analytics-${name}`)!).resources;
    expect(resources("gateway")).toEqual({ requests: { cpu: "200m", memory: "320Mi" }, limits: { cpu: "1", memory: "640Mi" } });
    expect(resources("planning")).toEqual({ requests: { cpu: "100m", memory: "192Mi" }, limits: { cpu: "1", memory: "1Gi" } });
    const mebibytes = (q: string) => (q.endsWith("Gi") ? 1024 : 1) * parseInt(q, 10);
    for (const deployment of byKind(objects, "Deployment")) {
      const { requests, limits } = container(deployment).resources;
      expect(mebibytes(requests.memory)).toBeGreaterThanOrEqual(128);
      expect(mebibytes(limits.memory)).toBeGreaterThanOrEqual(2 * mebibytes(requests.memory) - 64);
    }
  });

  it("lets the Job's pod reach only DNS and Postgres, by a policy made before it", () => {
    const objects = render(required, { networkPolicy: { postgres: { to: [{ ipBlock: { cidr: "10.1.0.0/16" } }] } } });
    validateAll(objects);
    const policy = named(objects, "NetworkPolicy", "analytics-migrations")!;
    const job = named(objects, "Job", "analytics-migrations")!;
    expect(job.spec.template.metadata.labels).toMatchObject(policy.spec.podSelector.matchLabels);
    expect(policy.spec.podSelector.matchLabels["app.kubernetes.io/component"]).toBe("migrations");
    expect(policy.metadata.annotations!["helm.sh/hook"]).toBe("pre-install,pre-upgrade");
    expect(Number(policy.metadata.annotations!["helm.sh/hook-weight"])).toBeLessThan(Number(job.metadata.annotations!["helm.sh/hook-weight"]));
    expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(policy.spec.ingress).toEqual([]);
    expect(policy.spec.egress).toEqual([
      { ports: [{ port: 53, protocol: "UDP" }, { port: 53, protocol: "TCP" }] },
      { ports: [{ port: 5432, protocol: "TCP" }], to: [{ ipBlock: { cidr: "10.1.0.0/16" } }] },
    ]);
    expect(render(required, { networkPolicy: { enabled: false } }).filter((o) => o.kind === "NetworkPolicy")).toEqual([]);
    expect(named(render(required, { migrations: { job: { enabled: false } } }), "NetworkPolicy", "analytics-migrations")).toBeUndefined();
  });

  it("without the Job, lets each process migrate at start-up (MIGRATIONS=apply)", () => {
    const objects = render(required, { migrations: { job: { enabled: false } } });
    expect(byKind(objects, "Job")).toEqual([]);
    for (const deployment of byKind(objects, "Deployment")) expect(env(deployment, "MIGRATIONS").value).toBe("apply");
  });

  it("ships a helm test Pod: /readyz on the gateway's Service, and with tests.credentialsSecret a sign-in and one read", () => {
    const pod = named(render(required), "Pod", "analytics-test")!;
    expect(pod.metadata.annotations).toMatchObject({ "helm.sh/hook": "test" });
    const container = pod.spec.containers[0];
    expect(container.image).toBe(named(render(required), "Deployment", "analytics-gateway")!.spec.template.spec.containers[0].image);
    expect(container.env).toEqual([{ name: "GATEWAY_URL", value: "http://analytics-gateway:8080" }]);
    const script: string = container.command[2];
    expect(script).toContain('"/readyz"');
    const withAccount = named(render(required, { tests: { credentialsSecret: "analytics-test-account" } }), "Pod", "analytics-test")!;
    expect(withAccount.spec.containers[0].env.slice(1)).toEqual([
      { name: "TEST_ACCOUNT_ID", valueFrom: { secretKeyRef: { name: "analytics-test-account", key: "ACCOUNT_ID" } } },
      { name: "TEST_API_KEY", valueFrom: { secretKeyRef: { name: "analytics-test-account", key: "API_KEY" } } },
    ]);
    expect(script).toMatch(/"\/v2\/api\/auth", \{ method: "POST"/);
    expect(script).toContain("/v2/api/products?page=1&pageSize=1");
    // The script runs under node and fails, naming the step, when the gateway does not answer.
    const unreachable = spawnSync(process.execPath, ["-e", script], { env: { ...process.env, GATEWAY_URL: "http://127.0.0.1:1" }, encoding: "utf8" });
    expect(unreachable.status).toBe(1);
    expect(unreachable.stderr).toMatch(/fetch failed/);
    expect(render(required, { tests: { enabled: false } }).filter((o) => o.kind === "Pod")).toEqual([]);
    expect(render(required, { deployables: { gateway: { enabled: false } } }).filter((o) => o.kind === "Pod")).toEqual([]);
  });

  it("prints NOTES.txt: how to reach the API (port-forward, or the Ingress's hosts) and the docs", () => {
    const notes = (...overrides: Values[]) => {
      const result = run(["-notes"], overrides);
      if (result.status !== 0) throw new Error(`render failed: ${result.stderr}`);
      return result.stdout;
    };
    const plain = notes(required);
    expect(plain).toContain("kubectl -n default port-forward svc/analytics-gateway 8080:8080");
    expect(plain).toContain("http://127.0.0.1:8080/v2/api");
    expect(plain).toMatch(/\/docs +the interactive API reference/);
    expect(plain).toContain("/v2/api/openapi.json");
    expect(plain).toContain("helm test analytics");
    expect(plain).toContain("set tests.credentialsSecret");
    const published = notes(required, { ingress: { enabled: true, tls: [{ secretName: "t", hosts: ["api.example.org"] }], hosts: [{ host: "api.example.org", paths: [{ path: "/", pathType: "Prefix" }] }] }, tests: { credentialsSecret: "s" } });
    expect(published).toContain("https://api.example.org/v2/api");
    expect(published).not.toContain("port-forward svc/");
    expect(published).not.toContain("set tests.credentialsSecret");
    // The chart's validations run first, as in helm install.
    expect(run(["-notes"], [{}]).status).toBe(1);
  });

  it("refuses pools that a rolling update of every Deployment would take over postgres.maxConnections, counting only the shared database", () => {
    expect(renderError(required, { defaults: { dbPoolMax: 4 } })).toMatch(
      /connections: 111 during a rolling update of every Deployment \(catalogue 3 x \(4 \+ 1\), events 3 x \(4 \+ 1\), gateway 3 x \(6 \+ 1\), .*\) exceed postgres\.maxConnections - reservedConnections = 95: set postgres\.maxConnections to at least 116 .*PgBouncer/,
    );
    expect(renderError(required, { deployables: { gateway: { autoscaling: { enabled: true, maxReplicas: 4 } } } })).toMatch(/connections: 107 /);
    expect(renderError(required, { defaults: { rollingUpdate: { maxSurge: 2 } } })).toMatch(/connections: 124 /);
    // Autoscaling turned on alone: the refusal names the value to set, and that value renders.
    // (gateway (4 + 1) x 7 + 6 services x (4 + 1) x 4 = 155, + 5 reserved.)
    expect(renderError(required, { defaults: { autoscaling: { enabled: true } } })).toMatch(/connections: 155 .* set postgres\.maxConnections to at least 160 /);
    validateAll(render(required, { defaults: { autoscaling: { enabled: true } }, postgres: { maxConnections: 160 } }));
    expect(renderError(required, { defaults: { autoscaling: { enabled: true } }, postgres: { maxConnections: 159 } })).toMatch(/at least 160 /);
    // Room made: a bigger max_connections, or the pools that leave for a database of their own.
    validateAll(render(required, { defaults: { dbPoolMax: 4 }, postgres: { maxConnections: 120 } }));
    validateAll(render(required, { defaults: { dbPoolMax: 4 }, deployables: { catalogue: { database: { url: "postgres://c/c" } }, events: { database: { url: "postgres://e/e" } } } }));
  });

  /** The metric names a PromQL expression reads (a histogram's _bucket/_count/_sum read as the histogram). */
  const metricNames = (expr: string) => [...expr.matchAll(/([a-z_][a-z0-9_]*)\{/g)].map((m) => m[1].replace(/_(bucket|count|sum)$/, ""));
  /** What the processes export: the gateway's and every service's registry, as the code builds them. */
  const exported = () => {
    const registry = createMetricsRegistry("probe");
    storeMetrics(registry, {} as Db, { stats: {} } as OutboxRelay);
    consumerLagMetrics(registry, {} as Bus, [{ durable: "probe", subjects: [] }]);
    httpRequestDurations(registry);
    rpcServerDurations(registry);
    consumerBatchDurations(registry);
    const names = new Set(registry.getMetricsAsArray().map((m) => m.name));
    // The events service's webhook worker registers its own counter.
    if (readFileSync(join(__dirname, "../../../services/events/src/webhook-worker.ts"), "utf8").includes('name: "webhook_attempts_total"')) names.add("webhook_attempts_total");
    // And its gap sweep its counter and gauges (services/events/src/gap-sweep.ts).
    const sweep = readFileSync(join(__dirname, "../../../services/events/src/gap-sweep.ts"), "utf8");
    for (const name of ["events_queue_superseded_versions_total", "events_queue_held_versions", "events_queue_oldest_hold_seconds"]) if (sweep.includes(`"${name}"`)) names.add(name);
    // The gateway's rate limiter its failure counter (gateway/src/limits/rate-limiter.ts).
    if (readFileSync(join(__dirname, "../../../gateway/src/limits/rate-limiter.ts"), "utf8").includes('name: "gateway_rate_limiter_failures_total"')) names.add("gateway_rate_limiter_failures_total");
    return names;
  };

  it("ships alerts on consumer lag, outbox age, dead letters, the event queue's superseded and long-held versions, the gateway's 5xx rate, pool saturation, failing webhook deliveries and the rate limiter's store failing, each on series the processes export with a runbook section of its own", () => {
    const objects = render(required, { metrics: { prometheusRule: { enabled: true, labels: { release: "prometheus" }, consumerLagMessages: 500, alertLabels: { team: "data" } } } });
    validateAll(objects);
    const rule = named(objects, "PrometheusRule", "analytics")!;
    expect(rule.metadata.labels).toMatchObject({ release: "prometheus" });
    const rules = rule.spec.groups[0].rules as { alert: string; expr: string; labels: Record<string, string> }[];
    expect(rules.map((r) => r.alert)).toEqual([
      "AnalyticsConsumerLag",
      "AnalyticsOutboxBehind",
      "AnalyticsDeadLetters",
      "AnalyticsQueueVersionsSuperseded",
      "AnalyticsQueueHeldLong",
      "AnalyticsGateway5xx",
      "AnalyticsPoolSaturated",
      "AnalyticsWebhookDeliveriesFailing",
      "AnalyticsRateLimiterStoreFailing",
    ]);
    const names = exported();
    for (const r of rules) {
      expect(metricNames(r.expr).length).toBeGreaterThan(0);
      for (const name of metricNames(r.expr)) expect({ alert: r.alert, name, exported: names.has(name) }).toEqual({ alert: r.alert, name, exported: true });
      expect(r.labels).toMatchObject({ team: "data" });
    }
    expect(rules[0].expr).toBe('max by (deployable, consumer) (consumer_pending_messages{namespace="default"}) > 500');
    expect(rules.map((r) => metricNames(r.expr)[0])).toEqual([
      "consumer_pending_messages",
      "outbox_oldest_pending_age_seconds",
      "outbox_dead_lettered_total",
      "events_queue_superseded_versions_total",
      "events_queue_oldest_hold_seconds",
      "http_request_duration_seconds",
      "db_pool_connections",
      "webhook_attempts_total",
      "gateway_rate_limiter_failures_total",
    ]);
    // Every alert links its own section of the runbook (docs/operations.md, "Alerts"), which exists.
    const operations = readFileSync(join(__dirname, "../../../docs/operations.md"), "utf8");
    const anchors = new Set([...operations.matchAll(/^### (\w+)$/gm)].map((m) => m[1].toLowerCase()));
    for (const r of rules as unknown as { alert: string; annotations: Record<string, string> }[]) {
      expect(r.annotations.runbook_url).toBe(`docs/operations.md#${r.alert.toLowerCase()}`);
      expect({ alert: r.alert, documented: anchors.has(r.alert.toLowerCase()) }).toEqual({ alert: r.alert, documented: true });
    }
    const elsewhere = named(render(required, { metrics: { prometheusRule: { enabled: true, runbookUrl: "https://wiki.example.org/analytics/operations" } } }), "PrometheusRule", "analytics")!;
    expect(elsewhere.spec.groups[0].rules[0].annotations.runbook_url).toBe("https://wiki.example.org/analytics/operations#analyticsconsumerlag");
  });

  it("ships a Grafana dashboard in a ConfigMap for the sidecar, every panel on series the processes export", () => {
    const objects = render(required, { metrics: { grafanaDashboard: { enabled: true } } });
    validateAll(objects);
    const map = named(objects, "ConfigMap", "analytics-dashboard")!;
    expect(map.metadata.labels).toMatchObject({ grafana_dashboard: "1" });
    const dashboard = JSON.parse(map.data["analytics-platform.json"]);
    expect(dashboard.uid).toBe("analytics-platform");
    const names = exported();
    const exprs = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) => p.targets.map((t) => t.expr)) as string[];
    expect(exprs.length).toBeGreaterThanOrEqual(10);
    for (const expr of exprs) for (const name of metricNames(expr)) expect({ name, exported: names.has(name) }).toEqual({ name, exported: true });
  });
});
