import http2 from "node:http2";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { checkResponse, databaseForFile, freezableProxy, type FreezableProxy, type OpenApiDocument } from "@analytics/testing";
import { buildGateway, type Gateway } from "../src/app";
import { TEST_ADMIN_TOKEN as ADMIN, testGatewayDeps } from "./gateway-deps";
import { allServicesAt, noServiceReady } from "./services";

const admin = { authorization: `Bearer ${ADMIN}` };

async function signUp(gw: Gateway, ip = "10.0.0.1") {
  const created = (await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Acme" } })).json();
  const auth = await gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: created.accountID, apiKey: created.apiKey }, remoteAddress: ip });
  return { ...created, token: auth.json().accessToken as string };
}

/** Sends raw HTTP/1.1 and resolves with the status line of the answer (or "closed"); `whole`: the answer until the server closes. */
function rawRequest(port: number, head: string, body = "", whole = false): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk.toString();
      if (!whole && answer.includes("\r\n")) {
        resolve(answer.split("\r\n")[0]);
        socket.destroy();
      }
    });
    socket.on("close", () => resolve(whole ? answer : answer.split("\r\n")[0] || "closed"));
    socket.on("error", () => undefined);
    socket.write(head + "\r\n\r\n" + body);
  });
}

describe("gateway under faults (real Postgres through a proxy that can freeze)", () => {
  const database = databaseForFile();
  // Long enough for the gateway's own start (migrations) to connect through the proxy on a loaded
  // machine; what these tests hold to is the short statement timeout and the 503 that follows.
  const acquireMs = 3_000;

  let proxy: FreezableProxy;
  let gw: Gateway;
  beforeEach(async () => {
    proxy = await freezableProxy(database.url);
    gw = await buildGateway(
      testGatewayDeps(proxy.url, { dbAcquireTimeoutMs: acquireMs, dbStatementTimeoutMs: 500 }),
    );
  });
  afterEach(async () => {
    await proxy.close();
    await gw.close();
  });

  it("answers 503 with Retry-After, in time, when Postgres hangs: /auth, API calls and /readyz", async () => {
    const account = await signUp(gw);
    proxy.freeze();
    const started = performance.now();
    // /auth alone first: it takes the idle pooled connection (a query sent to a server that never answers).
    const auth = await gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: account.accountID, apiKey: account.apiKey }, remoteAddress: "10.0.0.2" });
    const ms = Math.round(performance.now() - started);
    // Then new connections, which never complete their handshake.
    const [api, ready] = await Promise.all([
      gw.app.inject({ method: "GET", url: "/v2/api/events", headers: { authorization: `Bearer ${account.token}` } }),
      gw.app.inject({ method: "GET", url: "/readyz" }),
    ]);
    for (const res of [auth, api]) {
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ statusCode: 503, error: "Service Unavailable", message: "a service is unavailable, try again", code: "service_unavailable" });
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    }
    expect([ready.statusCode, ready.json().checks]).toEqual([503, { database: false }]);
    console.info(`frozen Postgres: /auth on a pooled connection answered 503 after ${ms} ms (statement timeout 500 ms, acquire ${acquireMs} ms)`);
  });

  it("keeps its own statements within the service-call deadline, whatever DB_STATEMENT_TIMEOUT_MS says", async () => {
    // A statement timeout of a minute for the services; the edge's calls have 1.5 s.
    const slow = await buildGateway(testGatewayDeps(proxy.url, { dbAcquireTimeoutMs: acquireMs, dbStatementTimeoutMs: 60_000, serviceCallTimeoutMs: 1_500 }));
    try {
      const account = await signUp(slow);
      proxy.freeze();
      // Answered (503), not held for the minute: the test's own timeout would end it first.
      const auth = await slow.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: account.accountID, apiKey: account.apiKey }, remoteAddress: "10.0.0.4" });
      expect(auth.statusCode).toBe(503);
    } finally {
      await slow.close();
    }
  }, 20_000);

  it("answers 503 with Retry-After when Postgres refuses connections", async () => {
    const account = await signUp(gw);
    await proxy.close(); // pooled connections drop, new ones are refused
    const auth = await gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: account.accountID, apiKey: account.apiKey }, remoteAddress: "10.0.0.3" });
    expect(auth.statusCode).toBe(503);
    expect(auth.headers["retry-after"]).toBeDefined();
    const api = await gw.app.inject({ method: "GET", url: "/v2/api/events", headers: { authorization: `Bearer ${account.token}` } });
    expect(api.statusCode).toBe(503);
  });
});

