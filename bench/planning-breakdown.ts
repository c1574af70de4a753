// Issue 34 (planning, later revision), run by `node bench/planning-breakdown.mjs [seed-only]`
// (bundles this file with esbuild). Needs the local Postgres (TEST_DATABASE_URL); makes its own
// database and drops it (REUSE_DATABASE=name: makes and seeds that database once and keeps it).
// - One account at real size, seeded set-based straight into planning's tables: 100,000 SKUs
//   (8 seasons), 5 warehouses, stock of each SKU in 4 of them, PO and draft-PO lines across the
//   year, distribution orders, stock triggers, stored plans, SALES_LINES (3,000,000) sale lines
//   over the two years before today; a second, smaller account beside it. ANALYZE.
// - 12 monthly periods (5 past, the current, 6 ahead): the breakdown and sales plans by season and
//   the breakdown by warehouse by SKU, from the sales rollups (the service's functions) beside the
//   statement over the raw sale lines they replaced (the tests' oracle,
//   services/planning/test/oracle.ts), in the same run, interleaved; medians of ROUNDS; the first
//   pass compares both answers' figures. (The same aggregate written by hand,
//   bench/planning-breakdown-sql.ts, is still there for EXPLAIN.) NO_ORACLE=1: the service's side
//   alone, once (with ONLY=warehouse-skus: the first chunk and the whole answer by SKU).
//   SLICE_SKUS=n, SLICE_MAX_SKUS=m: a whole answer's first slice of n SKUs and its largest of m,
//   instead of the service's.
// - `upkeep`: the consumer's apply and the rollups' share of it, beside the least rollups at issue
//   46's grain would cost (UPKEEP_FLOOR). `answer-floor`: Postgres alone reading the by-warehouse
//   answer already computed (answerFloor).
import pg from "pg";
import type { Knex } from "knex";
import { randomUUID } from "node:crypto";
import pino from "pino";
import { InProcessBus } from "@analytics/bus";
import { createTestDatabase, testDatabaseUrl } from "@analytics/testing";
import { create } from "@bufbuild/protobuf";
import { planningV1 } from "@analytics/contracts";
import { createDb, type Db } from "@analytics/db";
import { startPlanningService } from "../services/planning/src/service";
import { breakdown, breakdownByWarehouse, salesPlans, SLICE_MAX_SKUS, SLICE_SKUS } from "../services/planning/src/breakdown";
import * as oracle from "../services/planning/test/oracle";
import { addToSalesRollups, breakdownStatement as rollupStatement, recomputeSalesRollups, nextSlice, type SalesLineFigures } from "../services/planning/src/repository";
import { applyDeliveries } from "../services/planning/src/replica";
import { fromBinary } from "@bufbuild/protobuf";
import { topics } from "@analytics/contracts";
import { transactionChanged } from "@analytics/testing";
import { periodsOf } from "../services/planning/src/periods";
import { breakdownQueryOf } from "../services/planning/src/validation";
import { to as copyTo } from "pg-copy-streams";
import { bindingsOf, byWarehouseSkusSql, paramsSql, seasonsSql, type BreakdownParams } from "./planning-breakdown-sql";

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const SALES_LINES = Number(process.env.SALES_LINES ?? 3_000_000);
const STATEMENT_TIMEOUT_MS = Number(process.env.STATEMENT_TIMEOUT_MS ?? 600_000);
const FIRST_SLICE_SKUS = Number(process.env.SLICE_SKUS ?? SLICE_SKUS);
const MAX_SLICE_SKUS = Number(process.env.SLICE_MAX_SKUS ?? SLICE_MAX_SKUS);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function seed(sql: pg.Client, account: string, skus: number, salesLines: number, timezone = "Europe/Stockholm", growth = "0.1") {
  const q = (text: string, values: unknown[] = []) => sql.query(text, [account, ...values]);
  await q(`INSERT INTO planning.accounts (account_id, version, timezone, sales_plan_growth, changed_at) VALUES ($1, 1, $2, $3, now())`, [timezone, growth]);
  await q(
    `INSERT INTO planning.skus (account_id, sku_id, version, key, sku, status, active_planning, season, product_group_id, variant_group_id, brand, color, size)
     SELECT $1, gen_random_uuid(), 1, 'K-' || g, 'S-' || g, 1 + g % 5, g % 17 <> 0, 'SS' || (g % 8), 'P-' || (g / 10), 'V-' || (g / 3), 'B' || (g % 30), 'C' || (g % 12), 'Z' || (g % 6)
     FROM generate_series(1, $2) g`,
    [skus],
  );
  await q(`INSERT INTO planning.warehouses (account_id, warehouse_id, version, external_id, name) SELECT $1, gen_random_uuid(), 1, 'WH' || g, 'Warehouse ' || g FROM generate_series(1, 5) g`);
  // Each SKU in 4 of the 5 warehouses; a few stock rows at 0, a few deleted.
  await q(
    `INSERT INTO planning.stock (account_id, sku_id, warehouse_id, version, available_quantity, deleted, changed_at)
     SELECT $1, s.sku_id, w.warehouse_id, 1, hashtext(s.key || w.external_id) & 7, hashtext(w.external_id || s.key) % 97 = 0, now()
     FROM planning.skus s JOIN planning.warehouses w ON w.account_id = s.account_id AND (substr(s.key, 3)::int + substr(w.external_id, 3)::int) % 5 <> 0
     WHERE s.account_id = $1`,
  );
  // Stock triggers: every third SKU in every warehouse; some without a min.
  await q(
    `INSERT INTO planning.stock_trigger_minimums (account_id, stock_trigger_id, version, sku_id, warehouse_id, min, changed_at)
     SELECT $1, row_number() OVER (), 1, s.sku_id, w.warehouse_id, CASE WHEN hashtext(s.key || w.external_id) % 11 = 0 THEN NULL ELSE 5 + abs(hashtext(s.key)) % 20 END, now()
     FROM planning.skus s JOIN planning.warehouses w ON w.account_id = s.account_id
     WHERE s.account_id = $1 AND substr(s.key, 3)::int % 3 = 0`,
  );
  // PO and draft-PO lines delivered from 6 months ago to a year ahead.
  await q(
    `INSERT INTO planning.purchase_order_lines (account_id, purchase_order_id, item_id, sku_id, external_warehouse_id, delivery_date, open_quantity, kind, changed_at)
     SELECT $1, gen_random_uuid(), 'i' || g, s.sku_id, CASE WHEN g % 10 = 0 THEN '' ELSE 'WH' || (1 + g % 5) END,
       current_date - 180 + (g * 37) % 545, 1 + g % 40, CASE WHEN g % 9 = 0 THEN 'draft' WHEN g % 23 = 0 THEN 'cancelled' ELSE 'po' END, now()
     FROM generate_series(1, $2) g JOIN planning.skus s ON s.account_id = $1 AND s.key = 'K-' || (1 + (g * 7919) % $3)`,
    [skus / 2, skus],
  );
  // Distribution orders between two warehouses, due from 3 months ago to 10 months ahead; a
  // seventh closed (nothing open).
  await q(
    `INSERT INTO planning.distribution_orders (account_id, distribution_order_id, version, key, sku, from_external_warehouse_id, to_external_warehouse_id, delivered_at, open_quantity, changed_at)
     SELECT $1, gen_random_uuid(), 1, 'K-' || (1 + (g * 104729) % $3), NULL, 'WH' || (1 + g % 5), 'WH' || (1 + (g % 5 + 1 + g % 4) % 5),
       now() + ((g % 400) - 100) * interval '1 day', g % 7 * 3, now()
     FROM generate_series(1, $2) g`,
    [skus / 5, skus],
  );
  // Stored plans: every twentieth SKU (all active), D2C, every month from 6 months ago to a year ahead; some removed.
  await q(
    `INSERT INTO planning.sales_plans (account_id, sku_id, channel, month, volume, updated_at)
     SELECT $1, s.sku_id, 1, m::date, CASE WHEN substr(s.key, 3)::int % 200 = 1 THEN NULL ELSE abs(hashtext(s.key || m::text)) % 30 + 0.5 END, now()
     FROM planning.skus s CROSS JOIN generate_series(date_trunc('month', current_date) - interval '6 months', date_trunc('month', current_date) + interval '12 months', interval '1 month') m
     WHERE s.account_id = $1 AND substr(s.key, 3)::int % 20 = 1`,
  );
  // Sale lines over the two years before now: three lines a transaction, popular SKUs sell more,
  // a quarter B2B, one in twenty a return, four in five shipped from a warehouse.
  await q(
    `INSERT INTO planning.sales_lines (account_id, transaction_id, external_item_id, external_warehouse_id, key, sku, ean, channel, sold_at, units, changed_at)
     SELECT $1, md5($1::uuid::text || (g / 3))::uuid, (g % 3)::text, CASE WHEN g % 10 < 8 THEN 'WH' || (1 + (g / 7) % 5) ELSE '' END,
       'K-' || (1 + floor($3 * power(((g::bigint * 7919) % 1000003) / 1000003.0, 2)))::int, NULL, NULL,
       CASE WHEN g % 4 = 0 THEN 2 ELSE 1 END, t, CASE WHEN g % 20 = 0 THEN -1 ELSE 1 + g % 3 END, t
     FROM generate_series(1, $2) g
     CROSS JOIN LATERAL (SELECT now() - ((g::bigint * 104729) % (730 * 86400)) * interval '1 second' AS t) x`,
    [salesLines, skus],
  );
}

