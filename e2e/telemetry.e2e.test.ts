import { randomBytes } from "node:crypto";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { eventually } from "@analytics/testing";
import { E2E_ADMIN_TOKEN, signUp, startOnTestServices, type PlatformOnTestServices } from "./harness";

/** A span as OTLP/HTTP JSON carries it (ids in hex). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}
const SERVER = 2;
const PRODUCER = 4;
const CONSUMER = 5;

/** A stand-in OpenTelemetry collector: keeps every span posted to /v1/traces. */
async function startCollector() {
  const spans: OtlpSpan[] = [];
  const paths = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      paths.add(req.url ?? "");
      const doc = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      for (const resource of doc.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) spans.push(...scope.spans);
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    paths,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const attribute = (span: OtlpSpan, key: string) => span.attributes.find((a) => a.key === key)?.value.stringValue;

/** GET over h2c (a service's Connect port answers /metrics too). */
function getH2c(baseUrl: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl);
    session.on("error", reject);
    const req = session.request({ ":path": path });
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => {
      session.close();
      resolve(text);
    });
    req.on("error", reject);
    req.end();
  });
}

/** The value of the first series of `name` whose labels include every one of `labels`. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    const match = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    if (Object.entries(labels).every(([k, v]) => match[2].includes(`${k}="${v}"`))) return Number(match[3]);
  }
  return undefined;
}

const platformReady = (platform: PlatformOnTestServices): { services: Record<string, string>; metrics: string } =>
  JSON.parse(platform.logs.find((line) => line.includes('"platform ready"'))!);
const serviceUrlsOf = (platform: PlatformOnTestServices): Record<string, string> => platformReady(platform).services;

describe("traces and metrics (NATS, OTLP collector)", () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let platform: PlatformOnTestServices;
  beforeAll(async () => {
    collector = await startCollector();
    // DB_POOL_MAX as the test run sets it for every platform (its connection budget), said here so the pool metric's value is known.
    platform = await startOnTestServices({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: "100", DB_POOL_MAX: "3" });
  }, 60_000);
  afterAll(async () => {
    await platform?.close();
    await collector?.close();
  });

  it("follows a write from the client's traceparent through the gateway, the service, the outbox and the bus to the consumers", async () => {
    const account = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "traced");
    const traceId = randomBytes(16).toString("hex");
    const clientSpanId = randomBytes(8).toString("hex");
    const created = await account.api("POST", "/v2/api/products", { key: "traced-1", sku: "traced-1" }, { traceparent: `00-${traceId}-${clientSpanId}-01` });
    expect(created.status).toBe(201);

    const ofTrace = () => collector.spans.filter((s) => s.traceId === traceId);
    const consumed = () => ofTrace().filter((s) => s.kind === CONSUMER && attribute(s, "messaging.consumer.group.name")?.startsWith("events-"));
    await eventually(async () => consumed().length > 0, 15_000, "the events service's consumer span");
    expect(collector.paths).toEqual(new Set(["/v1/traces"]));

    const gateway = ofTrace().find((s) => s.kind === SERVER && s.name === "POST /v2/api/products")!;
    expect(gateway.parentSpanId).toBe(clientSpanId);
    // The gateway's request line names the request's trace and span: logs and traces join.
    const requestLine = () =>
      platform.logs.filter((line) => line.includes(traceId)).map((line) => JSON.parse(line) as Record<string, unknown>).find((l) => l.msg === "request");
    await eventually(async () => requestLine() !== undefined, 5_000, "the gateway's request line with its trace id");
    expect(requestLine()).toMatchObject({ url: "/v2/api/products", statusCode: 201, trace_id: traceId, span_id: gateway.spanId });
    const rpcs = ofTrace().filter((s) => s.kind === SERVER && s.parentSpanId === gateway.spanId);
    expect(rpcs.map((s) => attribute(s, "rpc.system"))).toContain("connect_rpc");
    const publish = ofTrace().find((s) => s.kind === PRODUCER)!;
    expect(attribute(publish, "messaging.system")).toBe("nats");
    // The span that wrote the outbox row is the catalogue's RPC the gateway called.
    const writer = rpcs.find((s) => s.spanId === publish.parentSpanId)!;
    expect(attribute(writer, "rpc.service")).toMatch(/catalogue/i);
    for (const consumer of consumed()) expect(consumer.parentSpanId).toBe(publish.spanId);
  });

  it("answers Prometheus metrics on the gateway and every service: requests per route and RPC, pool, outbox and consumer lag", async () => {
    const account = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "measured");
    expect((await account.api("POST", "/v2/api/products", { key: "m-1", sku: "m-1" })).status).toBe(201);
    expect((await account.api("GET", "/v2/api/products?pageSize=5")).status).toBe(200);

    // Never on the API's port: on 127.0.0.1, where the start log says (no METRICS_PORT here).
    expect((await fetch(`${platform.baseUrl}/metrics`)).status).toBe(404);
    const gateway = await (await fetch(platformReady(platform).metrics)).text();
    expect(sample(gateway, "http_request_duration_seconds_count", { method: "POST", route: "/v2/api/products", status: "201", deployable: "gateway" })).toBeGreaterThanOrEqual(1);
    expect(sample(gateway, "http_request_duration_seconds_count", { method: "GET", route: "/v2/api/products", status: "200" })).toBeGreaterThanOrEqual(1);
    // DB_POOL_MAX 3: the rate limiter's own connection out of it, 2 for the main pool.
    expect(sample(gateway, "db_pool_max_connections", { deployable: "gateway" })).toBe(2);
    expect(sample(gateway, "outbox_pending_messages", { deployable: "gateway" })).toBeGreaterThanOrEqual(0);
    expect(sample(gateway, "process_cpu_seconds_total", { deployable: "gateway" })).toBeGreaterThan(0);

    const services = serviceUrlsOf(platform);
    const catalogue = await getH2c(services.catalogue, "/metrics");
    expect(sample(catalogue, "rpc_server_duration_seconds_count", { code: "ok", deployable: "catalogue" })).toBeGreaterThanOrEqual(1);
    expect(sample(catalogue, "db_pool_connections", { state: "idle", deployable: "catalogue" })).toBeGreaterThanOrEqual(0);
    expect(sample(catalogue, "outbox_published_total", { deployable: "catalogue" })).toBeGreaterThanOrEqual(1);
    // Every write so far reached the events service: its consumers have nothing left to acknowledge.
    await eventually(
      async () => {
        const events = await getH2c(services.events, "/metrics");
        return sample(events, "consumer_pending_messages", { deployable: "events" }) === 0 && (sample(events, "consumer_batch_duration_seconds_count", { outcome: "ok" }) ?? 0) >= 1;
      },
      15_000,
      "the events consumers' lag back to 0",
    );
  });
});

describe("tracing off (no OTLP endpoint)", () => {
  it("stores no trace context and sends none", async () => {
    const platform = await startOnTestServices();
    try {
      const account = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "untraced");
      const traceparent = `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`;
      expect((await account.api("POST", "/v2/api/products", { key: "u-1" }, { traceparent })).status).toBe(201);
      const db = new pg.Client({ connectionString: platform.databaseUrl });
      await db.connect();
      try {
        const { rows } = await db.query("SELECT count(*)::int AS rows, count(trace)::int AS traced FROM catalogue.outbox");
        expect(rows[0]).toEqual({ rows: 1, traced: 0 });
      } finally {
        await db.end();
      }
    } finally {
      await platform.close();
    }
  }, 60_000);
});
