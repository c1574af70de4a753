import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import pino from "pino";
import { ordersV1 } from "@analytics/contracts";
import { migrate } from "@analytics/db";
import type { ServiceContext } from "@analytics/rpc";
import { databaseForFile } from "@analytics/testing";
import { migrations } from "../src/migrations";
import { writePurchaseOrders } from "../src/purchase-orders";

const { WriteMode, PurchaseOrderSchema } = ordersV1;

/** A batch of 500 orders x 10 items is a fixed handful of statements, first written or re-sent. */
describe("purchase-order batch statements (real Postgres)", () => {
  const database = databaseForFile();
  const db = database.openDb("orders");
  let statements = 0;
  beforeAll(async () => {
    await migrate(db, "orders", migrations);
    db.on("query", () => void statements++);
  });

  const batch = (n: number, tag: string) =>
    Array.from({ length: n }, (_, i) =>
      create(PurchaseOrderSchema, {
        externalPoNo: `${tag}-${i}`,
        orderDate: timestampFromDate(new Date("2026-03-01T00:00:00Z")),
        deliveryStatus: i % 6,
        items: Array.from({ length: 10 }, (_, j) => ({
          externalRowId: String(j),
          key: `K${j}`,
          skuId: randomUUID(),
          quantity: 5 + j,
          totalPriceNet: { value: "10.50" },
          deliveries: [{ quantity: 1 }],
        })),
      }),
    );

  it("counts the same statements for 5 orders and for 500, and re-sending 500 writes nothing", async () => {
    const logged: { msg: string; orders: number; written: number; unchanged: number; ms: Record<string, number> }[] = [];
    const logger = pino({ level: "debug" }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    const ctx = { db, relay: { kick: () => undefined }, logger } as unknown as ServiceContext;
    const caller = { accountId: randomUUID(), apiKeyId: randomUUID() };
    const count = async (orders: ordersV1.PurchaseOrder[]) => {
      statements = 0;
      const outcomes = await writePurchaseOrders(ctx, caller, orders, WriteMode.UPSERT, false, false);
      return { statements, codes: [...new Set(outcomes.map((o) => `${o.statusCode} ${o.message}`))] };
    };
    const small = await count(batch(5, "S"));
    const big = batch(500, "B");
    const first = await count(big);
    const again = await count(big);
    expect(first).toEqual({ statements: small.statements, codes: ["201 created"] });
    // BEGIN, lock, existing, orders, items COPYed, outbox, COMMIT: written orders are not read
    // back, and new orders have no old items to delete.
    expect(first.statements).toBeLessThanOrEqual(7);
    expect(again.codes).toEqual(["200 unchanged"]);
    // Each batch logs its steps' times at debug (bench/po-batch.mjs --steps reads them).
    const batches = logged.filter((l) => l.msg === "purchase-order batch");
    expect(batches.map((b) => [b.orders, b.written, b.unchanged, Object.keys(b.ms)])).toEqual(
      [[5, 5, 0], [500, 500, 0], [500, 0, 500]].map((counts) => [...counts, ["checked", "classified", "written", "announced", "committed"]]),
    );
    expect(again.statements).toBeLessThan(first.statements);
    const [{ count: items }] = await db("purchase_order_items").where({ account_id: caller.accountId }).count({ count: "*" });
    expect(Number(items)).toBe(5050);
    const [{ count: messages }] = await db("outbox").where({ account_id: caller.accountId }).count({ count: "*" });
    expect(Number(messages)).toBe(505);
  });
});