export async function seedAll(sql: pg.Client, url: string): Promise<string> {
  const account = randomUUID();
  const t0 = performance.now();
  await seed(sql, randomUUID(), 20_000, Math.round(SALES_LINES / 10), "UTC", "0");
  await seed(sql, account, 100_000, SALES_LINES);
  // The lines went straight into sales_lines: their rollups are filled as a rebuild fills them.
  const accounts = (await sql.query("SELECT array_agg(account_id) AS a FROM planning.accounts")).rows[0].a;
  const db = createDb({ url, schema: "planning", statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  await db.transaction((tx) => recomputeSalesRollups(tx, accounts)).finally(() => db.destroy());
  await sql.query(
    "VACUUM ANALYZE planning.sales_days, planning.sales_months, planning.sku_months, planning.group_months, planning.group_stock, planning.group_po_months, planning.accounts, planning.skus, planning.warehouses, planning.stock, planning.stock_trigger_minimums, planning.purchase_order_lines, planning.distribution_orders, planning.sales_plans, planning.sales_lines",
  );
  const counts = (
    await sql.query(
      `SELECT (SELECT count(*) FROM planning.stock WHERE account_id = $1) AS stock, (SELECT count(*) FROM planning.purchase_order_lines WHERE account_id = $1) AS po_lines,
         (SELECT count(*) FROM planning.distribution_orders WHERE account_id = $1) AS distribution_orders, (SELECT count(*) FROM planning.stock_trigger_minimums WHERE account_id = $1) AS triggers,
         (SELECT count(*) FROM planning.sales_plans WHERE account_id = $1) AS plans, (SELECT count(*) FROM planning.sales_lines WHERE account_id = $1) AS sales_lines`,
      [account],
    )
  ).rows[0];
  console.log(`seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s: 100,000 SKUs, 5 warehouses, ${JSON.stringify(counts)} (and an account of 20,000 SKUs beside it)`);
  return account;
}

/** The window: 12 months, the current one sixth. */
export async function windowOf(sql: pg.Client, account: string): Promise<{ fromDate: string; toDate: string }> {
  const tz = (await sql.query("SELECT timezone FROM planning.accounts WHERE account_id = $1", [account])).rows[0].timezone;
  const r = (
    await sql.query(
      `SELECT (date_trunc('month', (now() AT TIME ZONE $1)::date) - interval '5 months')::date::text AS from_date,
         (date_trunc('month', (now() AT TIME ZONE $1)::date) + interval '7 months' - interval '1 day')::date::text AS to_date`,
      [tz],
    )
  ).rows[0];
  return { fromDate: r.from_date, toDate: r.to_date };
}

/** The hand-written breakdown, run as psql would: its parameters, then the statement's rows through COPY. */
export async function byHand(sql: pg.Client, account: string, window: { fromDate: string; toDate: string }, which: "seasons" | "warehouse-skus", keep?: (line: string) => boolean) {
  const t0 = performance.now();
  // The service's work_mem (services/planning/src/breakdown.ts), for a fair comparison.
  await sql.query("SET search_path TO planning; SET work_mem = '64MB'");
  const p: BreakdownParams = (await sql.query(paramsSql, [account, window.fromDate, window.toDate])).rows[0];
  const text = which === "seasons" ? seasonsSql() : byWarehouseSkusSql();
  const bindings = bindingsOf(account, p, window.fromDate, which);
  // COPY takes no bindings: inline them as literals.
  const literal = (v: unknown) => (Array.isArray(v) ? `'{${v.join(",")}}'` : `'${String(v).replace(/'/g, "''")}'`);
  const inlined = text.replace(/\$(\d+)/g, (_m, i) => literal(bindings[Number(i) - 1]));
  const stream = sql.query(copyTo(`COPY (${inlined}) TO STDOUT`));
  let lines = 0;
  let rest = "";
  const out: string[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const s = rest + chunk.toString();
    let from = 0;
    for (let i = s.indexOf("\n"); i >= 0; from = i + 1, i = s.indexOf("\n", from)) {
      lines++;
      if (keep) {
        const line = s.slice(from, i);
        if (keep(line)) out.push(line);
      }
    }
    rest = s.slice(from);
  }
  await sql.query("RESET search_path; RESET work_mem");
  return { ms: performance.now() - t0, lines, text: out.join("\n"), params: p };
}

const internalToken = "b".repeat(40);
const WHICH = { seasons: planningV1.GroupBy.SEASONS, "brand-seasons": planningV1.GroupBy.SEASONS, "plans-seasons": planningV1.GroupBy.SEASONS, "warehouse-skus": planningV1.GroupBy.SKUS } as const;
/** brand-seasons: the breakdown by season of one brand's SKUs (the seed's brands are B0..B29). */
const brandsOf = (which: Which) => (which === "brand-seasons" ? ["b7"] : []);
type Which = keyof typeof WHICH;
/** A row of either side, by its key and period: the period's figures as JSON. */
type Cells = Map<string, string>;
/** The rows the comparison keeps of by warehouse by SKU (all of them by season): one SKU in 50. */
const kept = (which: Which, groupKey: string) => which !== "warehouse-skus" || Number(groupKey.slice(2)) % 50 === 7;

/** Which statement answers: the rollups' (the service's functions) or the oracle's (the raw sale lines). */
type Side = "rollups" | "oracle";

/** An answer's chunks, as its handler reads them. */
function answerOf(side: Side, db: Db, account: string, which: Which, q: ReturnType<typeof breakdownQueryOf>, options: { timeoutMs: number; sliceSkus?: number; maxSliceSkus?: number }) {
  const fns = side === "rollups" ? { breakdown, breakdownByWarehouse, salesPlans } : oracle;
  if (which === "seasons" || which === "brand-seasons") return fns.breakdown(db, account, q, options) as AsyncGenerator<{ groupKey: string; periods: object[] }[]>;
  if (which === "plans-seasons") return fns.salesPlans(db, account, q, options) as AsyncGenerator<{ groupKey: string; periods: object[] }[]>;
  return fns.breakdownByWarehouse(db, account, q, options) as AsyncGenerator<{ groupKey: string; periods: object[] }[]>;
}

/**
 * One side's answer (services/planning/src/breakdown.ts, or the oracle) consumed fully, as its
 * handler does: its chunks counted, the time to the first chunk, rows of `keep` kept as Cells, and
 * the process's peak RSS sampled.
 */
async function viaService(db: Db, account: string, window: { fromDate: string; toDate: string }, which: Which, keep?: Cells, seasons: string[] = [], side: Side = "rollups") {
  const q = breakdownQueryOf(create(planningV1.BreakdownQuerySchema, { volumes: { groupBy: WHICH[which], fromDate: window.fromDate, toDate: window.toDate, seasons, brands: brandsOf(which) }, period: planningV1.Period.MONTH }));
  (globalThis as { gc?: () => void }).gc?.();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const t0 = performance.now();
  let firstMs = 0;
  let rows = 0;
  let periods = 0;
  // The statement's own limit (PLANNING_QUERY_TIMEOUT_MS) lifted like the pool's, to measure past it.
  for await (const chunk of answerOf(side, db, account, which, q, { timeoutMs: STATEMENT_TIMEOUT_MS, sliceSkus: FIRST_SLICE_SKUS, maxSliceSkus: MAX_SLICE_SKUS })) {
    firstMs ||= performance.now() - t0;
    peak = Math.max(peak, process.memoryUsage().rss);
    for (const r of chunk) {
      rows++;
      periods += r.periods.length;
      if (!keep || !kept(which, r.groupKey)) continue;
      const sub = "warehouseId" in r ? (r as { warehouseId: string }).warehouseId : "channel" in r ? String((r as { channel: number }).channel) : "";
      for (const p of r.periods) keep.set(`${r.groupKey}|${sub}|${(p as { periodStart: string }).periodStart}`, JSON.stringify(p));
    }
  }
  const ms = performance.now() - t0;
  clearInterval(sampler);
  return { ms, firstMs, rows, periods, rssBeforeMiB: Math.round(rss0 / 2 ** 20), rssPeakGrowthMiB: Math.round((peak - rss0) / 2 ** 20) };
}

/** The keys on which two sides' kept rows differ (a sample) and how many. */
function differences(a: Cells, b: Cells) {
  const out: string[] = [];
  let count = 0;
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    if (a.get(key) === b.get(key)) continue;
    count++;
    if (out.length < 5) out.push(`${key}: rollups ${a.get(key) ?? "none"}, oracle ${b.get(key) ?? "none"}`);
  }
  return { rowsCompared: a.size, count, sample: out };
}

/**
 * The least any rollups at issue 46's grain cost a batch: the sales per month, item and channel
 * (sales_months, without the warehouse the issue adds: fewer rows) and the per-SKU cells of actual
 * units (sku_months, without the warehouse, last year's baseline, plans, PO or distribution
 * orders), each one upsert in key order from the batch's lines grouped in the statement (months
 * in the bench account's timezone), SKUs found by key, sku or EAN through their indexes. Our
 * upkeep (addToSalesRollups) does this and more: sales_days, the cells a year later, the group
 * months.
 */
const UPKEEP_FLOOR = `WITH l AS (SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, key text, sku text, ean text, channel int, sold_at timestamptz, units int, sign int)),
  md AS (
    SELECT account_id, date_trunc('month', sold_at AT TIME ZONE 'Europe/Stockholm')::date AS month,
      (CASE WHEN key IS NOT NULL THEN 1 WHEN sku IS NOT NULL THEN 2 ELSE 3 END)::smallint AS ref_kind, coalesce(key, sku, ean) AS ref,
      (CASE WHEN channel = 2 THEN 2 ELSE 1 END)::smallint AS channel, sum(sign * units) AS units, sum(sign) AS lines
    FROM l WHERE coalesce(key, sku, ean) IS NOT NULL GROUP BY 1, 2, 3, 4, 5 HAVING sum(sign * units) <> 0 OR sum(sign) <> 0),
  m AS (
    INSERT INTO sales_months AS m (account_id, month, ref_kind, ref, channel, units, lines) SELECT * FROM md ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (account_id, month, ref_kind, ref, channel) DO UPDATE SET units = m.units + excluded.units, lines = m.lines + excluded.lines)
  INSERT INTO sku_months AS c (account_id, month, sku_id, channel, units, lines, ly_units, ly_lines)
  SELECT account_id, month, sku_id, channel, sum(units), sum(lines), 0, 0 FROM (
    ${[[1, "key"], [2, "sku"], [3, "ean"]].map(([kind, column]) => `SELECT x.account_id, x.month, s.sku_id, x.channel, x.units, x.lines FROM md x JOIN skus s ON s.account_id = x.account_id AND s.${column} = x.ref WHERE x.ref_kind = ${kind}`).join(" UNION ALL ")}
  ) k GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (account_id, month, sku_id, channel) DO UPDATE SET units = c.units + excluded.units, lines = c.lines + excluded.lines`;

/**
 * The consumer's apply with the rollups' upkeep (`upkeep`), on the seeded account (its SKUs
 * exist, so the per-SKU cells move too): BATCHES batches of 500 transactions of 2 lines, every
 * second one replacing the one before (the rollups take the old lines off). Each pair is applied
 * in one transaction rolled back at the end, so the seeded account is left as it was. Before each
 * apply, the upkeep alone (addToSalesRollups of the lines it will store, read from a dry run, and
 * of the lines it replaces) is timed in a savepoint rolled back, on the data the apply then meets:
 * timed after the apply, every rollup row would already exist, and the share came out at half.
 */
async function upkeep(db: Db, account: string) {
  const batches = Number(process.env.BATCHES ?? 20);
  const applyMs: number[] = [];
  const upkeepMs: number[] = [];
  const floorMs: number[] = [];
  let lines = 0;
  const deliveriesOf = (ids: string[], n: number, version: number) =>
    ids.map((id, i) => {
      const day = new Date(Date.now() - ((i * 7919 + n) % 700) * 86_400_000).toISOString();
      const items = [0, 1].map((k) => ({ key: `K-${1 + ((i * 31 + k * 17 + n) % 100_000)}`, quantity: 3 + k, externalItemId: `i${k}`, shipments: [{ quantity: 1 + k, warehouse: `WH${1 + ((i + k) % 5)}` }] }));
      const m = transactionChanged(account, id, version, { channel: 1 + (i % 2), createdDate: day, items });
      return { id: m.id, subject: m.subject, accountId: account, occurredAt: m.occurredAt, topic: topics.ordersTransactionCreated, message: fromBinary(topics.ordersTransactionCreated.schema, m.payload) };
    });
  /** `work` in a savepoint of `tx`, rolled back: what it answers. */
  const rolledBack = async <T>(tx: Knex, work: (savepoint: Knex.Transaction) => Promise<T>): Promise<T> => {
    const savepoint = await tx.transaction();
    try {
      return await work(savepoint);
    } finally {
      await savepoint.rollback();
    }
  };
  const storedLines = async (tx: Knex.Transaction, ids: string[]): Promise<SalesLineFigures[]> =>
    (await tx.raw("SELECT account_id, key, sku, ean, channel, external_warehouse_id, sold_at::text AS sold_at, units FROM sales_lines WHERE account_id = ? AND transaction_id = ANY(?::uuid[])", [account, ids])).rows;
  for (let n = 0; n < batches; n += 2) {
    const ids = Array.from({ length: 500 }, () => randomUUID());
    await rolledBack(db, async (tx) => {
      let replaced: SalesLineFigures[] = [];
      for (const version of [1, 2]) {
        const deliveries = deliveriesOf(ids, n + version - 1, version);
        // The lines this apply stores, from a dry run; then their upkeep alone, on the same data
        // the apply meets (new rollup rows are inserts there, as in the apply), then the apply.
        const stored = await rolledBack(tx, async (dry) => (await applyDeliveries(dry, deliveries), storedLines(dry, ids)));
        const figures = [...stored.map((l) => ({ ...l, sign: 1 as const })), ...replaced.map((l) => ({ ...l, sign: -1 as const }))];
        const t1 = performance.now();
        await rolledBack(tx, (savepoint) => addToSalesRollups(savepoint, figures));
        upkeepMs.push(performance.now() - t1);
        const t2 = performance.now();
        await rolledBack(tx, (savepoint) => savepoint.raw(UPKEEP_FLOOR, [JSON.stringify(figures)]));
        floorMs.push(performance.now() - t2);
        const t0 = performance.now();
        await applyDeliveries(tx, deliveries);
        applyMs.push(performance.now() - t0);
        lines += stored.length;
        replaced = stored;
      }
    });
  }
  const total = applyMs.reduce((x, y) => x + y, 0);
  const upkept = upkeepMs.reduce((x, y) => x + y, 0);
  const floor = floorMs.reduce((x, y) => x + y, 0);
  const rest = total - upkept;
  const result = {
    batches,
    saleLines: lines,
    applyMs: Math.round(total),
    linesPerSecond: Math.round(lines / (total / 1000)),
    upkeepMs: Math.round(upkept),
    upkeepShareOfApply: +(upkept / total).toFixed(3),
    upkeepOverRest: +(upkept / rest).toFixed(3),
    // The least the issue's rollups could cost (UPKEEP_FLOOR), on the apply without our upkeep.
    floorMs: Math.round(floor),
    floorOverRest: +(floor / rest).toFixed(3),
    linesPerSecondAtFloor: Math.round(lines / ((rest + floor) / 1000)),
    linesPerSecondWithoutUpkeep: Math.round(lines / (rest / 1000)),
  };
  console.log(JSON.stringify({ planningRollupUpkeep: result }));
}

/**
 * The least Postgres alone spends on the by-warehouse answer by SKU (`answer-floor`): a table
 * holding that answer already computed, one row per SKU, warehouse and period (74,695 groups x 5
 * warehouses x 12 periods = 4,481,700 row-periods, the seeded answer's 4,481,688) with its state
 * and ten figures, read whole through COPY TO STDOUT (the rows as text, no join, no sum, no window), the
 * client only counting bytes; the figures as numeric (how planning keeps them) and as bigint
 * thousandths, and folded into one text per answer row as answerStatement folds them. Medians of 3.
 */
async function answerFloor(sql: pg.Client) {
  const figures = ["plan", "actual", "po", "draft", "tin", "tout", "opening", "closing", "target", "otb"];
  await sql.query(`DROP TABLE IF EXISTS public.answer_floor;
    CREATE TABLE public.answer_floor AS
      SELECT md5(s::text) AS g, '00000000-0000-4000-8000-' || lpad(w::text, 12, '0') AS wid, 'Warehouse ' || w AS wname, idx,
        CASE WHEN idx < 5 THEN 'past' WHEN idx = 5 THEN 'current' ELSE 'future' END AS state,
        ${figures.map((f) => `round((random() * 500)::numeric, 3) AS ${f}`).join(", ")}
      FROM generate_series(1, 74695) s, generate_series(1, 5) w, generate_series(0, 11) idx;
    ALTER TABLE public.answer_floor ${figures.map((f) => `ADD COLUMN ${f}_m bigint`).join(", ")};
    UPDATE public.answer_floor SET ${figures.map((f) => `${f}_m = (${f} * 1000)::bigint`).join(", ")}`);
  await sql.query("VACUUM FULL ANALYZE public.answer_floor");
  const variants = {
    "numeric, a row per period": `SELECT g, wid, wname, idx, state, ${figures.join(", ")} FROM public.answer_floor`,
    "bigint thousandths, a row per period": `SELECT g, wid, wname, idx, state, ${figures.map((f) => `${f}_m`).join(", ")} FROM public.answer_floor`,
    "numeric, folded per answer row": `SELECT g, wid, wname, string_agg(concat(idx, ',', state, ',', ${figures.join(", ',', ")}), ';' ORDER BY idx) FROM public.answer_floor GROUP BY g, wid, wname`,
  };
  const results: Record<string, unknown> = {};
  for (const [label, query] of Object.entries(variants)) {
    const runs: number[] = [];
    let bytes = 0;
    for (let round = 0; round < 3; round++) {
      const t0 = performance.now();
      bytes = 0;
      for await (const chunk of sql.query(copyTo(`COPY (${query}) TO STDOUT`)) as AsyncIterable<Buffer>) bytes += chunk.length;
      runs.push(performance.now() - t0);
    }
    const ms = median(runs);
    results[label] = { ms: Math.round(ms), rowPeriodsPerSecond: Math.round(4_481_700 / (ms / 1000)), megabytes: +(bytes / 1e6).toFixed(1) };
    console.log(`${label}: ${(ms / 1000).toFixed(2)} s (${runs.map((r) => (r / 1000).toFixed(2)).join(", ")}), ${(bytes / 1e6).toFixed(0)} MB of text`);
  }
  await sql.query("DROP TABLE public.answer_floor");
  console.log(JSON.stringify({ planningAnswerFloor: results }));
}

/** A fresh test database, or REUSE_DATABASE (made and seeded once, kept: for working on the SQL). */
async function databaseOf(): Promise<{ url: string; drop(): Promise<void>; reused: boolean }> {
  const name = process.env.REUSE_DATABASE;
  if (!name) return { ...(await createTestDatabase()), reused: false };
  const admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  if (!(await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount) await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: async () => undefined, reused: true };
}

/** A whole answer's first slice, as the service finds it. */
async function firstSliceEnd(url: string, account: string, q: ReturnType<typeof breakdownQueryOf>) {
  const db = createDb({ url, schema: "planning" });
  try {
    return await db.transaction((tx) => nextSlice(tx, account, q, undefined, FIRST_SLICE_SKUS));
  } finally {
    await db.destroy();
  }
}

async function main() {
  const only = process.argv.slice(2);
  const database = await databaseOf();
  // The planning service makes its schema (and answers the service's side).
  const service = await startPlanningService({ databaseUrl: database.url, bus: new InProcessBus(), logger: pino({ level: "silent" }), internalToken, port: 0 });
  const sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
  try {
    const seeded = database.reused && (await sql.query("SELECT account_id FROM planning.accounts WHERE timezone = 'Europe/Stockholm'")).rows[0]?.account_id;
    // SMALL=1: the 20,000-SKU account beside it (for quick EXPLAINs).
    const small = process.env.SMALL && (await sql.query("SELECT account_id FROM planning.accounts WHERE timezone = 'UTC'")).rows[0]?.account_id;
    const account: string = small || seeded || (await seedAll(sql, database.url));
    const window = await windowOf(sql, account);
    console.log(`window ${window.fromDate} .. ${window.toDate}`);
    if (only.includes("seed-only")) return;
    if (only.includes("answer-floor")) return await answerFloor(sql);
    if (only.includes("upkeep")) {
      const upkeepDb = createDb({ url: database.url, schema: "planning", statementTimeoutMs: STATEMENT_TIMEOUT_MS });
      await upkeep(upkeepDb, account).finally(() => upkeepDb.destroy());
      return;
    }
    if (process.env.EXPLAIN?.startsWith("service-") || process.env.EXPLAIN?.startsWith("oracle-")) {
      // The service's statement (or the oracle's), explained the way its cursor runs it.
      const which = process.env.EXPLAIN.slice(process.env.EXPLAIN.indexOf("-") + 1) as Which;
      const breakdownStatement = process.env.EXPLAIN.startsWith("oracle-") ? oracle.breakdownStatement : rollupStatement;
      const q = breakdownQueryOf(create(planningV1.BreakdownQuerySchema, { volumes: { groupBy: WHICH[which], fromDate: window.fromDate, toDate: window.toDate }, period: planningV1.Period.MONTH }));
      const a = (await sql.query(paramsSql, [account, window.fromDate, window.toDate]).catch(async () => (await sql.query("SET search_path TO planning"), sql.query(paramsSql, [account, window.fromDate, window.toDate])))).rows[0];
      const account_ = { tz: a.tz, growth: a.growth, today: a.today };
      // By SKU the service reads slices (breakdown.ts answerRows): the first one, unless EXPLAIN_WHOLE.
      const sliced = which !== "seasons" && breakdownStatement === rollupStatement && !process.env.EXPLAIN_WHOLE;
      await sql.query("SET search_path TO planning");
      const firstSlice = sliced ? await firstSliceEnd(database.url, account, q) : undefined;
      const st = breakdownStatement(account, q, which === "seasons" ? "groups" : "warehouses", account_, periodsOf("month", window.fromDate, window.toDate, a.today), ...(firstSlice ? [firstSlice] : []));
      let i = 0;
      const text = st.sql.replace(/\?/g, () => `$${++i}`);
      await sql.query(`SET enable_nestloop = off; SET jit = off; SET work_mem = '64MB'; ${process.env.EXPLAIN_SET ?? ""}`);
      const e = await sql.query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, st.bindings as unknown[]);
      console.log(e.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n"));
      return;
    }
    if (process.env.EXPLAIN) {
      const p = (await sql.query("SET search_path TO planning").then(() => sql.query(paramsSql, [account, window.fromDate, window.toDate]))).rows[0];
      const text = process.env.EXPLAIN === "seasons" ? seasonsSql() : byWarehouseSkusSql();
      const e = await sql.query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, bindingsOf(account, p, window.fromDate, process.env.EXPLAIN === "seasons" ? "seasons" : "warehouse-skus"));
      console.log(e.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n"));
      await sql.query("RESET search_path");
    }
    // The service's own pool runs with DB_DEFAULTS' 15 s statement timeout; the bench lifts it to measure past it.
    const db = createDb({ url: database.url, schema: "planning", statementTimeoutMs: STATEMENT_TIMEOUT_MS });
    const results: Record<string, unknown>[] = [];
    try {
      for (const which of (["seasons", "brand-seasons", "plans-seasons", "warehouse-skus"] as const).filter((w) => !process.env.ONLY || process.env.ONLY.split(",").includes(w))) {
        // Same answer both ways (by warehouse by SKU: the rows of one SKU in 50, every field).
        const fromRollups: Cells = new Map();
        const first = await viaService(db, account, window, which, fromRollups);
        if (process.env.NO_ORACLE) {
          // The service's side alone, once (the oracle takes a minute by SKU).
          console.log(`${which}: rollups ${first.rows} rows / ${first.periods} periods in ${first.ms.toFixed(0)} ms (first chunk ${first.firstMs.toFixed(0)} ms, ${Math.round(first.periods / (first.ms / 1000))} row-periods/s; RSS ${first.rssBeforeMiB} MiB + peak ${first.rssPeakGrowthMiB} MiB)`);
          continue;
        }
        const fromOracle: Cells = new Map();
        const firstOracle = await viaService(db, account, window, which, fromOracle, [], "oracle");
        const diff = differences(fromRollups, fromOracle);
        console.log(
          `${which}: rollups ${first.rows} rows / ${first.periods} periods in ${first.ms.toFixed(0)} ms (first chunk ${first.firstMs.toFixed(0)} ms; RSS ${first.rssBeforeMiB} MiB + peak ${first.rssPeakGrowthMiB} MiB), oracle ${firstOracle.ms.toFixed(0)} ms; compared ${diff.rowsCompared} row-periods: ${diff.count} differences ${JSON.stringify(diff.sample, null, 1)}`,
        );
        // ROUNDS=0: the comparison pass's times are the figures (a slow machine).
        const svc: number[] = ROUNDS ? [] : [first.ms];
        const firsts: number[] = ROUNDS ? [] : [first.firstMs];
        const ref: number[] = ROUNDS ? [] : [firstOracle.ms];
        let memory = first;
        for (let r = 0; r < ROUNDS; r++) {
          const m = await viaService(db, account, window, which);
          svc.push(m.ms);
          firsts.push(m.firstMs);
          memory = m;
          ref.push((await viaService(db, account, window, which, undefined, [], "oracle")).ms);
          console.log(`  round ${r + 1}: rollups ${m.ms.toFixed(0)} ms (first chunk ${m.firstMs.toFixed(0)} ms), oracle ${ref[r].toFixed(0)} ms`);
        }
        const perSecond = Math.round(first.periods / (median(svc) / 1000));
        console.log(
          `${which}: rollups ${median(svc).toFixed(0)} ms (${svc.map((x) => x.toFixed(0)).join(", ")}), first chunk ${median(firsts).toFixed(0)} ms, ${perSecond} row-periods/s; oracle ${median(ref).toFixed(0)} ms (${ref.map((x) => x.toFixed(0)).join(", ")}); RSS ${memory!.rssBeforeMiB} MiB + peak ${memory!.rssPeakGrowthMiB} MiB`,
        );
        results.push({ which, rows: first.rows, periods: first.periods, rollupsMs: Math.round(median(svc)), firstChunkMs: Math.round(median(firsts)), rowPeriodsPerSecond: perSecond, oracleMs: Math.round(median(ref)), differences: diff.count, rssPeakGrowthMiB: memory!.rssPeakGrowthMiB });
      }
      if (process.env.ONLY && !process.env.ONLY.split(",").includes("warehouse-skus")) return;
      // Streaming: the peak RSS growth of by warehouse by SKU for one season (an eighth of the
      // answer) against the whole answer.
      const eighth = await viaService(db, account, window, "warehouse-skus", undefined, ["SS3"]);
      const whole = ROUNDS ? await viaService(db, account, window, "warehouse-skus") : (results.at(-1) as { periods: number; rssPeakGrowthMiB: number });
      console.log(`by warehouse by SKU, peak RSS growth: one season ${eighth.periods} row-periods +${eighth.rssPeakGrowthMiB} MiB, all ${whole.periods} row-periods +${whole.rssPeakGrowthMiB} MiB`);
      results.push({ streaming: { oneSeason: { periods: eighth.periods, rssPeakGrowthMiB: eighth.rssPeakGrowthMiB }, all: { periods: whole.periods, rssPeakGrowthMiB: whole.rssPeakGrowthMiB } } });
      console.log(JSON.stringify({ planningBreakdown: results }));
    } finally {
      await db.destroy();
    }
  } finally {
    await sql.end();
    await service.close();
    await database.drop();
  }
}

if (require.main === module)
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
