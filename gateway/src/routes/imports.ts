import { Readable } from "node:stream";
import { z } from "zod";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { DescMessage, MessageInitShape } from "@bufbuild/protobuf";
import { catalogueV1, importToRest, inventoryV1, ordersV1, pricingV1, type ImportService } from "@analytics/contracts";
import { checkItem, converting, PURCHASE_ORDER_BATCH_MAX, referenceField, type BatchResponse } from "../http/batch";
import { HttpError } from "../http/errors";
import { fileOf } from "../http/idempotency";
import { FileProblem, FileTooLarge, MAX_IMPORT_BYTES, MAX_IMPORT_LINES, csvItems, ndjsonItems, type ColumnType } from "../http/import-file";
import { pageHeaders, pageQuery, setPageHeaders } from "../http/paging";
import { route, type RouteContext } from "../pipeline/route";
import { batchResponseSchema, generalResponseSchema } from "../http/schemas";
import type { CallAs } from "../clients";
import { productCreateDocumented, productCreateSchema } from "./catalogue-schemas";
import { distributionOrderLine, unresolvedRows } from "./distribution-orders";
import { stockFields, stockWriteSchema, triggerWriteSchema } from "./inventory-schemas";
import { priceWrites } from "./pricing";
import { priceLineFields, priceLineSchema } from "./pricing-schemas";
import { productWrite } from "./products";
import { orderAnswer, purchaseOrderLine, unresolvedOrders } from "./purchase-orders";
import { triggerWrites, type TriggerItem } from "./stores";
import { transactionUpsert } from "./transactions";
import { stockWrites, type StockWrite } from "./warehouses";

/**
 * /v2/api/imports (CONTRACT "Imports", docs/imports.md): the gateway streams the file into chunks
 * of the owning service's job (catalogue: products; pricing: prices; orders: purchase orders,
 * distribution orders, transactions; inventory: stock, stock triggers), checking and resolving each
 * line as the resource's batch route does; the owner's worker applies them.
 */

export type ImportClient = Client<typeof ImportService>;
/** The services that own imported resources. */
export interface ImportOwners {
  catalogue: ImportClient;
  pricing: ImportClient;
  orders: ImportClient;
  inventory: ImportClient;
}
/** What the batch routes resolve before the owner writes (SKUs, warehouses), as they do it. */
export interface ImportResolvers {
  catalogue: Client<typeof catalogueV1.CatalogueService>;
  inventory: Client<typeof inventoryV1.InventoryService>;
}

const URL = "/v2/api/imports";
/** Lines per chunk, as many as a batch takes; fewer when they are large (CHUNK_BYTES). */
const CHUNK_LINES = 1000;
const CHUNK_BYTES = 8 * 1024 * 1024;
const tag = "Imports";
const MEDIA = { ndjson: "application/x-ndjson", csv: "text/csv" } as const;

/** The valid lines of a chunk as the resource's batch route sends them to the owner. */
interface Prepared {
  /** The owner's batch request of the lines not answered here, serialized. */
  request: Uint8Array;
  /** By line of the chunk's valid ones: the batch route's own answer (an unknown SKU or warehouse), which the owner never sees. */
  answered?: (BatchResponse | undefined)[];
}

/** An importable resource: whose it is, and its line as its batch route checks and sends it. */
interface Importable<T> {
  owner: keyof ImportOwners;
  reference: string;
  line: z.ZodType<T>;
  prepare(items: T[], resolvers: ImportResolvers, options: ReturnType<CallAs>): Prepared | Promise<Prepared>;
  /** Lines per chunk when its batch takes fewer than CHUNK_LINES. */
  chunkLines?: number;
  /** CSV columns (absent: NDJSON only). */
  csv?: { columns: Map<string, ColumnType>; nested: Set<string> };
}

