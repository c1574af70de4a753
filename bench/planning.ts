// Issue 12 items 4, 5 and 6, run by `node bench/planning.mjs` (bundles this file with esbuild).
// - Item 4: an account with 100,000 SKUs, 20 warehouses (stock of each SKU in 5 of them: 500,000
//   rows) and 50,000 open PO lines (plus a second account of 20,000 SKUs around it): planned
//   volumes groupBy=seasons and groupBy=skus through the planning service (Connect RPC, the
//   gateway's hop) vs the same aggregate written by hand and run directly on planning's tables
//   (pg, as psql would). Medians of ROUNDS, sides alternating; target ratio <= 1.5.
// - Item 6: lag from publishing a stock or PO message to its effect in planned volumes, p50/p99,
//   on JetStream and on the in-process bus.
// - Item 5: rebuild: a new planning instance on an empty schema replays the stream from the start
//   (100,000 SKU + 100,000 stock + 10,000 PO messages) until its replica is complete.
import { randomUUID } from "node:crypto";
import pg from "pg";
import pino from "pino";
import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { callerHeaders } from "@analytics/auth";
import { InProcessBus, type Bus, type BusMessage } from "@analytics/bus";
import { planningV1, topics, type Topic } from "@analytics/contracts";
import { createServiceClient } from "@analytics/rpc";
import { createTestBus, createTestDatabase } from "@analytics/testing";
import { seedPlanning } from "./planning-seed.mjs";
import { startPlanningService } from "../services/planning/src/service";
import { plannedVolumes } from "../services/planning/src/repository";
import { volumeQueryOf } from "../services/planning/src/validation";
import { createDb } from "@analytics/db";

const ROUNDS = Number(process.env.ROUNDS ?? 9);
const LAG_SAMPLES = Number(process.env.LAG_SAMPLES ?? 100);
const REBUILD_SKUS = Number(process.env.REBUILD_SKUS ?? 100_000);
const internalToken = "b".repeat(40);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const as = (accountId: string) => ({ headers: callerHeaders(internalToken, { accountId, apiKeyId: randomUUID() }) });
const logger = pino({ level: "silent" });

function message<D extends DescMessage>(topic: Topic<D>, accountId: string, aggregate: string, init: MessageInitShape<D>): BusMessage {
  return { id: randomUUID(), subject: topic.subject, accountId, occurredAt: new Date().toISOString(), aggregate, payload: toBinary(topic.schema, create(topic.schema, init)) };
}

async function publishAll(bus: Bus, messages: BusMessage[]) {
  for (let i = 0; i < messages.length; i += 1000) {
    const outcomes = await bus.publish(messages.slice(i, i + 1000));
    const failed = outcomes.find((o) => o);
    if (failed) throw failed;
  }
}

/** The aggregate as one would write it by hand in psql: UNION ALL of stock and lines, GROUP BY. */
const reference = (group: string) => `
  SELECT g, sum(stock) AS stock, sum(po) AS po, sum(draft) AS draft FROM (
    SELECT coalesce(s.${group}, '') AS g, st.available_quantity AS stock, 0 AS po, 0 AS draft
    FROM planning.stock st JOIN planning.skus s ON s.account_id = st.account_id AND s.sku_id = st.sku_id
    JOIN planning.warehouses w ON w.account_id = st.account_id AND w.warehouse_id = st.warehouse_id
    WHERE st.account_id = $1 AND NOT st.deleted AND NOT w.deleted AND s.status <> 1 AND s.active_planning
    UNION ALL
    SELECT coalesce(s.${group}, ''), 0, CASE WHEN l.kind = 'po' THEN l.open_quantity ELSE 0 END, CASE WHEN l.kind = 'draft' THEN l.open_quantity ELSE 0 END
    FROM planning.purchase_order_lines l JOIN planning.skus s ON s.account_id = l.account_id AND s.sku_id = l.sku_id
    WHERE l.account_id = $1 AND l.kind <> 'cancelled' AND l.delivery_date BETWEEN '2026-03-01' AND '2026-05-31' AND s.status <> 1 AND s.active_planning
  ) x GROUP BY g ORDER BY g`;

