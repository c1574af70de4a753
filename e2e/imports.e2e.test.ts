import { E2E_ADMIN_TOKEN, signUp, startOnTestServices, type PlatformOnTestServices } from "./harness";
import { eventually } from "@analytics/testing";

/**
 * Imports (CONTRACT "Imports"): a file's lines get exactly what the same items get through the
 * batch route, in file order, a bad line alone; the job's reads, results, cancel and tenancy.
 */
describe("imports", () => {
  let platform: PlatformOnTestServices;
  let batchAccount: Awaited<ReturnType<typeof signUp>>;
  let importAccount: Awaited<ReturnType<typeof signUp>>;
  beforeAll(async () => {
    platform = await startOnTestServices();
    batchAccount = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Batch");
    importAccount = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Import");
  });
  afterAll(async () => {
    await platform?.close();
  });

  const upload = async (token: string, resource: string, body: string, contentType = "application/x-ndjson", headers: Record<string, string> = {}) => {
    const res = await fetch(`${platform.baseUrl}/v2/api/imports?resource=${resource}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": contentType, ...headers }, body });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };
  const finished = async (api: typeof importAccount.api, id: string) => {
    let job: any;
    await eventually(async () => {
      job = (await api("GET", `/v2/api/imports/${id}`)).body;
      return ["completed", "completed_with_errors", "failed", "cancelled"].includes(job.status);
    }, 30_000);
    return job;
  };
  const results = async (token: string, id: string, outcome = "all") => {
    const res = await fetch(`${platform.baseUrl}/v2/api/imports/${id}/results?outcome=${outcome}`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    return (await res.text()).split("\n").filter(Boolean).map((l) => JSON.parse(l));
  };
  /** The account's products and queue as a client reads them, without what differs between accounts. */
  const stateOf = async (api: typeof importAccount.api) => {
    const products = (await api<any[]>("GET", "/v2/api/products?pageSize=10000")).body.map(({ id: _i, uuid: _u, brandId: _b, categoryId: _c, createdAt: _cr, updatedAt: _up, ...p }) => p);
    const events: any[] = [];
    for (let page = 1; ; page++) {
      const got = (await api<any[]>("GET", `/v2/api/events?page=${page}&pageSize=1000`)).body;
      if (!got.length) break;
      events.push(...got.map((e) => [e.eventType, e.payload.key, e.payload.productName]));
    }
    // The queue's order holds per product (CONTRACT), not between the products of one commit.
    const byProduct = events.map((e, at) => ({ e, at })).sort((a, b) => a.e[1].localeCompare(b.e[1]) || a.at - b.at).map(({ e }) => e);
    return { products: products.sort((a, b) => a.key.localeCompare(b.key)), events: byProduct };
  };

  it("applies a products file as /products/batch applies the same items, in file order, a bad line alone", async () => {
    const items: Record<string, unknown>[] = Array.from({ length: 2500 }, (_, i) => ({ key: `K${i}`, sku: `S${i}`, productName: `Product ${i}`, brandName: `Brand ${i % 7}`, season: "AW26" }));
    items[1200] = { key: "K1200", status: "not a status" }; // a bad line: fails alone
    items.push({ key: "K5", sku: "S5", productName: "Product 5, again" }); // a later line for a key wins
    for (let at = 0; at < items.length; at += 1000) {
      // The same items in batches of 1000, as an import applies them (a chunk at a time).
      const answer = await batchAccount.api("POST", "/v2/api/products/batch", items.slice(at, at + 1000));
      expect(answer.status).toBe(201);
    }

    const created = await upload(importAccount.token, "products", items.map((i) => JSON.stringify(i)).join("\n") + "\n\n");
    expect(created.status).toBe(202);
    expect(created.headers.get("location")).toBe(`/v2/api/imports/${created.body.id}`);
    expect(created.body).toMatchObject({ resource: "products", format: "ndjson", linesTotal: 2501 });
    const job = await finished(importAccount.api, created.body.id);
    expect(job).toMatchObject({ status: "completed_with_errors", linesProcessed: 2501, linesSucceeded: 2500, linesFailed: 1 });

    const failed = await results(importAccount.token, job.id, "failed");
    expect(failed).toEqual([{ line: 1201, reference: "K1200", referenceField: "key", statusCode: 400, message: expect.stringContaining("status") }]);
    const all = await results(importAccount.token, job.id);
    expect(all.map((r) => r.line)).toEqual(Array.from({ length: 2501 }, (_, i) => i + 1));
    expect(all[2500]).toMatchObject({ reference: "K5", statusCode: 200 });

    // The queue fills as the bus delivers: the same entries, in the same order, once both are there.
    await eventually(async () => (await stateOf(importAccount.api)).events.length === 2500 && (await stateOf(batchAccount.api)).events.length === 2500, 60_000);
    expect(await stateOf(importAccount.api)).toEqual(await stateOf(batchAccount.api));
    expect((await stateOf(importAccount.api)).products.find((p) => p.key === "K5").productName).toBe("Product 5, again");
  });

  it("takes products as CSV, and fails a CSV whose header names an unknown field, naming it", async () => {
    const csv = 'key,sku,productName,status,activePlanning\nC1,C1,"Crew, ""merino""",2,false\nC2,C2,Tee,,true\n';
    const job = await finished(importAccount.api, (await upload(importAccount.token, "products", csv, "text/csv")).body.id);
    expect(job).toMatchObject({ status: "completed", format: "csv", linesSucceeded: 2 });
    const [c1] = (await importAccount.api<any[]>("GET", "/v2/api/products?key=C1")).body;
    expect(c1).toMatchObject({ productName: 'Crew, "merino"', status: 2, activePlanning: false });

    const bad = await upload(importAccount.token, "products", "key,colour\nC3,red\n", "text/csv");
    expect(bad.status).toBe(202);
    expect(bad.body).toMatchObject({ status: "failed", message: expect.stringMatching(/line 1.*colour/) });
  });

  it("fails a file that is not NDJSON, naming the line, and applies none of it", async () => {
    const bad = await upload(importAccount.token, "products", '{"key":"N1"}\n{"key":\n');
    expect(bad.body).toMatchObject({ status: "failed", message: expect.stringContaining("line 2 is not JSON") });
    expect((await importAccount.api<any[]>("GET", "/v2/api/products?key=N1")).body).toEqual([]);
  });

  it("refuses a line nested deeper than any JSON body may be as that line's 400, the others applied", async () => {
    const deep = `{"key":"D2","productName":${"[".repeat(40)}${"]".repeat(40)}}`;
    const job = (await upload(importAccount.token, "products", `{"key":"D1","sku":"D1"}\n${deep}\n{"key":"D3","sku":"D3"}\n`)).body;
    expect(await finished(importAccount.api, job.id)).toMatchObject({ status: "completed_with_errors", linesSucceeded: 2, linesFailed: 1 });
    expect(await results(importAccount.token, job.id, "failed")).toEqual([expect.objectContaining({ line: 2, statusCode: 400, message: expect.stringMatching(/deeper than 32/) })]);
  });

  it("imports transactions as /transactions/batch writes them", async () => {
    const tx = (i: number) => ({ externalTransactionID: `T${i}`, type: 1, channel: 1, currencyCode: "EUR", createdDate: "2026-11-01T10:00:00Z", items: [{ externalItemID: "1", key: `K${i}`, quantity: 1, moneyItemTotalNet: 10, moneyItemTotalVat: 2.5 }] });
    const lines = [tx(1), tx(2), { externalTransactionID: "T3", type: 9 }];
    const batch = (await batchAccount.api<any[]>("POST", "/v2/api/transactions/batch", lines)).body;
    const job = await finished(importAccount.api, (await upload(importAccount.token, "transactions", lines.map((l) => JSON.stringify(l)).join("\n"))).body.id);
    expect(job).toMatchObject({ status: "completed_with_errors", linesSucceeded: 2, linesFailed: 1 });
    expect((await results(importAccount.token, job.id)).map(({ line: _l, ...r }) => r)).toEqual(batch);
  });

  it("answers the account's jobs newest first, filtered by status; another account's job is a 404; a finished one cannot be cancelled", async () => {
    const list = await importAccount.api<any[]>("GET", "/v2/api/imports?pageSize=2");
    expect(list.status).toBe(200);
    expect(list.body.map((j) => j.resource)).toEqual(["transactions", "products"]);
    expect(Number(list.headers.get("x-total-count"))).toBeGreaterThanOrEqual(4);
    const failed = (await importAccount.api<any[]>("GET", "/v2/api/imports?status=failed")).body;
    expect(failed.length).toBeGreaterThanOrEqual(2);
    expect(failed.every((j) => j.status === "failed")).toBe(true);
    const [newest] = list.body;
    expect((await batchAccount.api("GET", `/v2/api/imports/${newest.id}`)).status).toBe(404);
    expect((await batchAccount.api("POST", `/v2/api/imports/${newest.id}/cancel`)).status).toBe(404);
    const cancel = await importAccount.api("POST", `/v2/api/imports/${newest.id}/cancel`);
    expect([cancel.status, cancel.body.code]).toEqual([409, "import_finished"]);
  });

  it("refuses a resource not imported (yet), naming resource and what is supported", async () => {
    const answer = await upload(importAccount.token, "stock", "{}\n");
    expect(answer.status).toBe(400);
    expect(answer.body.details).toEqual([{ path: "resource", message: expect.stringContaining("supported so far are products and transactions") }]);
    expect((await upload(importAccount.token, "transactions", "a,b\n", "text/csv")).status).toBe(415);
    expect((await upload(importAccount.token, "products", '[{"key":"J1"}]', "application/json")).status).toBe(415);
  });

  it("answers a repeat with the same Idempotency-Key with the first job, starting no other", async () => {
    const first = await upload(importAccount.token, "products", '{"key":"I1"}\n', "application/x-ndjson", { "idempotency-key": "import-1" });
    const again = await upload(importAccount.token, "products", '{"key":"I1"}\n', "application/x-ndjson", { "idempotency-key": "import-1" });
    expect([again.status, again.headers.get("idempotent-replayed"), again.body.id]).toEqual([202, "true", first.body.id]);
  });
});