/** The columns a CSV of `item` may name, from its JSON schema: flat fields, and the nested ones it may not. */
function csvColumnsOf(item: z.ZodType) {
  const schema = z.toJSONSchema(item, { io: "input", unrepresentable: "any" }) as { properties?: Record<string, { type?: string | string[]; anyOf?: { type?: string }[] }> };
  const columns = new Map<string, ColumnType>();
  const nested = new Set<string>();
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const types = new Set([property.type ?? [], ...(property.anyOf ?? []).map((a) => a.type ?? [])].flat());
    if (types.has("object") || types.has("array")) nested.add(name.toLowerCase());
    else if (types.has("string")) columns.set(name.toLowerCase(), "string");
    else if (types.has("boolean")) columns.set(name.toLowerCase(), "boolean");
    else columns.set(name.toLowerCase(), "number");
  }
  return { columns, nested };
}

/** The owner's batch request, serialized: all a resource's lines are when its batch route answers none of them itself. */
const serialized = <S extends DescMessage>(schema: S, message: MessageInitShape<S>): Prepared => ({ request: toBinary(schema, create(schema, message)) });
/** Typed as its line, kept beside the others. */
const importable = <T>(resource: Importable<T>) => resource as unknown as Importable<unknown>;

/** The resources that can be imported (CONTRACT "Imports"), each as its batch route takes an item. */
const importables: Record<string, Importable<unknown>> = {
  products: importable({
    owner: "catalogue",
    reference: "key",
    line: converting(productCreateSchema, productWrite(false)),
    prepare: (writes) => serialized(catalogueV1.UpsertProductsRequestSchema, { products: writes.map((w) => w.product), cleared: writes.map((w) => w.cleared), resultsOnly: true }),
    csv: csvColumnsOf(productCreateDocumented),
  }),
  prices: importable({
    owner: "pricing",
    reference: "key",
    line: priceLineSchema,
    prepare: async (items, { catalogue }, options) => serialized(pricingV1.UpsertPricesRequestSchema, { prices: await priceWrites(catalogue, options, items) }),
    csv: csvColumnsOf(priceLineFields),
  }),
  purchaseorders: importable({
    owner: "orders",
    reference: "externalPONo",
    line: purchaseOrderLine,
    chunkLines: PURCHASE_ORDER_BATCH_MAX,
    prepare: async (orders, resolvers, options) => {
      const problems = await unresolvedOrders(resolvers, options, orders);
      const request = serialized(ordersV1.WritePurchaseOrdersRequestSchema, { purchaseOrders: orders.filter((_, n) => !problems[n]), mode: ordersV1.WriteMode.UPSERT, resultsOnly: true });
      return { ...request, answered: orders.map((po, n) => problems[n] && orderAnswer(po, problems[n])) };
    },
  }),
  distributionorders: importable({
    owner: "orders",
    reference: "externalDOID",
    line: distributionOrderLine,
    prepare: async (rows, resolvers, options) => {
      const answered = await unresolvedRows(resolvers, options, rows);
      return { ...serialized(ordersV1.WriteDistributionOrdersRequestSchema, { distributionOrders: rows.filter((_, n) => !answered[n]), mode: ordersV1.WriteMode.UPSERT }), answered };
    },
  }),
  transactions: importable({
    owner: "orders",
    reference: "externalTransactionID",
    line: transactionUpsert,
    prepare: (transactions) => serialized(ordersV1.WriteTransactionsRequestSchema, { transactions, mode: ordersV1.WriteMode.UPSERT }),
  }),
  stock: importable({
    owner: "inventory",
    reference: "key",
    line: stockWriteSchema as z.ZodType<StockWrite>,
    prepare: async (rows, { catalogue }, options) => serialized(inventoryV1.UpsertStockRequestSchema, { rows: await stockWrites(catalogue, options, rows) }),
    csv: csvColumnsOf(z.object(stockFields)),
  }),
  stocktriggers: importable({
    owner: "inventory",
    reference: "key",
    line: triggerWriteSchema as unknown as z.ZodType<TriggerItem>,
    prepare: async (items, { catalogue }, options) => serialized(inventoryV1.UpsertStockTriggersRequestSchema, { triggers: await triggerWrites(catalogue, options, items) }),
  }),
};
const RESOURCES = Object.keys(importables);
const CSV_RESOURCES = RESOURCES.filter((r) => importables[r].csv);