describe("gateway edge: deadlines, bodies, headers, brakes", () => {
  const database = databaseForFile();
  let gw: Gateway;
  let port: number;
  // A service that accepts calls and never answers them, but ListBrands, which fails (a Connect `internal` error naming internals).
  const silent = http2.createServer((request, response) => {
    if (!request.url.endsWith("/ListBrands")) return;
    response.writeHead(500, { "content-type": "application/json" });
    response.end(JSON.stringify({ code: "internal", message: 'relation "brands" does not exist at db.internal:5432' }));
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  silent.on("session", (session) => sessions.add(session));
  beforeAll(async () => {
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    gw = await buildGateway(testGatewayDeps(database.url, { services: allServicesAt(silentUrl), serviceCallTimeoutMs: 300, requestTimeoutMs: 1_000 }));
    await gw.app.listen({ port: 0, host: "127.0.0.1" });
    port = (gw.app.server.address() as AddressInfo).port;
    database.atClose(async () => {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
      await gw.close();
    });
  });

  it("answers 504 outcome_unknown, not 503, when a service misses the deadline of a write (it may commit it later)", async () => {
    const account = await signUp(gw);
    const res = await gw.app.inject({ method: "DELETE", url: "/v2/api/warehouses/W1", headers: { authorization: `Bearer ${account.token}` } });
    expect(res.statusCode).toBe(504);
    expect(res.json()).toMatchObject({ statusCode: 504, code: "outcome_unknown" });
    expect(res.json().message).toMatch(/may or may not have been applied/);
  });

  it("answers every write whose service misses its deadline with a 504 body the document describes (a batch's per item)", async () => {
    const account = await signUp(gw, "10.0.6.1");
    await gw.app.inject({ method: "PUT", url: `/admin/v1/accounts/${account.accountID}/settings`, headers: admin, payload: { rateLimitPerSecond: 100_000 } });
    const doc: OpenApiDocument = (await gw.app.inject({ method: "GET", url: "/v2/api/openapi.json" })).json();
    // Each write of an account that takes a JSON body, sent its own documented example.
    const writes = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.entries(operations as Record<string, any>)
        .filter(([method, op]) => method !== "get" && op.requestBody?.content?.["application/json"]?.example !== undefined && path.startsWith("/v2/api/"))
        .map(([method, op]) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, "X1"), body: op.requestBody.content["application/json"].example })),
    );
    const answered: string[] = [];
    // Eight at a time: each waits out the call deadline.
    for (let from = 0; from < writes.length; from += 8) {
      await Promise.all(
        writes.slice(from, from + 8).map(async ({ method, path, body }) => {
          const res = await gw.app.inject({ method: method as "POST", url: path, payload: body, headers: { authorization: `Bearer ${account.token}` } });
          if (res.statusCode !== 504) return;
          answered.push(`${method} ${path}`);
          checkResponse(doc, method, path, res.statusCode, res.json(), String(res.headers["content-type"]));
        }),
      );
    }
    expect(answered).toEqual(expect.arrayContaining(["POST /v2/api/products", "POST /v2/api/products/batch", "PUT /v2/api/products", "POST /v2/api/planning/sales-plans/batch"]));
  });

  it("answers 503 when a service misses the call deadline, stays ready, and /healthz names the service in time", async () => {
    const account = await signUp(gw);
    const res = await gw.app.inject({ method: "GET", url: "/v2/api/events", headers: { authorization: `Bearer ${account.token}` } });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ message: "a service is unavailable, try again", code: "service_unavailable" });
    expect(res.headers["retry-after"]).toBeDefined();
    // The gateway stays ready (its database answers): only that service's routes answer 503.
    const ready = await gw.app.inject({ method: "GET", url: "/readyz" });
    expect([ready.statusCode, ready.json().checks]).toEqual([200, { database: true }]);
    const health = await gw.app.inject({ method: "GET", url: "/healthz" });
    expect([health.statusCode, health.json().checks]).toEqual([200, noServiceReady(true)]);
  });

  it("answers 500 internal when a service fails, with none of its text", async () => {
    const account = await signUp(gw);
    const res = await gw.app.inject({ method: "GET", url: "/v2/api/brands", headers: { authorization: `Bearer ${account.token}` } });
    expect([res.statusCode, res.json()]).toEqual([500, { statusCode: 500, error: "Internal Server Error", message: "internal error", code: "internal" }]);
  });

  it("answers 401 to a stranger without waiting for (or reading) the body", async () => {
    // 10 MB announced, 10 bytes sent: the answer comes at once, not after the request timeout.
    const status = await rawRequest(port, "POST /v2/api/products/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000", "[{\"key\":1");
    expect(status).toBe("HTTP/1.1 401 Unauthorized");
    const admin = await rawRequest(port, "POST /admin/v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000", "{");
    expect(admin).toBe("HTTP/1.1 401 Unauthorized");
  });

  it("refuses an oversized Content-Length with 413 before the body arrives", async () => {
    const account = await signUp(gw, "10.0.7.1");
    const status = await rawRequest(
      port,
      `POST /v2/api/products/batch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${account.token}\r\nContent-Type: application/json\r\nContent-Length: ${200 * 1024 * 1024}`,
      "[",
    );
    expect(status).toBe("HTTP/1.1 413 Payload Too Large");
  });

  it("ends a request whose body never finishes (request timeout) with a 408 the document describes", async () => {
    const account = await signUp(gw, "10.0.7.2");
    const answer = await rawRequest(
      port,
      `POST /v2/api/products/batch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${account.token}\r\nX-Request-Id: slow-upload-1\r\nContent-Type: application/json\r\nContent-Length: 1000`,
      "[",
      true,
    );
    const [head, body] = answer.split("\r\n\r\n");
    expect(head.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
    // The request's id, as on every answer (the document says so).
    expect(head.split("\r\n")).toContain("X-Request-Id: slow-upload-1");
    const doc: OpenApiDocument = (await gw.app.inject({ method: "GET", url: "/v2/api/openapi.json" })).json();
    checkResponse(doc, "POST", "/v2/api/products/batch", 408, JSON.parse(body), /content-type: ([^\r]+)/i.exec(head)![1]);
    expect(JSON.parse(body)).toMatchObject({ statusCode: 408, code: "request_timeout" });
  });

  it("answers a path parameter over the router's limit and a malformed URL with GeneralResponses", async () => {
    const account = await signUp(gw, "10.0.7.4");
    const headers = { authorization: `Bearer ${account.token}` };
    const long = await gw.app.inject({ method: "GET", url: `/v2/api/mappingtables/${"m".repeat(6000)}`, headers });
    expect(long.statusCode).toBe(414);
    expect(long.json()).toEqual({ statusCode: 414, error: "URI Too Long", message: "a path parameter is too long", code: "uri_too_long" });
    // 500 characters, as the schema allows, reach the route (which answers for the mapping table).
    const allowed = await gw.app.inject({ method: "GET", url: `/v2/api/mappingtables/${"m".repeat(500)}`, headers });
    expect(allowed.statusCode).not.toBe(414);
    const malformed = await gw.app.inject({ method: "GET", url: "/v2/api/mappingtables/%FF", headers });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ statusCode: 400, error: "Bad Request" });
  });

  it("sets nosniff everywhere, no-store on tokens, admin and every authenticated answer, a CSP on /docs", async () => {
    const answers = await Promise.all([
      gw.app.inject({ method: "GET", url: "/healthz" }),
      gw.app.inject({ method: "GET", url: "/nowhere" }),
      gw.app.inject({ method: "GET", url: "/v2/api/events" }),
      gw.app.inject({ method: "GET", url: "/v2/api/openapi.json" }),
    ]);
    for (const res of answers) expect(res.headers["x-content-type-options"]).toBe("nosniff");
    const account = await signUp(gw, "10.0.7.3");
    const auth = await gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: account.accountID, apiKey: account.apiKey }, remoteAddress: "10.0.7.3" });
    expect(auth.headers["cache-control"]).toBe("no-store");
    // Every answer to an authenticated call: an account's data is no shared cache's business.
    const data = await gw.app.inject({ method: "GET", url: "/v2/api/events", headers: { authorization: `Bearer ${auth.json().accessToken}` } });
    expect(data.headers["cache-control"]).toBe("no-store");
    const settings = await gw.app.inject({ method: "GET", url: `/admin/v1/accounts/${account.accountID}/settings`, headers: admin });
    expect(settings.statusCode).toBe(200);
    expect(settings.headers["cache-control"]).toBe("no-store");
    const docs = await gw.app.inject({ method: "GET", url: "/docs/" });
    expect(docs.statusCode).toBe(200);
    expect(docs.headers["content-security-policy"]).toMatch(/default-src 'self'/);
    expect(docs.headers["content-security-policy"]).not.toMatch(/upgrade-insecure-requests/);
  });

  it("answers a query parameter the route does not take with a 400 naming it, never unfiltered data", async () => {
    const account = await signUp(gw, "10.0.7.4");
    const auth = await gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: account.accountID, apiKey: account.apiKey }, remoteAddress: "10.0.7.4" });
    const headers = { authorization: `Bearer ${auth.json().accessToken}` };
    const misspelt = await gw.app.inject({ method: "GET", url: "/v2/api/events?pagesize=5", headers });
    expect(misspelt.statusCode).toBe(400);
    expect(misspelt.json().details).toEqual([{ path: "pagesize", message: expect.stringMatching(/^is not a query parameter of this route \(this route takes .*pageSize/) }]);
    const stock = await gw.app.inject({ method: "GET", url: "/v2/api/warehouses/W1/stock?key=K1&keys=K1", headers });
    expect([stock.statusCode, stock.json().details.map((d: { path: string }) => d.path)]).toEqual([400, ["key"]]);
  });

  it("accepts the admin scheme in any case and brakes wrong admin tokens per address", async () => {
    const lower = await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: { authorization: `bearer ${ADMIN}` }, payload: { name: "x" }, remoteAddress: "10.0.8.1" });
    expect(lower.statusCode).toBe(201);
    const wrong = { authorization: "Bearer not-the-admin-token-000000" };
    for (let i = 0; i < 3; i++) {
      const res = await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: wrong, payload: { name: "x" }, remoteAddress: "10.0.8.2" });
      expect(res.statusCode).toBe(401);
    }
    const braked = await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "x" }, remoteAddress: "10.0.8.2" });
    expect(braked.statusCode).toBe(429);
    expect(Number(braked.headers["retry-after"])).toBeGreaterThan(0);
    // Another address is not braked.
    const other = await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "x" }, remoteAddress: "10.0.8.3" });
    expect(other.statusCode).toBe(201);
  });
});