async function itemFour() {
  const database = await createTestDatabase();
  const t = await createTestBus();
  const service = await startPlanningService({ databaseUrl: database.url, bus: t.bus, logger, internalToken, port: 0 });
  const client = createServiceClient(planningV1.PlanningService, service.url);
  const sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
  try {
    const account = randomUUID();
    const started = performance.now();
    await seedPlanning(sql, randomUUID(), 20_000, 10_000);
    await seedPlanning(sql, account, 100_000, 50_000);
    await sql.query("VACUUM ANALYZE planning.skus, planning.stock, planning.warehouses, planning.purchase_order_lines");
    const counts = (await sql.query("SELECT (SELECT count(*) FROM planning.stock WHERE account_id = $1) AS stock, (SELECT count(*) FROM planning.purchase_order_lines WHERE account_id = $1 AND kind <> 'cancelled') AS lines", [account])).rows[0];
    console.log(`seeded in ${((performance.now() - started) / 1000).toFixed(1)} s: 100,000 SKUs, 20 warehouses, ${counts.stock} stock rows, ${counts.lines} open/draft PO lines`);
    if (process.env.EXPLAIN) {
      const knex = createDb({ url: database.url, schema: "planning" });
      let text = "";
      let bindings: readonly unknown[] = [];
      knex.on("query", (q: { sql: string; bindings: readonly unknown[] }) => ((text = q.sql), (bindings = q.bindings)));
      const q = { groupBy: process.env.EXPLAIN as "seasons", fromDate: "2026-03-01", toDate: "2026-05-31", filters: volumeQueryOf({ fromDate: "2026-03-01", toDate: "2026-05-31" } as never).filters };
      await plannedVolumes(knex, account, q, false);
      await sql.query("SET search_path TO planning");
      const explained = await sql.query(`EXPLAIN (ANALYZE) ${text}`, bindings as unknown[]);
      console.log(explained.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n"));
      await sql.query("RESET search_path");
      console.log((await sql.query(`EXPLAIN (ANALYZE) ${reference("season")}`, [account])).rows.map((r) => r["QUERY PLAN"]).join("\n"));
      await knex.destroy();
    }
    const results = [];
    for (const [name, groupBy, column] of [
      ["seasons", planningV1.GroupBy.SEASONS, "season"],
      ["skus", planningV1.GroupBy.SKUS, "key"],
    ] as const) {
      const viaService = async () => {
        const t0 = performance.now();
        const res = await client.getPlannedVolumes({ query: { groupBy, fromDate: "2026-03-01", toDate: "2026-05-31" } }, as(account));
        return { ms: performance.now() - t0, rows: res.rows };
      };
      const direct = async () => {
        const t0 = performance.now();
        const res = await sql.query(reference(column), [account]);
        return { ms: performance.now() - t0, rows: res.rows };
      };
      const a = await viaService();
      const b = await direct();
      // Same answer both ways.
      const same =
        a.rows.length === b.rows.length &&
        a.rows.every((r, i) => r.groupKey === b.rows[i].g && String(r.stockVolume) === String(b.rows[i].stock) && String(r.poVolume) === String(b.rows[i].po) && String(r.draftPoVolume) === String(b.rows[i].draft));
      if (!same) throw new Error(`groupBy=${name}: the service and the reference disagree: ${JSON.stringify(a.rows.slice(0, 3), (_k, v) => (typeof v === "bigint" ? String(v) : v))} vs ${JSON.stringify(b.rows.slice(0, 3))}`);
      const svc: number[] = [];
      const ref: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        svc.push((await viaService()).ms);
        ref.push((await direct()).ms);
      }
      const ratio = +(median(svc) / median(ref)).toFixed(2);
      console.log(`groupBy=${name} (${a.rows.length} rows): service ${median(svc).toFixed(1)} ms, direct SQL ${median(ref).toFixed(1)} ms -> ratio ${ratio} (target <= 1.5)`);
      results.push({ groupBy: name, rows: a.rows.length, serviceMs: +median(svc).toFixed(1), directMs: +median(ref).toFixed(1), ratio });
    }
    return results;
  } finally {
    await sql.end();
    await service.close();
    await t.close();
    await database.drop();
  }
}

/** Publish -> visible in planned volumes, for stock and PO messages, on one bus. */
async function lag(kind: "jetstream" | "in-process") {
  const database = await createTestDatabase();
  const t = kind === "jetstream" ? await createTestBus() : undefined;
  const bus: Bus = t?.bus ?? new InProcessBus();
  const service = await startPlanningService({ databaseUrl: database.url, bus, logger, internalToken, port: 0 });
  const client = createServiceClient(planningV1.PlanningService, service.url);
  try {
    const account = randomUUID();
    const skuId = randomUUID();
    const warehouseId = randomUUID();
    await publishAll(bus, [
      message(topics.catalogueSkuUpdated, account, `sku:${skuId}`, { accountId: account, skuId, version: 1n, product: { id: skuId, key: "LAG", season: "S" } }),
      message(topics.inventoryWarehouseUpserted, account, `warehouse:${warehouseId}`, { accountId: account, warehouseId, version: 1n, externalId: "WH", name: "W" }),
    ]);
    const current = async () => {
      const res = await client.getPlannedVolumes({ query: { groupBy: planningV1.GroupBy.SKUS, fromDate: "2026-03-01", toDate: "2026-03-31", skuIds: [skuId] } }, as(account));
      return res.rows[0];
    };
    const waitFor = async (check: (row: planningV1.PlannedVolumeRow | undefined) => boolean, t0: number) => {
      for (;;) {
        if (check(await current())) return performance.now() - t0;
        if (performance.now() - t0 > 10_000) throw new Error("no effect within 10 s");
      }
    };
    const stock: number[] = [];
    const po: number[] = [];
    const orderId = randomUUID();
    for (let i = 1; i <= LAG_SAMPLES; i++) {
      let t0 = performance.now();
      await publishAll(bus, [
        message(topics.inventoryStockUpdated, account, `stock:${warehouseId}:${skuId}`, { accountId: account, warehouseId, skuId, version: BigInt(i), availableQuantity: i }),
      ]);
      stock.push(await waitFor((r) => Number(r?.stockVolume) === i, t0));
      t0 = performance.now();
      await publishAll(bus, [
        message(topics.ordersPurchaseOrderUpdated, account, `purchase_order:${orderId}`, {
          accountId: account,
          purchaseOrderId: orderId,
          version: BigInt(i),
          deliveryStatus: 5,
          updatedAt: timestampFromDate(new Date()),
          lines: [{ itemId: "1", skuId, externalWarehouseId: "WH", deliveryDate: "2026-03-10", quantity: i, openQuantity: i }],
        }),
      ]);
      po.push(await waitFor((r) => Number(r?.poVolume) === i, t0));
    }
    const f = (xs: number[]) => ({ p50: +pct(xs, 50).toFixed(1), p99: +pct(xs, 99).toFixed(1) });
    const result = { bus: kind, samples: LAG_SAMPLES, stockMs: f(stock), poMs: f(po) };
    console.log(`lag on ${kind}: stock p50 ${result.stockMs.p50} ms p99 ${result.stockMs.p99} ms; PO p50 ${result.poMs.p50} ms p99 ${result.poMs.p99} ms`);
    return result;
  } finally {
    await service.close();
    await t?.close();
    await database.drop();
  }
}

