import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import pino from "pino";
import { ordersV1 } from "@analytics/contracts";
import { migrate } from "@analytics/db";
import { outboxMigrations } from "@analytics/outbox";
import type { ServiceContext } from "@analytics/rpc";
import { databaseForFile } from "@analytics/testing";
import { createOrders } from "../src/migrations/001_orders";
import { migrations } from "../src/migrations";
import { writePurchaseOrders } from "../src/purchase-orders";

/** A schema migrated by the first release (content as jsonb) upgrades to the content hash. */
describe("orders migrations (real Postgres)", () => {
  const database = databaseForFile();
  const db = database.openDb("orders");

  it("upgrades orders stored with content: the next re-send counts as a change once, then as unchanged", async () => {
    await migrate(db, "orders", [...outboxMigrations, createOrders]);
    const [account, key, id] = [randomUUID(), randomUUID(), randomUUID()];
    await db("purchase_orders").insert({ id, account_id: account, api_key_id: key, external_po_no: "OLD", content: {} });
    expect(await migrate(db, "orders", migrations)).toEqual(["002_distribution_orders", "003_transactions", "004_content_hash", "005_client_attributes", "006_item_sku_seq"]);
    const ctx = { db, relay: { kick: () => undefined }, logger: pino({ level: "silent" }) } as unknown as ServiceContext;
    const send = async () =>
      (await writePurchaseOrders(ctx, { accountId: account, apiKeyId: key }, [create(ordersV1.PurchaseOrderSchema, { externalPoNo: "OLD" })], ordersV1.WriteMode.UPSERT, false, false)).map(
        (o) => [o.statusCode, o.message],
      );
    expect(await send()).toEqual([[200, "updated"]]);
    expect(await send()).toEqual([[200, "unchanged"]]);
  });
});
