import { randomUUID } from "node:crypto";
import pino from "pino";
import { create, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { catalogueV1, ImportSchema, ImportService, topics } from "@analytics/contracts";
import type { OutboxRelay } from "@analytics/outbox";
import { ImportJobs, MAX_CHUNK_ATTEMPTS, startService } from "@analytics/rpc";
import { eventually, serviceUnderTest } from "@analytics/testing";
import { Registry } from "prom-client";
import { catalogueImports } from "../src/imports";
import { catalogueService } from "../src/service";

/**
 * The catalogue's import jobs, stepped by hand (the service runs without its worker): a chunk
 * commits whole with its progress, so a transaction that dies mid-chunk is applied again from
 * that chunk with no line doubled or lost; cancel stops after the chunk in flight; one job per
 * account and resource runs at a time.
 */
describe("catalogue import jobs", () => {
  const service = serviceUnderTest(ImportService, (deps) => startService({ ...catalogueService, workers: [] }, deps), { schema: "catalogue" });
  const ctx = () => ({ db: service.db, relay: { kick: () => undefined } as unknown as OutboxRelay, logger: pino({ level: "silent" }) });

  /** A sealed products job of `chunks`, each a list of keys (line numbers follow on). */
  async function importOf(accountId: string, chunks: string[][]) {
    const as = service.as(accountId);
    const { import: job } = await service.client.createImport({ resource: "products", format: "ndjson" }, as);
    let line = 0;
    for (const [seq, keys] of chunks.entries()) {
      const first = line + 1;
      line += keys.length;
      const products = keys.map((key, i) => create(catalogueV1.ProductSchema, { key, sku: key, productName: `${key} line ${first + i}` }));
      const items = toBinary(catalogueV1.UpsertProductsRequestSchema, create(catalogueV1.UpsertProductsRequestSchema, { products, cleared: keys.map(() => ({ fields: [] })) }));
      await service.client.appendImportChunk({ importId: job!.id, seq, items, itemLines: keys.map((_, i) => BigInt(first + i)) }, as);
    }
    await service.client.sealImport({ importId: job!.id, linesTotal: BigInt(line), chunksTotal: chunks.length }, as);
    return job!.id;
  }

  /** Steps `jobs` until no job waits; a step that throws is a transaction that died (the worker steps again), 20 at most. */
  async function runAll(jobs: ImportJobs) {
    let deaths = 0;
    while (deaths < 20) {
      const worked = await jobs.step(ctx()).catch(() => (deaths++, true));
      if (!worked) return deaths;
    }
    return deaths;
  }

  /** What an account's import left: its products and its outbox rows, without what differs between accounts. */
  async function stateOf(accountId: string, importId: string) {
    const products = await service.db("products").where({ account_id: accountId }).orderBy("key").select("key", "product_name", "version");
    const outbox = await service.db("outbox").where({ account_id: accountId }).orderBy("seq").select("subject");
    const results: unknown[] = [];
    for await (const chunk of service.client.streamImportResults({ importId, outcome: "all" }, service.as(accountId))) results.push(...chunk.results.map((r) => [r.line, r.reference, r.statusCode, r.message]));
    const job = (await service.client.getImport({ importId }, service.as(accountId))).import!;
    return { products, outbox: outbox.map((o) => o.subject), results, job: [job.status, job.linesProcessed, job.linesSucceeded, job.linesFailed] };
  }

  const chunks = [
    ["A", "B", "C"],
    ["D", "A", "E", "A"], // A again twice in one chunk: each later line wins, in file order
    ["F", "B"],
  ];

  it("resumes a job whose chunk's transaction died from that chunk: the same state, queue and results as a clean run", async () => {
    const clean = randomUUID();
    const cleanId = await importOf(clean, chunks);
    expect(await runAll(catalogueImports)).toBe(0);

    // The same file, the second chunk's transaction dying after its writes, before its commit.
    let calls = 0;
    const dying = new ImportJobs({
      products: {
        async apply(c, caller, items) {
          const outcomes = await catalogueImports.resources.products.apply(c, caller, items);
          if (++calls === 2) throw new Error("killed before COMMIT");
          return outcomes;
        },
      },
    });
    const resumed = randomUUID();
    const resumedId = await importOf(resumed, chunks);
    expect(await runAll(dying)).toBe(1);

    const expected = await stateOf(clean, cleanId);
    expect(expected.job).toEqual(["completed", 9n, 9n, 0n]);
    expect(expected.products.find((p) => p.key === "A")).toMatchObject({ product_name: "A line 7", version: 3 });
    // Nine products' messages, then the job's end (import.finished), committed with its last chunk.
    expect(expected.outbox).toEqual([...Array(9).fill(expect.stringMatching(/^analytics\.catalogue\.sku\./)), topics.importFinished.subject]);
    expect(await stateOf(resumed, resumedId)).toEqual(expected);
  });

  it("cancels after the chunk in flight: what is applied stays, the rest never runs; a finished job is not cancelled again", async () => {
    const accountId = randomUUID();
    const importId = await importOf(accountId, chunks);
    expect(await catalogueImports.step(ctx())).toBe(true);
    const cancelled = await service.client.cancelImport({ importId }, service.as(accountId));
    expect([cancelled.finished, cancelled.import!.status, cancelled.import!.linesProcessed]).toEqual([false, "cancelled", 3n]);
    expect(await catalogueImports.step(ctx())).toBe(false);
    const state = await stateOf(accountId, importId);
    expect(state.products.map((p) => p.key)).toEqual(["A", "B", "C"]);
    expect(state.results).toHaveLength(3);
    expect((await service.client.cancelImport({ importId }, service.as(accountId))).finished).toBe(true);
  });

  it("runs one job per account and resource at a time: the next waits queued", async () => {
    const accountId = randomUUID();
    const first = await importOf(accountId, chunks);
    const second = await importOf(accountId, [["G"]]);
    const statuses = async () => Promise.all([first, second].map(async (importId) => (await service.client.getImport({ importId }, service.as(accountId))).import!.status));
    await catalogueImports.step(ctx());
    expect(await statuses()).toEqual(["running", "queued"]);
    await catalogueImports.step(ctx());
    await catalogueImports.step(ctx());
    expect(await statuses()).toEqual(["completed", "queued"]);
    await catalogueImports.step(ctx());
    expect(await statuses()).toEqual(["completed", "completed"]);
  });

  it("fails a job whose chunk cannot be applied after a few attempts, naming its line: the chunks before stay applied", async () => {
    const broken = new ImportJobs({
      products: {
        async apply(c, caller, items) {
          const outcomes = await catalogueImports.resources.products.apply(c, caller, items);
          if (outcomes.some((o) => o.reference === "D")) throw new Error("a bug");
          return outcomes;
        },
      },
    });
    const accountId = randomUUID();
    const importId = await importOf(accountId, chunks);
    expect(await runAll(broken)).toBe(MAX_CHUNK_ATTEMPTS);
    const state = await stateOf(accountId, importId);
    expect(state.job).toEqual(["failed", 3n, 3n, 0n]);
    expect((await service.client.getImport({ importId }, service.as(accountId))).import!.message).toMatch(/^line 4: /);
    expect(state.products.map((p) => p.key)).toEqual(["A", "B", "C"]);
  });

  /** The account's import.finished messages in its outbox, each with the job as GetImport answers it now. */
  async function announced(accountId: string) {
    const rows = await service.db("outbox").where({ account_id: accountId, subject: topics.importFinished.subject }).orderBy("seq").select("payload", "aggregate");
    return Promise.all(
      rows.map(async (r: { payload: Buffer; aggregate: string }) => {
        const m = fromBinary(topics.importFinished.schema, r.payload);
        const now = (await service.client.getImport({ importId: m.import!.id }, service.as(accountId))).import!;
        return { aggregate: r.aggregate, accountId: m.accountId, status: m.import!.status, asAnswered: equals(ImportSchema, m.import!, now) };
      }),
    );
  }

  it("announces each job's end once, in the transaction that ends it, with the job as it ended: completed, cancelled, failed (an unreadable file, a chunk that cannot be applied)", async () => {
    const accountId = randomUUID();
    const as = service.as(accountId);
    const completed = await importOf(accountId, [["P1", "P2"]]);
    await catalogueImports.step(ctx());
    // A job under way announces nothing; its end does, once.
    const cancelled = await importOf(accountId, chunks);
    await catalogueImports.step(ctx());
    expect((await announced(accountId)).map((a) => a.status)).toEqual(["completed"]);
    await service.client.cancelImport({ importId: cancelled }, as);
    await service.client.cancelImport({ importId: cancelled }, as);
    const { import: unreadable } = await service.client.createImport({ resource: "products", format: "ndjson" }, as);
    await service.client.sealImport({ importId: unreadable!.id, linesTotal: 0n, chunksTotal: 0, failure: "line 1: not JSON" }, as);
    const broken = new ImportJobs({
      products: {
        async apply() {
          throw new Error("a bug");
        },
      },
    });
    const failed = await importOf(accountId, [["Q"]]);
    expect(await runAll(broken)).toBe(MAX_CHUNK_ATTEMPTS);
    expect(await runAll(catalogueImports)).toBe(0);
    expect(await announced(accountId)).toEqual(
      [
        [completed, "completed"],
        [cancelled, "cancelled"],
        [unreadable!.id, "failed"],
        [failed, "failed"],
      ].map(([id, status]) => ({ aggregate: `import:${id}`, accountId, status, asAnswered: true })),
    );
  });

  it("answers another account's job as not found", async () => {
    const importId = await importOf(randomUUID(), [["X"]]);
    await expect(service.client.getImport({ importId }, service.as(randomUUID()))).rejects.toThrow(/no import/);
    await runAll(catalogueImports);
  });

  it("refuses a chunk appended twice (a retried append) with a conflict, never storing it twice", async () => {
    const accountId = randomUUID();
    const as = service.as(accountId);
    const { import: job } = await service.client.createImport({ resource: "products", format: "ndjson" }, as);
    const chunk = { importId: job!.id, seq: 0, items: new Uint8Array(), rejected: [{ line: 1n, statusCode: 400, reference: "", referenceField: "key", message: "bad" }] };
    await service.client.appendImportChunk(chunk, as);
    await expect(service.client.appendImportChunk(chunk, as)).rejects.toMatchObject({ code: Code.AlreadyExists, rawMessage: expect.stringContaining("chunk 0 of import") });
    await service.client.sealImport({ importId: job!.id, linesTotal: 1n, chunksTotal: 1 }, as);
    await runAll(catalogueImports);
    expect((await stateOf(accountId, job!.id)).results).toEqual([[1n, "", 400, "bad"]]);
  });

  it("fails a job whose upload stopped after the idle time, dropping its chunks; an upload still arriving stays", async () => {
    const accountId = randomUUID();
    const as = service.as(accountId);
    const started = async () => {
      const { import: job } = await service.client.createImport({ resource: "products", format: "ndjson" }, as);
      await service.client.appendImportChunk({ importId: job!.id, seq: 0, items: new Uint8Array(), rejected: [{ line: 1n, statusCode: 400, reference: "", referenceField: "key", message: "bad" }] }, as);
      return job!.id;
    };
    const [stopped, arriving] = [await started(), await started()];
    // Both started three minutes ago; the stopped one's last chunk arrived two minutes ago, the other's arrives now.
    await service.db("import_jobs").whereIn("id", [stopped, arriving]).update({ appended_at: service.db.raw("now() - interval '2 minutes'"), created_at: service.db.raw("now() - interval '3 minutes'") });
    await service.client.appendImportChunk({ importId: arriving, seq: 1, items: new Uint8Array(), rejected: [{ line: 2n, statusCode: 400, reference: "", referenceField: "key", message: "bad" }] }, as);
    expect((await catalogueImports.sweep(ctx(), 60_000)).stopped).toBe(1);
    const job = async (importId: string) => (await service.client.getImport({ importId }, as)).import!;
    expect(await job(stopped)).toMatchObject({ status: "failed", message: expect.stringContaining("the upload stopped"), resultsExpireAt: expect.anything() });
    expect(await service.db("import_chunks").where({ import_id: stopped })).toEqual([]);
    // Failed by the sweep as by anything else: its import.finished is announced, once.
    expect((await announced(accountId)).map((a) => [a.aggregate, a.status, a.asAnswered])).toEqual([[`import:${stopped}`, "failed", true]]);
    await expect(service.client.appendImportChunk({ importId: stopped, seq: 1, items: new Uint8Array() }, as)).rejects.toMatchObject({ code: Code.AlreadyExists });
    expect((await job(arriving)).status).toBe("queued");
    await service.client.sealImport({ importId: arriving, linesTotal: 2n, chunksTotal: 2 }, as);
    await runAll(catalogueImports);
  });

  it("deletes a job's results once they have expired, keeping the job (its results answer 410)", async () => {
    const accountId = randomUUID();
    const [expired, kept] = [await importOf(accountId, [["R1"]]), await importOf(accountId, [["R2"]])];
    await runAll(catalogueImports);
    await service.db("import_jobs").where({ id: expired }).update({ results_expire_at: service.db.raw("now() - interval '1 second'") });
    await catalogueImports.sweep(ctx());
    expect((await stateOf(accountId, expired)).results).toEqual([]);
    expect(await service.db("import_chunks").where({ import_id: expired })).toEqual([]);
    expect((await stateOf(accountId, expired)).job).toEqual(["completed", 1n, 1n, 0n]);
    expect((await stateOf(accountId, kept)).results).toHaveLength(1);
  });

  it("runs jobs in the service's worker, which counts the lines applied and shows the live jobs", async () => {
    const metrics = new Registry();
    const worker = catalogueImports.worker(50)({ ...ctx(), metrics });
    try {
      const accountId = randomUUID();
      const importId = await importOf(accountId, chunks);
      await eventually(async () => (await service.client.getImport({ importId }, service.as(accountId))).import!.status === "completed", 30_000);
      const text = await metrics.metrics();
      expect(text).toContain('import_lines_applied_total{resource="products"} 9');
      expect(text).toContain('import_jobs{status="queued"} 0');
      expect(text).toContain("import_oldest_queued_seconds 0");
    } finally {
      await worker.stop();
    }
  });
});
