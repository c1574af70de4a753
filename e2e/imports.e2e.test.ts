import { E2E_ADMIN_TOKEN, signUp, startOnTestServices, type PlatformOnTestServices } from "./harness";
import { importRuns } from "@analytics/rpc";
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
      // Each entry's product as a GET answers it, but for what differs between accounts.
      events.push(...got.map(({ eventType, payload: { id: _i, uuid: _u, brandId: _b, categoryId: _c, createdAt: _cr, updatedAt: _up, ...product } }) => ({ eventType, product })));
    }
    // The queue's order holds per product (CONTRACT), not between the products of one commit.
    const byProduct = events.map((e, at) => ({ e, at })).sort((a, b) => a.e.product.key.localeCompare(b.e.product.key) || a.at - b.at).map(({ e }) => e);
    return { products: products.sort((a, b) => a.key.localeCompare(b.key)), events: byProduct };
  };

  it("applies a products file as /products/batch applies the same items, in file order, a bad line alone", async () => {
    // Both accounts start with a product switched from OLD1 to NEW1 and one with an image.
    for (const { api } of [batchAccount, importAccount]) {
      expect((await api("POST", "/v2/api/products/batch", [{ key: "OLD1", sku: "O1", productName: "Old" }, { key: "IMG1", imageUrl: "https://example.com/a.png" }])).status).toBe(201);
      expect((await api<any[]>("POST", "/v2/api/products/keyswitch", [{ oldKey: "OLD1", key: "NEW1", sku: "O1" }])).status).toBe(200);
    }
    const items: Record<string, unknown>[] = Array.from({ length: 2500 }, (_, i) => ({ key: `K${i}`, sku: `S${i}`, productName: `Product ${i}`, brandName: `Brand ${i % 7}`, season: "AW26" }));
    items[1200] = { key: "K1200", status: "not a status" }; // a bad line: fails alone
    items[11] = { ...items[10], productName: "Product 10, again" }; // a key twice in one chunk: the later line wins
    items[20] = { ...items[19] }; // an identical line again in one chunk: unchanged
    items[1500] = { ...items[30] }; // and in a later chunk
    // An old key and the product's key in one chunk: both write NEW1, the later wins; the brand
    // only the earlier line names is never created.
    items[40] = { key: "OLD1", sku: "O1", productName: "via the old key", brandName: "Early brand" };
    items[41] = { key: "NEW1", sku: "O1", productName: "via the new key", brandName: "Late brand" };
    items[50] = { ...items[50], brandName: "BRAND 1" }; // an existing brand, named in other letter case
    items[60] = { key: "IMG1", productName: "image kept" }; // no imageUrl: the image stays
    items[2000] = { key: "IMG1", productName: "image kept", imageUrl: null }; // null: removed
    items.push({ key: "K5", sku: "S5", productName: "Product 5, again" }); // a later line for a key wins
    for (let at = 0; at < items.length; at += 1000) {
      // The same items as an import applies them: a chunk of 1000 lines at a time, split where a
      // key repeats (a batch would merge the two items; a file applies them in turn).
      const chunk = items.slice(at, at + 1000);
      for (const [from, to] of importRuns(chunk.map((i) => i.key as string))) {
        const answer = await batchAccount.api("POST", "/v2/api/products/batch", chunk.slice(from, to));
        expect(answer.status).toBe(201);
      }
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
    const outcome = (line: number) => `${all[line - 1].reference} ${all[line - 1].statusCode} ${all[line - 1].message}`;
    expect([11, 12, 20, 21, 1501, 41, 42, 61, 2001, 2501].map(outcome)).toEqual([
      "K10 201 created",
      "K10 200 updated",
      "K19 201 created",
      "K19 200 unchanged",
      "K30 200 unchanged",
      "OLD1 200 updated",
      "NEW1 200 updated",
      "IMG1 200 updated",
      "IMG1 200 updated",
      "K5 200 updated",
    ]);

    // The queue fills as the bus delivers: one entry a change (the two set up first, the key
    // switch, and each line created or updated, lines 41 and 42 being one write), the same in
    // both accounts once both are there.
    const changes = 3 + all.filter((r) => r.statusCode === 201 || r.message === "updated").length - 1;
    const counts = async () => [(await stateOf(importAccount.api)).events.length, (await stateOf(batchAccount.api)).events.length];
    await eventually(async () => JSON.stringify(await counts()) === JSON.stringify([changes, changes]), 60_000).catch(async () => expect(await counts()).toEqual([changes, changes]));
    expect(await stateOf(importAccount.api)).toEqual(await stateOf(batchAccount.api));
    const products = new Map((await stateOf(importAccount.api)).products.map((p) => [p.key, p]));
    expect(products.get("K5").productName).toBe("Product 5, again");
    expect(products.get("K10").productName).toBe("Product 10, again");
    expect(products.get("NEW1")).toMatchObject({ productName: "via the new key", brandName: "Late brand", skuSynonyms: ["OLD1"] });
    expect(products.get("K50").brandName).toBe("Brand 1");
    expect([products.get("IMG1").productName, products.get("IMG1").imageUrl]).toEqual(["image kept", null]);
    const brands = async (api: typeof importAccount.api) => (await api<any[]>("GET", "/v2/api/brands?pageSize=100")).body.map((b) => b.name).sort();
    expect(await brands(importAccount.api)).toEqual([...Array.from({ length: 7 }, (_, i) => `Brand ${i}`), "Late brand"]);
    expect(await brands(importAccount.api)).toEqual(await brands(batchAccount.api));
  });

  it("takes products as CSV, and fails a CSV whose header names an unknown field, naming it", async () => {
    const csv = 'key,sku,productName,status,activePlanning\nC1,C1,"Crew, ""merino""",2,false\nC2,C2,Tee,,true\n';
    const job = await finished(importAccount.api, (await upload(importAccount.token, "products", csv, "text/csv")).body.id);
    expect(job).toMatchObject({ status: "completed", format: "csv", linesSucceeded: 2 });
    const [c1] = (await importAccount.api<any[]>("GET", "/v2/api/products?key=C1")).body;
    expect(c1).toMatchObject({ productName: 'Crew, "merino"', status: 2, activePlanning: false });

    // A quoted field keeps a blank line it holds; a blank line between records is skipped (and counted).
    const blank = await finished(importAccount.api, (await upload(importAccount.token, "products", 'key,sku,productName\nC4,C4,"first\n\nthird"\n\nC5,C5,Tee\n', "text/csv")).body.id);
    expect(blank).toMatchObject({ status: "completed", linesTotal: 2, linesSucceeded: 2 });
    expect((await results(importAccount.token, blank.id, "succeeded")).map((r) => [r.line, r.reference])).toEqual([[2, "C4"], [6, "C5"]]);
    expect((await importAccount.api<any[]>("GET", "/v2/api/products?key=C4")).body[0].productName).toBe("first\n\nthird");

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

  it("refuses a resource that cannot be imported, naming resource, and a CSV of an NDJSON-only resource", async () => {
    const answer = await upload(importAccount.token, "widgets", "{}\n");
    expect(answer.status).toBe(400);
    expect(answer.body.details).toEqual([expect.objectContaining({ path: "resource" })]);
    expect((await upload(importAccount.token, "stocktriggers", "key\nK1\n", "text/csv")).status).toBe(415);
    expect((await upload(importAccount.token, "transactions", "a,b\n", "text/csv")).status).toBe(415);
    expect((await upload(importAccount.token, "products", '[{"key":"J1"}]', "application/json")).status).toBe(415);
  });

  it("answers a repeat with the same Idempotency-Key and file with the first job, and another file under it with a 422, starting no other", async () => {
    const jobs = async () => Number((await importAccount.api("GET", "/v2/api/imports?pageSize=1")).headers.get("x-total-count"));
    const first = await upload(importAccount.token, "products", '{"key":"I1"}\n', "application/x-ndjson", { "idempotency-key": "import-1" });
    const before = await jobs();
    const again = await upload(importAccount.token, "products", '{"key":"I1"}\n', "application/x-ndjson", { "idempotency-key": "import-1" });
    expect([again.status, again.headers.get("idempotent-replayed"), again.body.id]).toEqual([202, "true", first.body.id]);
    // The file streams past the claim: it is told apart by its digest, kept with the first answer.
    const other = await upload(importAccount.token, "products", '{"key":"I2"}\n', "application/x-ndjson", { "idempotency-key": "import-1" });
    expect([other.status, other.body.code, other.body.message]).toEqual([422, "idempotency_key_reused", expect.stringContaining('"import-1"')]);
    expect(await jobs()).toBe(before);
  });

  // The other resources: each file, a few good lines, a bad one, an unresolvable one and a later
  // line for an earlier key, against the same items through the batch route (a repeated key in a
  // batch call of its own, as a batch would refuse it in the same call).
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  /** What differs between two accounts holding the same data: ids, UUIDs, times. */
  const VOLATILE = new Set(["id", "ID", "uuid", "skuId", "skuUuid", "skuSeq", "warehouseId", "productId", "priceId", "createdAt", "updatedAt", "eventId", "timestamp", "occurredAt", "accountId"]);
  const scrub = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(scrub)
      : v && typeof v === "object"
        ? Object.fromEntries(Object.entries(v).filter(([k]) => !VOLATILE.has(k)).map(([k, x]) => [k, scrub(x)]))
        : typeof v === "string" && UUID.test(v)
          ? "<uuid>"
          : v;
  const sorted = (rows: unknown[]) => rows.map((r) => JSON.stringify(scrub(r))).sort();
  /** Every queue entry of the account, as a multiset (the queue's order per key is the products test's). */
  const queueOf = async (api: typeof importAccount.api) => {
    const events: unknown[] = [];
    for (let page = 1; ; page++) {
      const got = (await api<any[]>("GET", `/v2/api/events?page=${page}&pageSize=1000`)).body;
      if (!got.length) return sorted(events);
      events.push(...got);
    }
  };
  let seeded: Promise<void> | undefined;
  let batchTo: typeof batchAccount;
  let importTo: typeof importAccount;
  /** Two accounts of their own (their queues hold nothing else), with the same SKUs, price list and warehouses. */
  const seed = () =>
    (seeded ??= (async () => {
      [batchTo, importTo] = [await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Batch 2"), await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Import 2")];
      for (const { api } of [batchTo, importTo]) {
        expect((await api("POST", "/v2/api/products/batch", Array.from({ length: 6 }, (_, i) => ({ key: `R${i}`, sku: `RS${i}`, productName: `Resource ${i}` })))).status).toBe(201);
        expect((await api("POST", "/v2/api/price-lists", { externalPriceListId: "PL", name: "Retail", currency: "EUR" })).status).toBe(201);
        expect((await api("POST", "/v2/api/warehouses", [{ externalId: "W1" }, { externalId: "W2" }])).status).toBe(201);
      }
    })());

  /**
   * `batches` through `batchPath` on one account and the same items as one file (NDJSON, or `csv`)
   * on the other: the import's results are the batch's answers line by line, and `readPath` and
   * the queue end the same.
   */
  const sameAsBatch = async (resource: string, batchPath: string, batches: unknown[][], readPath: string, csv?: string) => {
    await seed();
    const answers: unknown[] = [];
    for (const batch of batches) answers.push(...(await batchTo.api<any[]>("POST", batchPath, batch)).body);
    const file = csv ?? batches.flat().map((l) => JSON.stringify(l)).join("\n");
    const created = await upload(importTo.token, resource, file, csv ? "text/csv" : "application/x-ndjson");
    expect([created.status, created.body.resource]).toEqual([202, resource]);
    const job = await finished(importTo.api, created.body.id);
    expect(job).toMatchObject({ status: "completed_with_errors", linesProcessed: answers.length });
    const lines = await results(importTo.token, job.id);
    expect(lines.map(({ line: _l, ...r }) => r)).toEqual(answers);
    expect(lines.map((r) => r.line)).toEqual(answers.map((_, i) => i + 1 + (csv ? 1 : 0)));
    const read = async (api: typeof importAccount.api) => sorted((await api<any[]>("GET", readPath)).body);
    // The queue fills as the bus delivers: the same entries once both are there (else the difference shown).
    await eventually(async () => JSON.stringify(await queueOf(importTo.api)) === JSON.stringify(await queueOf(batchTo.api)), 10_000).catch(async () => expect(await queueOf(importTo.api)).toEqual(await queueOf(batchTo.api)));
    expect(await read(importTo.api)).toEqual(await read(batchTo.api));
    return lines;
  };

  it("imports prices as /prices/batch writes them, naming the list as externalPriceListId too, and as CSV", async () => {
    const price = (key: string, price: number, extra: object = {}) => ({ listExternalID: "PL", key, price, ...extra });
    const batches = [[price("R0", 10), price("R1", 11, { season: "AW26" }), price("NOSKU", 1), price("R2", -1), price("R3", 13, { listExternalID: "NOLIST" })], [price("R0", 20)]];
    const lines = await sameAsBatch("prices", "/v2/api/prices/batch", batches, "/v2/api/prices");
    expect(lines.map((l) => l.statusCode)).toEqual([201, 201, 404, 400, 404, 200]);
    expect((await importTo.api<any[]>("GET", "/v2/api/prices")).body.find((p) => p.key === "R0").price).toBe(20);

    const csv = "externalPriceListId,key,price,vat\nPL,R4,14,25\nPL,R5,x,\n";
    // The same through the batch, so that both accounts' queues stay the same for the tests after this one.
    await batchTo.api("POST", "/v2/api/prices/batch", [price("R4", 14, { vat: 25 }), price("R5", "x" as never)]);
    const job = await finished(importTo.api, (await upload(importTo.token, "prices", csv, "text/csv")).body.id);
    expect(job).toMatchObject({ format: "csv", linesSucceeded: 1, linesFailed: 1 });
    expect((await importTo.api<any[]>("GET", "/v2/api/prices")).body.find((p) => p.key === "R4")).toMatchObject({ listExternalID: "PL", price: 14, vat: 25 });
  });

  it("imports purchase orders as /purchaseorders/batch writes them", async () => {
    const po = (no: string, key: string, quantity: number, extra: object = {}) => ({ externalPONo: no, orderDate: "2026-03-01T00:00:00Z", deliveryDate: "2026-04-15T00:00:00Z", externalWarehouseID: "W1", items: [{ externalRowID: "1", key, quantity }], ...extra });
    const batches = [[po("P1", "R0", 5), po("P2", "NOSKU", 1), po("P3", "R1", 2, { externalWarehouseID: "NOWH" }), { externalPONo: "P4", deliveryStatus: "x" }, po("P5", "R2", 3)], [po("P1", "R0", 7)]];
    const lines = await sameAsBatch("purchaseorders", "/v2/api/purchaseorders/batch", batches, "/v2/api/purchaseorders?pageSize=100");
    expect(lines.map((l) => l.statusCode)).toEqual([201, 404, 404, 400, 201, 200]);
  });

  it("imports distribution orders as /distributionorders/batch writes them", async () => {
    const row = (doid: string, rowId: string, key: string, quantity: number, extra: object = {}) => ({ externalDOID: doid, externalRowID: rowId, key, quantity, fromWarehouseExternalId: "W1", toWarehouseExternalId: "W2", orderDate: "2026-03-01T00:00:00Z", ...extra });
    const batches = [[row("D1", "1", "R0", 5), row("D1", "2", "NOSKU", 1), row("D2", "1", "R1", 1, { toWarehouseExternalId: "NOWH" }), row("D3", "1", "R2", -4, { quantity: "many" })], [row("D1", "1", "R0", 9)]];
    const lines = await sameAsBatch("distributionorders", "/v2/api/distributionorders/batch", batches, "/v2/api/distributionorders?pageSize=100");
    expect(lines.map((l) => l.statusCode)).toEqual([201, 404, 404, 400, 200]);
  });

  it("imports stock snapshots as /warehouses/stock applies them, as NDJSON and as CSV", async () => {
    const snap = (key: string, availableQuantity: number, date: string, extra: object = {}) => ({ key, externalWarehouseID: "W1", availableQuantity, date, ...extra });
    const batches = [[snap("R0", 5, "2026-11-01T10:00:00Z"), snap("NOSKU", 1, "2026-11-01T10:00:00Z"), snap("R1", 2, "2026-11-01T10:00:00Z", { externalWarehouseID: "NOWH" }), snap("R2", 1, "not a date")], [snap("R0", 8, "2026-11-02T10:00:00Z"), snap("R0", 3, "2026-10-01T10:00:00Z")]];
    const lines = await sameAsBatch("stock", "/v2/api/warehouses/stock", batches, "/v2/api/warehouses/stock?pageSize=100");
    expect(lines.map((l) => l.statusCode)).toEqual([200, 404, 404, 400, 200, 200]);
    expect((await importTo.api<any[]>("GET", "/v2/api/warehouses/stock?keys=R0")).body).toEqual([expect.objectContaining({ availableQuantity: 8 })]);

    const csvBatches = [[snap("R3", 4, "2026-11-01T10:00:00Z", { externalWarehouseID: "W2" }), snap("R4", 6, "2026-11-01T10:00:00Z", { externalWarehouseID: "W2", sku: "RS4" })]];
    const csv = "key,externalWarehouseID,availableQuantity,date,sku\nR3,W2,4,2026-11-01T10:00:00Z,\nR4,W2,6,2026-11-01T10:00:00Z,RS4\n";
    await seed();
    for (const batch of csvBatches) await batchTo.api("POST", "/v2/api/warehouses/stock", batch);
    const job = await finished(importTo.api, (await upload(importTo.token, "stock", csv, "text/csv")).body.id);
    expect(job).toMatchObject({ status: "completed", format: "csv", linesSucceeded: 2 });
    const stock = async (api: typeof importAccount.api) => sorted((await api<any[]>("GET", "/v2/api/warehouses/W2/stock")).body);
    expect(await stock(importTo.api)).toEqual(await stock(batchTo.api));
  });

  it("imports stock triggers as /stocktriggers/batch writes them", async () => {
    const trigger = (key: string, min: number, extra: object = {}) => ({ key, warehouseExternalId: "W1", min, max: min + 10, ...extra });
    const batches = [[trigger("R0", 1), trigger("NOSKU", 1), trigger("R1", 2, { warehouseExternalId: "NOWH" }), trigger("R2", -1)], [trigger("R0", 4)]];
    const lines = await sameAsBatch("stocktriggers", "/v2/api/stocktriggers/batch", batches, "/v2/api/stocktriggers?pageSize=100");
    expect(lines.map((l) => l.statusCode)).toEqual([201, 404, 404, 400, 200]);
  });
});
