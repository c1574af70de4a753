import { randomUUID } from "node:crypto";
import { create, fromBinary } from "@bufbuild/protobuf";
import pino from "pino";
import { ordersMessagesV1, ordersV1, topics } from "@analytics/contracts";
import { migrate } from "@analytics/db";
import { outboxMigrations } from "@analytics/outbox";
import type { ServiceContext } from "@analytics/rpc";
import { databaseForFile } from "@analytics/testing";
import { createOrders } from "../src/migrations/001_orders";
import { migrations } from "../src/migrations";
import { writeDistributionOrders } from "../src/distribution-orders";
import { writePurchaseOrders } from "../src/purchase-orders";
import { writeTransactions } from "../src/transactions";

/** A schema migrated by the first release (content as jsonb) upgrades to the content hash. */
describe("orders migrations (real Postgres)", () => {
  const database = databaseForFile();
  const db = database.openDb("orders");

  it("upgrades orders stored with content: the next re-send counts as a change once, then as unchanged", async () => {
    await migrate(db, "orders", [...outboxMigrations, createOrders]);
    const [account, key, id] = [randomUUID(), randomUUID(), randomUUID()];
    await db("purchase_orders").insert({ id, account_id: account, api_key_id: key, external_po_no: "OLD", content: {} });
    expect(await migrate(db, "orders", migrations)).toEqual(["002_distribution_orders", "003_transactions", "004_content_hash", "005_client_attributes", "006_item_sku_seq", "007_announce_for_planning", "008_account_versions", "009_import_jobs", "010_import_job_columns"]);
    const ctx = { db, relay: { kick: () => undefined }, logger: pino({ level: "silent" }) } as unknown as ServiceContext;
    const send = async () =>
      (await writePurchaseOrders(ctx, { accountId: account, apiKeyId: key }, [create(ordersV1.PurchaseOrderSchema, { externalPoNo: "OLD" })], ordersV1.WriteMode.UPSERT, false, false)).map(
        (o) => [o.statusCode, o.message],
      );
    expect(await send()).toEqual([[200, "updated"]]);
    expect(await send()).toEqual([[200, "unchanged"]]);
  });

  it("007 re-announces every stored transaction and distribution order once, on the backfilled subjects, as stored", async () => {
    // A schema of the release before, with what its accounts wrote; the stream has forgotten its messages.
    const before = database.openDb("orders_before");
    await migrate(before, "orders_before", migrations.filter((m) => m.name < "007"));
    const ctx = { db: before, relay: { kick: () => undefined }, logger: pino({ level: "silent" }) } as unknown as ServiceContext;
    const [a, b] = [randomUUID(), randomUUID()];
    const sale = (ext: string) => create(ordersV1.TransactionSchema, { externalTransactionId: ext, channel: 1, type: 1, items: [{ externalItemId: "i1", key: "K1", quantity: 2 }] });
    await writeTransactions(ctx, a, [sale("T1"), sale("T2")], ordersV1.WriteMode.UPSERT);
    await writeTransactions(ctx, a, [create(ordersV1.TransactionSchema, { ...sale("T1"), market: "SE" })], ordersV1.WriteMode.UPSERT);
    await writeTransactions(ctx, b, [sale("T1")], ordersV1.WriteMode.UPSERT);
    await writeDistributionOrders(ctx, b, [create(ordersV1.DistributionOrderSchema, { externalDoid: "DO-1", externalRowId: "1", key: "K1", quantity: 5 })], ordersV1.WriteMode.UPSERT);
    await before("outbox").delete();

    expect(await migrate(before, "orders_before", migrations)).toEqual(["007_announce_for_planning", "008_account_versions", "009_import_jobs", "010_import_job_columns"]);
    const rows: { subject: string; account_id: string; aggregate: string; payload: Buffer }[] = await before("outbox").orderBy("seq");
    const announced = rows.map((r) =>
      r.subject === topics.ordersTransactionBackfilled.subject
        ? { ...fromBinary(ordersMessagesV1.TransactionChangedSchema, r.payload), kind: "transaction" }
        : { ...fromBinary(ordersMessagesV1.DistributionOrderChangedSchema, r.payload), kind: r.subject },
    );
    const stored = await before("transactions").select("id", "account_id", "version", "external_transaction_id");
    const storedDos = await before("distribution_orders").select("id", "account_id", "version");
    expect(rows.map((r) => r.subject).sort()).toEqual([...stored.map(() => topics.ordersTransactionBackfilled.subject), topics.ordersDistributionOrderBackfilled.subject].sort());
    for (const t of stored) {
      expect(announced).toContainEqual(
        expect.objectContaining({ accountId: t.account_id, transactionId: t.id, version: BigInt(t.version), transaction: expect.objectContaining({ externalTransactionId: t.external_transaction_id }) }),
      );
    }
    expect(announced).toContainEqual(expect.objectContaining({ accountId: b, distributionOrderId: storedDos[0].id, version: BigInt(storedDos[0].version), distributionOrder: expect.objectContaining({ externalDoid: "DO-1", quantity: 5 }) }));
    // The aggregate of a transaction's created and updated messages: ordered after them.
    expect(rows.filter((r) => r.subject === topics.ordersTransactionBackfilled.subject).map((r) => r.aggregate).sort()).toEqual(stored.map((t) => `transaction:${t.id}`).sort());
    // Once: the next start has nothing to run.
    expect(await migrate(before, "orders_before", migrations)).toEqual([]);
    expect(Number((await before("outbox").count({ n: "*" }))[0].n)).toBe(rows.length);
  });
});
