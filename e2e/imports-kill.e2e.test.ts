import { eventually, testNatsUrl } from "@analytics/testing";
import { client, E2E_ADMIN_TOKEN, signUp, startOnTestServices, startPlatform, type Platform, type PlatformOnTestServices } from "./harness";

/**
 * An import survives kill -9 (CONTRACT "Imports"): the platform killed while the job runs, started
 * again on the same database, finishes the job with every line applied once: one product and one
 * queue entry per line, one result per line.
 */
describe("an import through kill -9", () => {
  const LINES = 6000;
  let platform: PlatformOnTestServices;
  let restarted: Platform | undefined;
  let names!: { stream: string; dataDir: string };
  beforeAll(async () => {
    platform = await startOnTestServices({}, undefined, (n) => (names = n));
  });
  afterAll(async () => {
    await restarted?.stop();
    await platform?.close();
  });

  it("resumes after the kill with no line doubled or lost", async () => {
    const account = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    const file = Array.from({ length: LINES }, (_, i) => JSON.stringify({ key: `K${i}`, sku: `S${i}`, productName: `Product ${i}` })).join("\n");
    const res = await fetch(`${platform.baseUrl}/v2/api/imports?resource=products`, { method: "POST", headers: { authorization: `Bearer ${account.token}`, "content-type": "application/x-ndjson" }, body: file });
    const { id } = (await res.json()) as { id: string };
    expect(res.status).toBe(202);
    const atKill = await eventually(async () => {
      const job = (await account.api("GET", `/v2/api/imports/${id}`)).body;
      return job.linesProcessed > 0 && job;
    }, 60_000);
    await platform.kill();
    expect([atKill.status, atKill.linesProcessed < LINES]).toEqual(["running", true]);

    restarted = await startPlatform({
      DATABASE_URL: platform.databaseUrl,
      NATS_URL: testNatsUrl(),
      NATS_STREAM: names.stream,
      NATS_SUBJECT_PREFIX: `${names.stream.toLowerCase()}.`,
      ADMIN_TOKEN: E2E_ADMIN_TOKEN,
      DATA_DIR: names.dataDir,
    });
    const auth = await client(restarted.baseUrl)("POST", "/v2/api/auth", { accountID: account.accountID, apiKey: account.apiKey });
    const api = client(restarted.baseUrl, auth.body.accessToken);
    const job = await eventually(async () => {
      const j = (await api("GET", `/v2/api/imports/${id}`)).body;
      return j.status !== "running" && j.status !== "queued" && j;
    }, 120_000);
    expect(job).toMatchObject({ status: "completed", linesProcessed: LINES, linesSucceeded: LINES, linesFailed: 0 });

    const results = (await (await fetch(`${restarted.baseUrl}/v2/api/imports/${id}/results?outcome=all`, { headers: { authorization: `Bearer ${auth.body.accessToken}` } })).text()).split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(results.map((r) => [r.line, r.statusCode])).toEqual(Array.from({ length: LINES }, (_, i) => [i + 1, 201]));
    const products = (await api<any[]>("GET", "/v2/api/products?pageSize=10000")).body;
    expect(products.map((p) => p.key).sort()).toEqual(Array.from({ length: LINES }, (_, i) => `K${i}`).sort());
    // One update_sku entry per line: none doubled by the chunk the kill cut, none lost.
    const entries = async () => {
      const all: string[] = [];
      for (let page = 1; ; page++) {
        const got = (await api<any[]>("GET", `/v2/api/events?page=${page}&pageSize=1000`)).body;
        if (!got.length) return all;
        all.push(...got.map((e) => e.payload.key));
      }
    };
    await eventually(async () => (await entries()).length >= LINES, 120_000);
    const keys = await entries();
    expect([keys.length, new Set(keys).size]).toEqual([LINES, LINES]);
  });
});