const STATUSES = ["queued", "running", "completed", "completed_with_errors", "failed", "cancelled"] as const;
/** The Import object: GET /imports/{id}, and the data of an import.finished webhook delivery (webhooks.ts). */
export const importSchema = z
  .object({
    id: z.string().uuid(),
    resource: z.string(),
    format: z.enum(["ndjson", "csv"]),
    status: z.enum(STATUSES),
    linesTotal: z.number().int().nullable().describe("null until the whole file has arrived"),
    linesProcessed: z.number().int(),
    linesSucceeded: z.number().int(),
    linesFailed: z.number().int(),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    resultsExpireAt: z.string().nullable().describe("results are kept 7 days after the job ends; then GET .../results is a 410"),
    message: z.string().describe("why a failed job failed (naming the line), or empty"),
  })
  .meta({ id: "Import" });
/** A line's outcome: the BatchResponse its item would get in the batch endpoint, and its line. */
const importResultSchema = batchResponseSchema.extend({ line: z.number().int().describe("the input line, from 1") }).meta({ id: "ImportLineResult" });
const idParam = { id: z.string().max(100) };

/** The job of the caller's with `id`, asked of every owner (an id names no owner); 404 when none has it. */
async function findImport(owners: ImportOwners, as: CallAs, caller: Parameters<CallAs>[0], id: string) {
  const answers = await Promise.allSettled(Object.entries(owners).map(async ([name, owner]: [string, ImportClient]) => ({ name: name as keyof ImportOwners, job: (await owner.getImport({ importId: id }, as(caller))).import! })));
  const found = answers.find((a) => a.status === "fulfilled");
  if (found) return found.value;
  const failure = answers.map((a) => (a as PromiseRejectedResult).reason).find((e) => ConnectError.from(e).code !== Code.NotFound);
  if (failure) throw failure;
  throw new HttpError(404, `no import ${id}`);
}

