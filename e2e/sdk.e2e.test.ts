import { execFile, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { eventually } from "@analytics/testing";
import { Analytics, eventQueue, importFile, importResults, NotFoundError, AuthenticationError } from "@analytics/sdk";
import { checkoutRoot, E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/**
 * The SDK and its command line against a started platform (docs/sdk.md, docs/cli.md): sign-in,
 * paging, a write retried after its answer was lost (done once), typed errors, conditional reads,
 * the event queue, an import; the CLI as a script runs it (its exit codes), built as published.
 */
const run = promisify(execFile);
const cliPath = join(checkoutRoot, "libs/sdk/dist/cjs/cli.cjs");

describe("the SDK on the platform", () => {
  const platform = platformForFile();
  const scratch = mkdtempSync(join(tmpdir(), "sdk-e2e-"));
  let account: Awaited<ReturnType<typeof signUp>>;
  let sdk: Analytics;
  const product = (i: number, prefix = "K") => ({ key: `${prefix}${i}`, sku: `S${prefix}${i}`, productName: `Product ${i}`, season: "AW26" });

  beforeAll(async () => {
    // The package as published: its CommonJS build holds the bin.
    await run(process.execPath, ["libs/sdk/scripts/build.mjs", "--no-types"], { cwd: checkoutRoot });
    account = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "SDK");
    sdk = new Analytics({ baseUrl: platform.baseUrl, accountID: account.accountID, apiKey: account.apiKey });
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  const cli = async (args: string[], env: Record<string, string> = {}) => {
    const credentials = { ANALYTICS_BASE_URL: platform.baseUrl, ANALYTICS_ACCOUNT_ID: account.accountID, ANALYTICS_API_KEY: account.apiKey };
    const { PATH, HOME } = process.env;
    return run(process.execPath, [cliPath, ...args], { env: { PATH, HOME, ANALYTICS_PROFILE: join(scratch, "none.json"), ...credentials, ...env } }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
    );
  };

  it("is generated from the very document the gateway serves", async () => {
    const served = join(scratch, "openapi.json");
    writeFileSync(served, await (await fetch(`${platform.baseUrl}/v2/api/openapi.json`)).text());
    await run(process.execPath, ["libs/sdk/scripts/generate.mjs", "--document", served, "--out", join(scratch, "generated")], { cwd: checkoutRoot });
    const committed = join(checkoutRoot, "libs/sdk/src/generated");
    expect(readdirSync(join(scratch, "generated")).sort()).toEqual(readdirSync(committed).sort());
    for (const name of readdirSync(committed)) expect(readFileSync(join(scratch, "generated", name), "utf8")).toBe(readFileSync(join(committed, name), "utf8"));
  });

  it("signs in and pages through a list with for await, page by page", async () => {
    const results = await sdk.products.upsertProductsBatch(Array.from({ length: 23 }, (_, i) => product(i)) as never);
    expect(results.flat().map((r) => r.statusCode)).toEqual(Array(23).fill(201));
    const keys: string[] = [];
    for await (const p of sdk.products.listProducts({ pageSize: 5 })) keys.push(p.key as string);
    expect(keys.sort()).toEqual(Array.from({ length: 23 }, (_, i) => `K${i}`).sort());
    const pages = [];
    for await (const page of sdk.products.listProducts({ pageSize: 10 }).pages()) pages.push(page);
    expect(pages.map((p) => [p.items.length, p.total])).toEqual([[10, 23], [10, 23], [3, 23]]);
  });

  it("retries a write whose answer was lost with the same Idempotency-Key: the platform does it once", async () => {
    const sent: { key: string | null; replayed: string | null }[] = [];
    let lose = true;
    const lossy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (String(input).includes("/v2/api/fxrates")) {
        sent.push({ key: new Headers(init?.headers).get("idempotency-key"), replayed: res.headers.get("idempotent-replayed") });
        if (lose) {
          lose = false;
          await res.arrayBuffer();
          throw new TypeError("fetch failed: the connection was reset");
        }
      }
      return res;
    };
    const retrying = new Analytics({ baseUrl: platform.baseUrl, accountID: account.accountID, apiKey: account.apiKey, fetch: lossy, retryBaseMs: 1 });
    const created = await retrying.fxRates.createFxrates([{ fromCurrency: "EUR", toCurrency: "SEK", rate: 11.5, fromDate: "2026-01-01", externalReference: "FX-1" }]);
    expect(sent).toHaveLength(2);
    expect(sent[1].key).toBe(sent[0].key);
    expect(sent[1].replayed).toBe("true");
    expect(created).toBeDefined();
    expect((await sdk.fxRates.listFxrates({ externalReference: "FX-1" })).length).toBe(1);
  });

  it("waits out the gateway's 429 by its Retry-After and retries", async () => {
    const limited = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Limited");
    const admin = new Analytics({ baseUrl: platform.baseUrl, adminToken: E2E_ADMIN_TOKEN });
    await admin.admin.replaceAccountSettings(limited.accountID, { rateLimitPerSecond: 1, rateLimitBurst: 2 });
    const answers: { status: number; retryAfter: string | null }[] = [];
    const watching: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (String(input).includes("/brands")) answers.push({ status: res.status, retryAfter: res.headers.get("retry-after") });
      return res;
    };
    const api = new Analytics({ baseUrl: platform.baseUrl, accountID: limited.accountID, apiKey: limited.apiKey, fetch: watching, maxRetries: 5 });
    await eventually(async () => {
      for (let i = 0; i < 4; i++) expect(await api.brands.listBrands()).toEqual([]);
      return answers.some((a) => a.status === 429);
    }, 30_000, "a 429 of the account's limit");
    expect(answers.find((a) => a.status === 429)?.retryAfter).toMatch(/^\d+$/);
    expect(answers.at(-1)?.status).toBe(200);
  });

  it("throws typed errors with code and request id, and answers a kept body on 304", async () => {
    const missing = await sdk.warehouses.getWarehouse("no-such").then(() => undefined, (e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ status: 404, code: "not_found", requestId: expect.stringMatching(/\S/) });
    const wrong = new Analytics({ baseUrl: platform.baseUrl, accountID: account.accountID, apiKey: `${account.apiKey}x`, maxRetries: 0 });
    await expect(wrong.brands.listBrands()).rejects.toBeInstanceOf(AuthenticationError);

    await sdk.warehouses.createWarehouses([{ externalId: "W1", name: "Main" }] as never);
    const statuses: number[] = [];
    const watching: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      statuses.push(res.status);
      return res;
    };
    const cached = new Analytics({ baseUrl: platform.baseUrl, accountID: account.accountID, apiKey: account.apiKey, cache: true, fetch: watching });
    const first = await cached.warehouses.getWarehouse("W1");
    const second = await cached.warehouses.getWarehouse("W1");
    expect(second).toEqual(first);
    expect(statuses.slice(-2)).toEqual([200, 304]);
  });

  it("reads the event queue and acknowledges what it read", async () => {
    await eventually(async () => (await sdk.events.listEvents({ status: "pending", pageSize: 1 }).pages().next()).value?.total === 23, 30_000, "23 pending entries");
    const read: string[] = [];
    for await (const entry of eventQueue(sdk, { pageSize: 10 })) read.push((entry.payload as { key: string }).key);
    expect(read.sort()).toEqual(Array.from({ length: 23 }, (_, i) => `K${i}`).sort());
    expect(await sdk.events.listEvents({ status: "pending" })).toEqual([]);
  });

  it("imports a stream, follows the job and streams its failed lines", async () => {
    const lines = [JSON.stringify(product(100)), JSON.stringify({ key: "bad", productName: 12 }), JSON.stringify(product(101))].join("\n") + "\n";
    const seen: string[] = [];
    const job = await importFile(sdk, "products", new Blob([lines]).stream(), { pollMs: 50, onProgress: (j) => seen.push(j.status) });
    expect(job).toMatchObject({ status: "completed_with_errors", linesTotal: 3, linesSucceeded: 2, linesFailed: 1 });
    expect(seen.at(-1)).toBe("completed_with_errors");
    const failed = [];
    for await (const result of importResults(sdk, job.id)) failed.push(result);
    expect(failed).toEqual([expect.objectContaining({ line: 2, statusCode: 400 })]);
  });

  describe("the command line", () => {
    it("answers --help on every command, and its exit codes", async () => {
      for (const command of ["login", "operations", "call", "import", "export", "tail"]) {
        const { code, stdout } = await cli([command, "--help"]);
        expect([command, code, stdout]).toEqual([command, 0, expect.stringContaining(`analytics ${command}`)]);
      }
      expect((await cli(["--help"])).stdout).toMatch(/Exit codes/);
      expect((await cli(["nonsense"])).code).toBe(2);
      expect((await cli(["call", "noSuchOperation"])).code).toBe(2);
      expect((await cli(["call", "listBrands"], { ANALYTICS_ACCOUNT_ID: "", ANALYTICS_API_KEY: "" })).code).toBe(3);
      expect((await cli(["call", "getWarehouse", "--param", "externalWarehouseID=none"])).code).toBe(1);
    });

    it("signs in to a profile of mode 600 and calls any operation with it; refuses a profile others may read", async () => {
      const profile = join(scratch, "profile.json");
      const login = await cli(["login", "--base-url", platform.baseUrl, "--profile", profile, "--account-id", account.accountID, "--api-key", account.apiKey]);
      expect(login.code).toBe(0);
      expect(statSync(profile).mode & 0o777).toBe(0o600);
      const noEnv = { ANALYTICS_ACCOUNT_ID: "", ANALYTICS_API_KEY: "", ANALYTICS_BASE_URL: "" };
      const listed = await cli(["call", "getWarehouse", "--param", "externalWarehouseID=W1", "--profile", profile], noEnv);
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout)).toMatchObject({ externalId: "W1" });
      chmodSync(profile, 0o644);
      const open = await cli(["call", "listWarehouses", "--profile", profile], noEnv);
      expect(open.code).toBe(3);
      expect(open.stderr).toMatch(/chmod 600/);
    });

    it("imports a file with progress, writes its failed lines, and ends in the state the batch gives", async () => {
      const items = Array.from({ length: 40 }, (_, i) => product(i, "CLI-"));
      const file = join(scratch, "products.ndjson");
      writeFileSync(file, [...items.map((p) => JSON.stringify(p)), '{"key":"broken","productName":1}'].join("\n") + "\n");
      const imported = await cli(["import", "products", file, "--progress", "--failed", join(scratch, "failed.ndjson")]);
      expect(imported.code).toBe(4);
      expect(imported.stderr).toMatch(/\d+ lines\/s {2}\d+% {2}ETA \d+s/);
      expect(readFileSync(join(scratch, "failed.ndjson"), "utf8")).toBe('{"key":"broken","productName":1}\n');

      const batch = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Batch");
      const batchSdk = new Analytics({ baseUrl: platform.baseUrl, accountID: batch.accountID, apiKey: batch.apiKey });
      await batchSdk.products.upsertProductsBatch(items as never);
      const state = async (api: Analytics) => {
        const all = [];
        for await (const { id: _i, uuid: _u, createdAt: _c, updatedAt: _up, ...p } of api.products.listProducts({ pageSize: 1000 })) if (String(p.key).startsWith("CLI-")) all.push(p);
        return all.sort((a, b) => String(a.key).localeCompare(String(b.key)));
      };
      expect(await state(sdk)).toEqual(await state(batchSdk));
    });

    it("exports a planning answer as CSV and tails the event queue", async () => {
      const csv = await cli(["export", "listPlanningBreakdown", "--param", "fromDate=2026-01-01", "--param", "toDate=2026-01-31", "--param", "groupBy=skus"]);
      expect(csv.code).toBe(0);
      expect(csv.stdout.split("\n")[0]).toMatch(/groupKey/);
      expect((await cli(["export", "listProducts"])).code).toBe(2);

      await eventually(async () => (await sdk.events.listEvents({ status: "pending" })).length > 0, 30_000, "pending entries of the import");
      const tailed = await cli(["tail"]);
      expect(tailed.code).toBe(0);
      const entries = tailed.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
      expect(entries.length).toBeGreaterThan(0);
      expect(entries[0]).toMatchObject({ eventType: "update_sku" });
      expect(await sdk.events.listEvents({ status: "pending", pageSize: 1000 })).not.toEqual(expect.arrayContaining([expect.objectContaining({ id: entries[0].id })]));
    });

    it("follows the queue with tail --follow until interrupted, then exits 0", async () => {
      const { PATH, HOME } = process.env;
      const child = spawn(process.execPath, [cliPath, "tail", "--follow"], {
        env: { PATH, HOME, ANALYTICS_PROFILE: join(scratch, "none.json"), ANALYTICS_BASE_URL: platform.baseUrl, ANALYTICS_ACCOUNT_ID: account.accountID, ANALYTICS_API_KEY: account.apiKey },
      });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      await sdk.products.upsertProduct({ key: "TAILED", productName: "Tailed" });
      await eventually(async () => out.includes('"TAILED"'), 30_000, "the new product's entry on tail's output");
      child.kill("SIGINT");
      expect(await exited).toBe(0);
    });
  });
});
