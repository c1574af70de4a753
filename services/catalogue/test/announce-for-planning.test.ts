import { randomUUID } from "node:crypto";
import { clone, create, fromBinary, toJson } from "@bufbuild/protobuf";
import pino from "pino";
import { catalogueMessagesV1, catalogueV1, topics } from "@analytics/contracts";
import { migrate } from "@analytics/db";
import type { ServiceContext } from "@analytics/rpc";
import { eventually, serviceUnderTest } from "@analytics/testing";
import { announceStoredProducts } from "../src/changes";
import { migrations } from "../src/migrations";
import { upsertProducts } from "../src/products";
import { startCatalogueService } from "../src/service";

const { CatalogueService, ProductSchema } = catalogueV1;

/**
 * Planning's backfill of EANs (catalogue migration 005): every stored product, of every account,
 * re-announced once on analytics.catalogue.sku.backfilled, as GET answers it, with its version,
 * page by page, through the real relay and bus.
 */
describe("catalogue service: re-announcing stored products for planning (real Postgres and JetStream)", () => {
  const catalogue = serviceUnderTest(CatalogueService, startCatalogueService, { schema: "catalogue", probe: [topics.catalogueSkuBackfilled.subject] });
  const { client, as, published, db } = catalogue;

  it("every product of every account, in pages smaller than an account, as stored and with its version", async () => {
    const accounts = [randomUUID(), randomUUID()];
    for (const account of accounts) {
      await client.upsertProducts({ products: ["K1", "K2", "K3"].map((key, i) => ({ key, sku: `S-${key}`, ean: `E-${key}`, size: String(i) })) }, as(account));
      await client.updateProducts({ products: [{ key: "K2", color: "red" }] }, as(account));
    }
    expect(await announceStoredProducts(db, 2)).toBe(6);
    const messages = await eventually(async () => (published.length === 6 ? published : undefined));
    for (const account of accounts) {
      const announced = messages
        .filter((m) => m.accountId === account)
        .map((m) => fromBinary(catalogueMessagesV1.SkuChangedSchema, m.payload))
        .sort((x, y) => x.product!.key.localeCompare(y.product!.key));
      const stored = (await client.listProducts({ page: { page: 1, pageSize: 10 } }, as(account))).products.sort((x, y) => x.key.localeCompare(y.key));
      expect(announced.map((a) => shape(a.product!))).toEqual(stored.map(shape));
      expect(announced.map((m) => [m.product?.key, m.product?.ean, m.skuId === m.product?.id, m.version])).toEqual([
        ["K1", "E-K1", true, 1n],
        ["K2", "E-K2", true, 2n],
        ["K3", "E-K3", true, 1n],
      ]);
    }
  });

  it("the migration re-announces what a schema of the release before stores, once", async () => {
    const before = catalogue.openDb("catalogue_before");
    await migrate(before, "catalogue_before", migrations.filter((m) => m.name < "005"));
    const ctx = { db: before, relay: { kick: () => undefined }, logger: pino({ level: "silent" }) } as unknown as ServiceContext;
    const account = randomUUID();
    const written = await upsertProducts(ctx, account, ["K1", "K2"].map((key) => create(ProductSchema, { key, ean: `E-${key}` })));
    expect(written.map((o) => o.statusCode)).toEqual([201, 201]);
    await before("outbox").delete();
    expect(await migrate(before, "catalogue_before", migrations)).toEqual(["005_announce_for_planning", "006_import_jobs", "007_import_job_columns"]);
    const rows: { subject: string; aggregate: string }[] = await before("outbox").orderBy("seq");
    const ids: { id: string }[] = await before("products").select("id").orderBy("seq");
    expect(rows.map((r) => [r.subject, r.aggregate])).toEqual(ids.map((p) => [topics.catalogueSkuBackfilled.subject, `sku:${p.id}`]));
    expect(await migrate(before, "catalogue_before", migrations)).toEqual([]);
    expect(Number((await before("outbox").count({ n: "*" }))[0].n)).toBe(2);
  });
});

/** A product as JSON without what the list adds to it (prices, the image URL). */
function shape(product: catalogueV1.Product) {
  const copy = clone(ProductSchema, product);
  copy.prices = [];
  copy.imageUrl = undefined;
  return toJson(ProductSchema, copy);
}