export function importRoutes(ctx: RouteContext, owners: ImportOwners, resolvers: ImportResolvers, as: CallAs): void {
  // The file streams into the handler: no parser reads it, and only this route takes these types.
  ctx.app.addContentTypeParser([MEDIA.ndjson, MEDIA.csv], (request, _payload, done) => {
    if (request.routeOptions.url === URL && request.method === "POST") done(null, undefined);
    else done(new HttpError(415, "Content-Type must be application/json"), undefined);
  });

  route(ctx, {
    method: "POST",
    url: URL,
    operationId: "createImport",
    summary: "Start an import: a file of a resource's batch items, applied as a job",
    description:
      `The body is the file: NDJSON (\`${MEDIA.ndjson}\`, one item of the resource's batch endpoint per line; a prices line may name its list as \`externalPriceListId\` too) or, for ${CSV_RESOURCES.join(", ")}, CSV (\`${MEDIA.csv}\`, RFC 4180, a header row naming the item's JSON fields; nested fields only through NDJSON). ` +
      `At most 1 GiB (413) and ${MAX_IMPORT_LINES} lines. Each line gets the outcome its item would get in the batch endpoint, in file order (a later line for the same key wins); a bad line fails alone; a file that cannot be read (not NDJSON, a CSV header naming an unknown field, a body cut off) makes the job \`failed\`, with a message naming the line, and applies none of it. ` +
      `Costs one write of the rate limit, whatever the file holds. ` +
      `With \`Idempotency-Key\`, a repeat with the same file answers the first job; another file under the key is a 422 (the file is hashed as it streams, and a repeat's file is read and hashed before it is answered).`,
    tag,
    auth: "bearer",
    bodyLimit: MAX_IMPORT_BYTES,
    upload: true,
    bodyMedia: { [MEDIA.ndjson]: "one item per line", [MEDIA.csv]: `a header row, then one item per row (${CSV_RESOURCES.join(", ")})` },
    query: { resource: z.enum(RESOURCES as [string, ...string[]]).describe("the resource the lines are items of (its batch endpoint's items)") },
    responses: {
      202: { description: "the job, queued (or already failed when the file could not be read); `Location` names it", schema: importSchema, headers: { Location: { description: "the job's URL", schema: { type: "string" } } } },
      400: { description: "`resource` is not one that can be imported", schema: generalResponseSchema },
      413: { description: "the file is larger than 1 GiB or has more than 10,000,000 lines (the job is failed)", schema: generalResponseSchema },
      415: { description: `the body is neither ${MEDIA.ndjson} nor (${CSV_RESOURCES.join(", ")}) ${MEDIA.csv}`, schema: generalResponseSchema },
    },
    handler: async ({ query, caller }, request, reply) => {
      const importable = importables[query.resource];
      const mediaType = String(request.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
      const format = mediaType === MEDIA.csv ? "csv" : mediaType === MEDIA.ndjson ? "ndjson" : undefined;
      // A JSON body was parsed already: a file is sent as what it is.
      if (!format || (format === "csv" && !importable.csv)) throw new HttpError(415, `${query.resource} imports take ${importable.csv ? `${MEDIA.ndjson} or ${MEDIA.csv}` : `${MEDIA.ndjson} only`}`);
      const owner = owners[importable.owner];
      const { import: job } = await owner.createImport({ resource: query.resource, format }, as(caller));
      const importId = job!.id;
      // Hashed as it streams when the request claimed an Idempotency-Key (a repeat must send the same file).
      const file = fileOf(request);
      const items = format === "csv" ? csvItems(file, importable.csv!.columns, importable.csv!.nested) : ndjsonItems(file);
      let seq = 0;
      let linesTotal = 0;
      let chunk = { valid: [] as unknown[], lines: [] as bigint[], rejected: [] as (BatchResponse & { line: bigint })[], bytes: 0 };
      const send = async () => {
        if (!chunk.valid.length && !chunk.rejected.length) return;
        // The valid lines as the batch route sends its items (their SKUs and warehouses resolved now, as a batch's are when it is sent).
        const { request, answered } = chunk.valid.length ? await importable.prepare(chunk.valid, resolvers, as(caller)) : { request: new Uint8Array(), answered: undefined };
        const itemLines = chunk.lines.filter((_, n) => !answered?.[n]);
        const rejected = [...chunk.rejected, ...chunk.lines.flatMap((line, n) => { const a = answered?.[n]; return a ? [{ ...a, line }] : []; })];
        await owner.appendImportChunk({ importId, seq: seq++, items: itemLines.length ? request : new Uint8Array(), itemLines, rejected }, as(caller));
        chunk = { valid: [], lines: [], rejected: [], bytes: 0 };
      };
      let failure: string | undefined;
      let tooLarge: string | undefined;
      try {
        for await (const { line, item, refused, size } of items as AsyncIterable<{ line: number; item: unknown; refused?: string; size?: number }>) {
          linesTotal++;
          const checked = refused === undefined ? checkItem(importable.line, item, referenceField(importable.reference)) : { reference: "", referenceField: importable.reference, statusCode: 400, message: refused };
          if ("value" in checked) {
            chunk.valid.push(checked.value);
            chunk.lines.push(BigInt(line));
          } else chunk.rejected.push({ ...checked, line: BigInt(line) });
          // An NDJSON line's size as read; a CSV record's as its item.
          chunk.bytes += size ?? JSON.stringify(item).length;
          if (chunk.valid.length + chunk.rejected.length >= (importable.chunkLines ?? CHUNK_LINES) || chunk.bytes >= CHUNK_BYTES) await send();
        }
        await send();
      } catch (error) {
        if (error instanceof FileProblem) failure = error.message;
        else if (error instanceof FileTooLarge) failure = tooLarge = error.message;
        else {
          // The upload broke (a call failed, the client left): the job ends failed now rather than
          // queued until the sweep. Best effort: the owner may be the one that is down.
          await owner.sealImport({ importId, linesTotal: BigInt(linesTotal), chunksTotal: seq, failure: `the upload failed after ${linesTotal} lines; nothing of it is applied` }, as(caller)).catch(() => undefined);
          throw error;
        }
      }
      const sealed = await owner.sealImport({ importId, linesTotal: BigInt(linesTotal), chunksTotal: seq, failure }, as(caller));
      if (tooLarge) throw new HttpError(413, `${tooLarge}: import ${importId} failed`);
      reply.code(202).header("Location", `${URL}/${importId}`);
      return importToRest(sealed.import!);
    },
  });

  route(ctx, {
    method: "GET",
    url: URL,
    operationId: "listImports",
    summary: "The account's imports, newest first",
    tag,
    auth: "bearer",
    query: { ...pageQuery(), status: z.enum(STATUSES).optional() },
    responses: { 200: { description: "imports, newest first", schema: z.array(importSchema), headers: pageHeaders } },
    handler: async ({ query, caller }, request, reply) => {
      // Each owner's newest up to this page, merged: jobs live with the services that run them.
      const limit = query.page * query.pageSize;
      const lists = await Promise.all(Object.values(owners).map((owner: ImportClient) => owner.listImports({ limit, status: query.status }, as(caller))));
      const all = lists.flatMap((l) => l.imports).sort((a, b) => Number(timestampDate(b.createdAt!)) - Number(timestampDate(a.createdAt!)) || (a.id < b.id ? 1 : -1));
      setPageHeaders(request, reply, query, lists.reduce((n, l) => n + l.totalCount, 0));
      return all.slice((query.page - 1) * query.pageSize, limit).map(importToRest);
    },
  });

  route(ctx, {
    method: "GET",
    url: `${URL}/:id`,
    operationId: "getImport",
    summary: "An import: its status and counts (progress after every chunk)",
    tag,
    auth: "bearer",
    params: idParam,
    responses: { 200: { description: "the import", schema: importSchema }, 404: { description: "no such import of this account", schema: generalResponseSchema } },
    handler: async ({ params, caller }) => importToRest((await findImport(owners, as, caller, params.id)).job),
  });

  route(ctx, {
    method: "POST",
    url: `${URL}/:id/cancel`,
    operationId: "cancelImport",
    summary: "Cancel an import: it stops after the chunk in flight; what is applied stays",
    tag,
    auth: "bearer",
    params: idParam,
    responses: {
      200: { description: "the import, cancelled", schema: importSchema },
      404: { description: "no such import of this account", schema: generalResponseSchema },
      409: { description: "the import has already finished (code `import_finished`)", schema: generalResponseSchema },
    },
    handler: async ({ params, caller }) => {
      const { name } = await findImport(owners, as, caller, params.id);
      const answer = await owners[name].cancelImport({ importId: params.id }, as(caller));
      if (answer.finished) throw new HttpError(409, `import ${params.id} has already finished (${answer.import!.status})`, undefined, {}, "import_finished");
      return importToRest(answer.import!);
    },
  });

  route(ctx, {
    method: "GET",
    url: `${URL}/:id/results`,
    operationId: "getImportResults",
    summary: "An import's per-line results as NDJSON, in input order",
    description: "One line per input line of the chunks applied so far, `{line, reference, referenceField, statusCode, message}` (the batch endpoint's BatchResponse item and the 1-based input line), filtered by `outcome` (default `failed`). Kept 7 days after the job ends; then 410.",
    tag,
    auth: "bearer",
    params: idParam,
    query: { outcome: z.enum(["failed", "succeeded", "all"]).default("failed") },
    responses: {
      200: { description: "one JSON object per line", schema: importResultSchema, contentType: MEDIA.ndjson },
      404: { description: "no such import of this account", schema: generalResponseSchema },
      410: { description: "the results have expired", schema: generalResponseSchema },
    },
    handler: async ({ params, query, caller }, request, reply) => {
      const { name, job } = await findImport(owners, as, caller, params.id);
      if (job.resultsExpireAt && timestampDate(job.resultsExpireAt) < new Date()) throw new HttpError(410, `the results of import ${params.id} have expired`);
      const ended = new AbortController();
      request.raw.once("close", () => ended.abort());
      const stream = owners[name].streamImportResults({ importId: params.id, outcome: query.outcome }, { ...as(caller), timeoutMs: undefined, signal: ended.signal });
      reply.type(`${MEDIA.ndjson}; charset=utf-8`);
      return Readable.from(
        (async function* () {
          for await (const { results } of stream) {
            yield results.map((r) => JSON.stringify({ line: Number(r.line), reference: r.reference, referenceField: r.referenceField, statusCode: r.statusCode, message: r.message }) + "\n").join("");
          }
        })(),
      );
    },
  });
}
