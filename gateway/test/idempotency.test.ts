import http from "node:http";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { databaseForFile, eventually, freePort } from "@analytics/testing";
import pino from "pino";
import { buildGateway, type Gateway } from "../src/app";
import { IdempotencyKeys } from "../src/http/idempotency";
import { TEST_ADMIN_TOKEN as ADMIN, testGatewayDeps } from "./gateway-deps";
import { allServicesAt } from "./services";
import { countingInventory } from "./counting-inventory";

const admin = { authorization: `Bearer ${ADMIN}` };

async function signUp(gw: Gateway) {
  const created = (await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Acme" } })).json();
  const auth = await gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: created.accountID, apiKey: created.apiKey } });
  return { accountID: created.accountID as string, apiKey: created.apiKey as string, token: auth.json().accessToken as string };
}

describe("Idempotency-Key on writes (real Postgres, a counting inventory service)", () => {
  const database = databaseForFile();
  let inventory: Awaited<ReturnType<typeof countingInventory>>;
  let gw: Gateway;
  let token: string;

  beforeAll(async () => {
    inventory = await countingInventory();
    gw = await buildGateway(testGatewayDeps(database.url, { services: { ...allServicesAt(), inventory: inventory.url } }));
    token = (await signUp(gw)).token;
  });
  afterAll(async () => {
    await gw?.close();
    await inventory?.close();
  });
  beforeEach(() => {
    inventory.writes = 0;
  });

  const post = (key: string | undefined, body: unknown = [{ externalId: "W1", name: "Main" }], as = token, url = "/v2/api/warehouses") =>
    gw.app.inject({ method: "POST", url, headers: { authorization: `Bearer ${as}`, ...(key === undefined ? {} : { "idempotency-key": key }) }, payload: body as object });

  it("answers a repeat with the first answer, marked Idempotent-Replayed, without writing again", async () => {
    const first = await post("k-replay");
    const again = await post("k-replay");
    expect(first.statusCode).toBe(201);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    expect([again.statusCode, again.headers["idempotent-replayed"], again.headers["content-type"], again.body]).toEqual([201, "true", first.headers["content-type"], first.body]);
    expect(inventory.writes).toBe(1);
  });

  it("refuses the key with another body or path (422) and writes nothing", async () => {
    expect((await post("k-other")).statusCode).toBe(201);
    const otherBody = await post("k-other", [{ externalId: "W2", name: "Second" }]);
    const otherPath = await post("k-other", [{ externalId: "W1", name: "Main" }], token, "/v2/api/warehouses?x=1");
    expect([otherBody.statusCode, otherBody.json().details, otherBody.json().code]).toEqual([422, [{ path: "Idempotency-Key", message: "was used for another request" }], "idempotency_key_reused"]);
    expect(otherPath.statusCode).toBe(422);
    expect(inventory.writes).toBe(1);
  });

  it("refuses the key with another method on the same path (422) and writes nothing", async () => {
    const at = { authorization: `Bearer ${token}`, "idempotency-key": "k-method" };
    inventory.stored = { externalId: "W1", name: "Main" };
    expect((await gw.app.inject({ method: "PUT", url: "/v2/api/warehouses/W1", headers: at, payload: { name: "Renamed" } })).statusCode).toBe(200);
    // The same path and body: only the method differs.
    const otherMethod = await gw.app.inject({ method: "DELETE", url: "/v2/api/warehouses/W1", headers: at, payload: { name: "Renamed" } });
    expect([otherMethod.statusCode, otherMethod.json().details]).toEqual([422, [{ path: "Idempotency-Key", message: "was used for another request" }]]);
    expect([inventory.writes, inventory.stored?.name]).toEqual([1, "Renamed"]);
  });

  it("answers 409 while the first request runs, then replays its answer", async () => {
    let open!: () => void;
    inventory.gate = new Promise((resolve) => (open = resolve));
    const first = post("k-running");
    await eventually(async () => inventory.writes === 1);
    const during = await post("k-running");
    expect([during.statusCode, during.json().code]).toEqual([409, "idempotency_key_in_use"]);
    open();
    inventory.gate = undefined;
    expect((await first).statusCode).toBe(201);
    const after = await post("k-running");
    expect([after.statusCode, after.headers["idempotent-replayed"]]).toEqual([201, "true"]);
    expect(inventory.writes).toBe(1);
  });

  it("keeps no 5xx: the retry runs again", async () => {
    inventory.fail = true;
    expect((await post("k-5xx")).statusCode).toBe(503);
    const retry = await post("k-5xx");
    expect([retry.statusCode, retry.headers["idempotent-replayed"]]).toEqual([201, undefined]);
    expect(inventory.writes).toBe(1);
  });

  it("keeps the claim of a write answered 504 outcome_unknown: its retry is a 409, never a second write", async () => {
    const impatient = await buildGateway(testGatewayDeps(database.url, { services: { ...allServicesAt(), inventory: inventory.url }, serviceCallTimeoutMs: 300 }));
    let open!: () => void;
    inventory.gate = new Promise((resolve) => (open = resolve));
    try {
      const first = await impatient.app.inject({ method: "POST", url: "/v2/api/warehouses", headers: { authorization: `Bearer ${token}`, "idempotency-key": "k-504" }, payload: [{ externalId: "W1", name: "Main" }] });
      expect([first.statusCode, first.json().code]).toEqual([504, "outcome_unknown"]);
      // The service goes on and writes it after the gateway stopped waiting.
      open();
      inventory.gate = undefined;
      const retry = await post("k-504");
      expect([retry.statusCode, retry.json().details]).toEqual([409, [{ path: "Idempotency-Key", message: "is in use by a request without an answer" }]]);
      expect(inventory.writes).toBe(1);
    } finally {
      open();
      inventory.gate = undefined;
      await impatient.close();
    }
  });

  it("does 50 concurrent requests with one key exactly once", async () => {
    let open!: () => void;
    inventory.gate = new Promise((resolve) => (open = resolve));
    const answers = Array.from({ length: 50 }, () => post("k-50"));
    // Every request has been answered (409) but the one that runs.
    await eventually(async () => inventory.writes === 1);
    setImmediate(() => open());
    const all = await Promise.all(answers);
    inventory.gate = undefined;
    expect(inventory.writes).toBe(1);
    const ran = all.filter((a) => a.statusCode === 201 && a.headers["idempotent-replayed"] === undefined);
    expect(ran).toHaveLength(1);
    expect(all.every((a) => a.statusCode === 409 || (a.statusCode === 201 && a.body === ran[0].body))).toBe(true);
  });

  it("does 50 concurrent requests with one key exactly once across two gateways on one database", async () => {
    const second = await buildGateway(testGatewayDeps(database.url, { services: { ...allServicesAt(), inventory: inventory.url } }));
    try {
      let open!: () => void;
      inventory.gate = new Promise((resolve) => (open = resolve));
      const send = (gateway: Gateway) =>
        gateway.app.inject({ method: "POST", url: "/v2/api/warehouses", headers: { authorization: `Bearer ${token}`, "idempotency-key": "k-two" }, payload: [{ externalId: "W1", name: "Main" }] });
      const answers = Array.from({ length: 50 }, (_, i) => send(i % 2 ? second : gw));
      await eventually(async () => inventory.writes === 1);
      setImmediate(() => open());
      const all = await Promise.all(answers);
      inventory.gate = undefined;
      expect(inventory.writes).toBe(1);
      expect(all.filter((a) => a.statusCode === 201 && a.headers["idempotent-replayed"] === undefined)).toHaveLength(1);
      expect(all.every((a) => a.statusCode === 409 || a.statusCode === 201)).toBe(true);
      // The other gateway replays the answer the first kept.
      const replays = await Promise.all([send(gw), send(second)]);
      expect(replays.map((a) => [a.statusCode, a.headers["idempotent-replayed"]])).toEqual([[201, "true"], [201, "true"]]);
      expect(inventory.writes).toBe(1);
    } finally {
      await second.close();
    }
  });

  it("treats requests without the header as today, and keys per account", async () => {
    await post(undefined);
    await post(undefined);
    expect(inventory.writes).toBe(2);
    const other = await signUp(gw);
    expect((await post("k-shared")).statusCode).toBe(201);
    const theirs = await post("k-shared", undefined, other.token);
    expect([theirs.statusCode, theirs.headers["idempotent-replayed"]]).toEqual([201, undefined]);
    expect(inventory.writes).toBe(4);
  });

  it("refuses a malformed key with a 400 naming the header", async () => {
    const long = await post("x".repeat(256));
    const control = await post("tab\there");
    for (const res of [long, control]) expect([res.statusCode, res.json().details?.[0]?.path]).toEqual([400, "Idempotency-Key"]);
    expect(inventory.writes).toBe(0);
  });

  it("refuses the header sent twice with a 400 naming it, though Node joins the two into one value", async () => {
    const address = await gw.app.listen({ port: 0, host: "127.0.0.1" });
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${address}/v2/api/warehouses`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } }, (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk)).on("end", () => resolve({ status: res.statusCode!, body }));
      });
      req.on("error", reject);
      // Two header lines: the server sees "k-a, k-b".
      req.setHeader("Idempotency-Key", ["k-a", "k-b"]);
      req.end(JSON.stringify([{ externalId: "W1", name: "Main" }]));
    });
    expect([answer.status, JSON.parse(answer.body).details]).toEqual([400, [{ path: "Idempotency-Key", message: "was sent 2 times; send it once" }]]);
    expect(inventory.writes).toBe(0);
    // Once, the same text is a key like any other.
    expect((await post("k-a, k-b")).statusCode).toBe(201);
  });

  it("prunes every expired key in one run, however many expired since the last (a batch per statement)", async () => {
    const { accountID } = await signUp(gw);
    await gw.db.raw(
      `INSERT INTO idempotency_keys (account_id, key, fingerprint, created_at, status)
       SELECT ?, 'expired-' || i, 'f', now() - interval '2 days', 201 FROM generate_series(1, 5500) i`,
      [accountID],
    );
    expect((await post("k-live")).statusCode).toBe(201);
    const keys = new IdempotencyKeys(gw.db, 86_400, pino({ level: "silent" }));
    try {
      expect(await keys.prune()).toBeGreaterThanOrEqual(5500);
    } finally {
      keys.close();
    }
    const left = await gw.db("idempotency_keys").where("key", "like", "expired-%").count<{ count: string }[]>("* as count");
    expect(Number(left[0].count)).toBe(0);
    // A live key stays.
    expect((await post("k-live")).headers["idempotent-replayed"]).toBe("true");
  });

  it("lets a key expire (IDEMPOTENCY_KEY_TTL_SECONDS): after it, the same request runs again", async () => {
    const shortLived = await buildGateway(testGatewayDeps(database.url, { services: { ...allServicesAt(), inventory: inventory.url }, idempotencyKeyTtlSeconds: 1 }));
    try {
      const { token: t } = await signUp(shortLived);
      const send = () =>
        shortLived.app.inject({ method: "POST", url: "/v2/api/warehouses", headers: { authorization: `Bearer ${t}`, "idempotency-key": "k-expiring" }, payload: [{ externalId: "W1", name: "Main" }] });
      expect((await send()).statusCode).toBe(201);
      expect((await send()).headers["idempotent-replayed"]).toBe("true");
      await eventually(async () => (await send()).headers["idempotent-replayed"] === undefined, 10_000, "the key to expire");
      expect(inventory.writes).toBe(2);
    } finally {
      await shortLived.close();
    }
  });
});

describe("Idempotency-Key across a gateway killed between the write and its answer", () => {
  const database = databaseForFile();
  const root = join(__dirname, "../..");
  let inventory: Awaited<ReturnType<typeof countingInventory>>;
  const running: ChildProcess[] = [];

  beforeAll(async () => {
    execFileSync(process.execPath, ["deploy/local/build.mjs", "gateway"], { cwd: root, stdio: "pipe" });
    inventory = await countingInventory();
  });
  afterAll(async () => {
    for (const child of running) if (child.exitCode === null) child.kill("SIGKILL");
    await inventory?.close();
  });

  /** `node dist/gateway/main.js`, the deployable alone, on this file's database and the counting inventory. */
  async function startGateway(): Promise<{ url: string; child: ChildProcess }> {
    const port = await freePort();
    const child = spawn(process.execPath, ["dist/gateway/main.js"], {
      cwd: root,
      stdio: "ignore",
      env: {
        ...process.env,
        NODE_ENV: "test",
        LOG_LEVEL: "silent",
        PORT: String(port),
        HOST: "127.0.0.1",
        DATABASE_URL: database.url,
        INVENTORY_URL: inventory.url,
        INTERNAL_TOKEN: "i".repeat(40),
        JWT_SECRET: "j".repeat(40),
        API_KEY_PEPPER: "p".repeat(40),
        ADMIN_TOKEN: ADMIN,
        NATS_URL: "",
      },
    });
    running.push(child);
    const url = `http://127.0.0.1:${port}`;
    await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, 60_000, "the gateway to be ready");
    return { url, child };
  }

  it("never does the write twice: a retry after the restart is a 409, the service sees no second write", async () => {
    inventory.gate = new Promise(() => undefined); // the write is done, its answer never comes
    const first = await startGateway();
    const created = (await (await fetch(`${first.url}/admin/v1/accounts`, { method: "POST", headers: { ...admin, "content-type": "application/json" }, body: JSON.stringify({ name: "Acme" }) })).json()) as { accountID: string; apiKey: string };
    const auth = (await (await fetch(`${first.url}/v2/api/auth`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ accountID: created.accountID, apiKey: created.apiKey }) })).json()) as { accessToken: string };
    const send = (url: string) =>
      fetch(`${url}/v2/api/warehouses`, {
        method: "POST",
        headers: { authorization: `Bearer ${auth.accessToken}`, "content-type": "application/json", "idempotency-key": "k-crash" },
        body: JSON.stringify([{ externalId: "W1", name: "Main" }]),
      });
    const lost = send(first.url).catch(() => "connection lost");
    await eventually(async () => inventory.writes === 1, 30_000, "the write to reach the service");
    first.child.kill("SIGKILL");
    expect(await lost).toBe("connection lost");
    inventory.gate = undefined;

    const second = await startGateway();
    const retry = await send(second.url);
    expect(retry.status).toBe(409);
    expect(((await retry.json()) as { message: string }).message).toMatch(/interrupted/);
    expect(inventory.writes).toBe(1);
    // Another key runs as usual on the restarted gateway.
    const fresh = await fetch(`${second.url}/v2/api/warehouses`, {
      method: "POST",
      headers: { authorization: `Bearer ${auth.accessToken}`, "content-type": "application/json", "idempotency-key": "k-after" },
      body: JSON.stringify([{ externalId: "W1", name: "Main" }]),
    });
    expect(fresh.status).toBe(201);
    expect(inventory.writes).toBe(2);
    second.child.kill("SIGTERM");
  });
});