/** A new instance on an empty schema replays the whole stream until its replica is complete. */
async function rebuild() {
  const t = await createTestBus();
  const account = randomUUID();
  const warehouses = Array.from({ length: 20 }, (_, i) => ({ id: randomUUID(), ext: `WH${i}` }));
  const skuIds = Array.from({ length: REBUILD_SKUS }, () => randomUUID());
  const orders = Math.floor(REBUILD_SKUS / 10);
  const messages: BusMessage[] = [
    ...warehouses.map((w) => message(topics.inventoryWarehouseUpserted, account, `warehouse:${w.id}`, { accountId: account, warehouseId: w.id, version: 1n, externalId: w.ext, name: w.ext })),
    ...skuIds.map((id, i) => message(topics.catalogueSkuCreated, account, `sku:${id}`, { accountId: account, skuId: id, version: 1n, product: { id, key: `K-${i}`, season: `SS${i % 8}` } })),
    ...skuIds.map((id, i) => {
      const w = warehouses[i % 20];
      return message(topics.inventoryStockUpdated, account, `stock:${w.id}:${id}`, { accountId: account, warehouseId: w.id, skuId: id, version: 1n, availableQuantity: i % 50 });
    }),
    ...Array.from({ length: orders }, (_, o) => {
      const id = randomUUID();
      return message(topics.ordersPurchaseOrderCreated, account, `purchase_order:${id}`, {
        accountId: account,
        purchaseOrderId: id,
        version: 1n,
        deliveryStatus: 5,
        updatedAt: timestampFromDate(new Date()),
        lines: Array.from({ length: 5 }, (_, l) => ({ itemId: String(l), skuId: skuIds[(o * 5 + l) % REBUILD_SKUS], externalWarehouseId: warehouses[l].ext, deliveryDate: "2026-03-10", quantity: 3, openQuantity: 3 })),
      });
    }),
  ];
  const p0 = performance.now();
  await publishAll(t.bus, messages);
  console.log(`published ${messages.length} messages to JetStream in ${((performance.now() - p0) / 1000).toFixed(1)} s`);
  const database = await createTestDatabase();
  const sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
  try {
    const t0 = performance.now();
    const service = await startPlanningService({ databaseUrl: database.url, bus: t.bus, logger, internalToken, port: 0 });
    try {
      const expected = { skus: REBUILD_SKUS, stock: REBUILD_SKUS, lines: orders * 5 };
      for (;;) {
        const r = (
          await sql.query(
            "SELECT (SELECT count(*) FROM planning.skus)::int AS skus, (SELECT count(*) FROM planning.stock)::int AS stock, (SELECT count(*) FROM planning.purchase_order_lines)::int AS lines",
          )
        ).rows[0];
        if (r.skus === expected.skus && r.stock === expected.stock && r.lines === expected.lines) break;
        if (performance.now() - t0 > 600_000) throw new Error(`rebuild incomplete after 10 min: ${JSON.stringify(r)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const seconds = +((performance.now() - t0) / 1000).toFixed(1);
      console.log(`rebuild from the stream: ${messages.length} messages (${REBUILD_SKUS} SKUs) in ${seconds} s`);
      return { messages: messages.length, skus: REBUILD_SKUS, seconds };
    } finally {
      await service.close();
    }
  } finally {
    await sql.end();
    await database.drop();
    await t.close();
  }
}

async function main() {
  const only = process.argv.slice(2);
  const want = (name: string) => !only.length || only.includes(name);
  const out: Record<string, unknown> = {};
  if (want("volumes")) out.volumes = await itemFour();
  if (want("lag")) out.lag = [await lag("jetstream"), await lag("in-process")];
  if (want("rebuild")) out.rebuild = await rebuild();
  console.log(JSON.stringify({ planning: out }));
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
