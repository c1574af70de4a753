import { randomUUID } from "node:crypto";
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import pino from "pino";
import { catalogueMessagesV1, catalogueV1 } from "@analytics/contracts";
import { inTransaction } from "@analytics/db";
import type { ServiceContext } from "@analytics/rpc";
import { serviceUnderTest } from "@analytics/testing";
import { catalogueImports } from "../src/imports";
import * as repo from "../src/repository";
import { productFromRow } from "../src/resources";
import { startCatalogueService } from "../src/service";

type ProductInit = MessageInitShape<typeof catalogueV1.ProductSchema>;

/**
 * The staged full write of products (docs/imports.md, "The staging engine"), through the batch
 * call and through an import's chunk: each message it announces is, byte for byte, the product's
 * SkuChanged as read back from what is stored (as every other product write announces), one
 * version a write; a batch's answers are the products as stored.
 */
describe("catalogue service: a staged full write of products announces them as stored", () => {
  const catalogue = serviceUnderTest(catalogueV1.CatalogueService, startCatalogueService, { schema: "catalogue" });
  const { client, db, as } = catalogue;
  const logger = pino({ level: "silent" });

  /** A product with a field of every kind: decimals, dates, nested cost values, attributes whose keys jsonb orders otherwise. */
  const full = (key: string, extra: ProductInit = {}): ProductInit => ({
    key,
    sku: key,
    ean: `73${key}`,
    productName: `Product ${key}`,
    status: 3,
    year: 2027,
    brandName: "Acme",
    categoryName: "Knitwear",
    moq: 12,
    startDate: "2027-01-01",
    costCalculationPrice: { value: "10.50" },
    costCalculationValues: [{ key: "freight", sort: 1, type: 1, currency: "EUR", monetaryValue: { value: "1.250" } }],
    externalAttributes: { zeta: 1, a: "x", nested: { b: [1, 2.5, "three"], aa: null } },
    activePlanning: false,
    ...extra,
  }) as ProductInit;

  /** The lines as an import applies them: one chunk, in the worker's transaction. */
  const imported = async (account: string, products: ProductInit[], cleared: string[][] = []) => {
    const chunk = toBinary(
      catalogueV1.UpsertProductsRequestSchema,
      create(catalogueV1.UpsertProductsRequestSchema, { products, cleared: products.map((_, i) => ({ fields: cleared[i] ?? [] })) }),
    );
    const ctx = { db: undefined, relay: { kick: () => undefined }, logger };
    return inTransaction(db, (tx) => catalogueImports.resources.products.apply({ ...ctx, db: tx } as unknown as ServiceContext, { accountId: account, apiKeyId: randomUUID() }, chunk));
  };

  /** Every SkuChanged of the account is its product's, in version order from 1; the last is, byte for byte, the product as stored now. */
  const expectAnnouncedAsStored = async (account: string) => {
    const outbox = await db("outbox").where({ account_id: account }).where("subject", "like", "analytics.catalogue.sku.%").orderBy("seq").select("payload");
    const messages = outbox.map((m: { payload: Buffer }) => ({ bytes: m.payload, message: fromBinary(catalogueMessagesV1.SkuChangedSchema, m.payload) }));
    const rows = await repo.findProducts(db, account, [...new Set(messages.map((m) => m.message.skuId))]);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      const own = messages.filter((m) => m.message.skuId === row.id);
      expect(own.map((m) => m.message.version)).toEqual(Array.from({ length: Number(row.version) }, (_, n) => BigInt(n + 1)));
      const asStored = create(catalogueMessagesV1.SkuChangedSchema, { accountId: account, skuId: row.id, version: BigInt(row.version as number), product: productFromRow(row) });
      expect(Buffer.from(own[own.length - 1].bytes).equals(Buffer.from(toBinary(catalogueMessagesV1.SkuChangedSchema, asStored)))).toBe(true);
    }
    return rows;
  };

  it("through the batch call and an import's chunk: created, updated, unchanged, an old key, a repeated key, an image removed", async () => {
    const account = randomUUID();
    const first = (await client.upsertProducts({ products: [full("A"), full("B"), full("C", { imageUrl: "https://example.com/c.png" }), full("OLD")] }, as(account))).results;
    expect(first.map((r) => `${r.result!.statusCode} ${r.result!.message}`)).toEqual(["201 created", "201 created", "201 created", "201 created"]);
    await client.switchKeys({ switches: [{ oldKey: "OLD", key: "NEW", sku: "NEW" }] }, as(account));

    // A chunk: A as stored, B changed, C without imageUrl (kept), the old key, a new product twice
    // in one run (its brand in other letter case, then a new category).
    const chunk = await imported(account, [full("A"), full("B", { color: "red" }), full("C"), full("OLD", { sku: "NEW", size: "M" }), full("D", { brandName: "ACME" })]);
    expect(chunk.map((o) => `${o.reference} ${o.statusCode} ${o.message}`)).toEqual(["A 200 unchanged", "B 200 updated", "C 200 unchanged", "OLD 200 updated", "D 201 created"]);

    // The batch call, with values: an image removed; a key named twice (the later wins, both answered;
    // a brand only the earlier names is not created).
    const second = (
      await client.upsertProducts(
        { products: [full("C"), full("E", { size: "S", brandName: "Early" }), full("E", { size: "L", categoryName: "Shoes" }), { ...full("OLD", { sku: "NEW", size: "M" }), key: "NEW" }], cleared: [{ fields: ["imageUrl"] }, { fields: [] }, { fields: [] }, { fields: [] }] },
        as(account),
      )
    ).results;
    expect(second.map((r) => `${r.result!.statusCode} ${r.result!.message}`)).toEqual(["200 updated", "201 created", "200 updated", "200 unchanged"]);
    const rows = await expectAnnouncedAsStored(account);
    const stored = new Map(rows.map((r) => [r.key, productFromRow(r)]));
    // Each answer's product is the product as stored, unchanged ones too.
    expect(second.map((r) => r.product)).toEqual([stored.get("C"), stored.get("E"), stored.get("E"), stored.get("NEW")]);
    expect([stored.get("C")!.imageUrl, stored.get("E")!.size, stored.get("E")!.categoryName, stored.get("NEW")!.skuSynonyms]).toEqual([undefined, "L", "Shoes", ["OLD"]]);
    expect((await db("brands").where({ account_id: account })).map((b) => b.name)).toEqual(["Acme"]);
  });
});
