import { randomUUID } from "node:crypto";
import pino from "pino";
import { Code, ConnectError } from "@connectrpc/connect";
import { create, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import type { BusMessage } from "@analytics/bus";
import { pricingV1, productPriceToRest, stringifyRest, topics } from "@analytics/contracts";
import { createDb } from "@analytics/db";
import { askingDataVersions, DataVersions, type ServiceContext } from "@analytics/rpc";
import { busMessage, codeOf, eventually, readWhileAWriteCommits, serviceUnderTest, subjectsUnder } from "@analytics/testing";
import { upsertPrices } from "../src/prices";
import * as repo from "../src/repository";
import { priceFromRow } from "../src/resources";
import { startPricingService } from "../src/service";

const { PricingService } = pricingV1;
type PriceWriteInit = MessageInitShape<typeof pricingV1.PriceWriteSchema>;
const dec = (value: string) => ({ value });

describe("pricing service (real Postgres and JetStream)", () => {
  const pricing = serviceUnderTest(PricingService, startPricingService, { schema: "pricing", probe: subjectsUnder("analytics.pricing.") });
  const { client, db, as, published } = pricing;

  const list = (externalPriceListId: string, extra: { name?: string; currency?: string; defaultVat?: { value: string }; defaultPriceList?: boolean } = {}) => ({
    externalPriceListId,
    name: `List ${externalPriceListId}`,
    currency: "EUR",
    defaultVat: dec("25"),
    ...extra,
  });
  const settings = async (accountId: string, customPriceFields: string[], version = 1n) => {
    const [error] = await pricing.stream.bus.publish([busMessage(topics.accountSettingsChanged, accountId, `settings:${accountId}`, { accountId, version, customPriceFields })]);
    if (error) throw error;
    await eventually(async () => (await db("account_settings").where({ account_id: accountId }).first())?.version === Number(version), 10_000, "settings replica");
  };
  const upsert = async (accountId: string, prices: PriceWriteInit[]) => (await client.upsertPrices({ prices }, as(accountId))).results;
  const statuses = (results: { result?: { statusCode: number } }[]) => results.map((r) => r.result?.statusCode);

  describe("price lists", () => {
    it("creates (201 created), updates by POST and PUT, reads one and all, and announces each change", async () => {
      const account = randomUUID();
      const created = await client.createPriceList({ priceList: list("RETAIL") }, as(account));
      expect(created.created).toBe(true);
      expect(created.priceList).toMatchObject({ externalPriceListId: "RETAIL", currency: "EUR", defaultVat: { value: "25" }, defaultPriceList: false });
      const again = await client.createPriceList({ priceList: list("RETAIL", { name: "Retail", defaultPriceList: true }) }, as(account));
      expect(again.created).toBe(false);
      const put = await client.updatePriceList({ externalPriceListId: "RETAIL", priceList: list("", { name: "Retail EU", currency: "SEK", defaultVat: dec("12.5") }) }, as(account));
      expect(put.priceList).toMatchObject({ name: "Retail EU", currency: "SEK", defaultVat: { value: "12.5" } });
      await client.createPriceList({ priceList: list("OUTLET") }, as(account));
      const all = await client.listPriceLists({}, as(account));
      expect(all.priceLists.map((l) => l.externalPriceListId)).toEqual(["RETAIL", "OUTLET"]);
      expect((await client.getPriceList({ externalPriceListId: "RETAIL" }, as(account))).priceList?.name).toBe("Retail EU");
      const mine = () => published.filter((m) => m.accountId === account && m.subject.includes(".price_list."));
      await eventually(async () => mine().length === 4, 10_000, "price list messages");
      // The relay keeps each aggregate's order (a price list's messages), not an order across lists.
      const listOf = (m: BusMessage) => fromBinary(topics.pricingPriceListUpdated.schema, m.payload).priceList?.externalPriceListId;
      const subjectsOf = (externalId: string) => mine().filter((m) => listOf(m) === externalId).map((m) => m.subject.replace(pricing.stream.subjectPrefix, ""));
      expect(subjectsOf("RETAIL")).toEqual([topics.pricingPriceListCreated.subject, topics.pricingPriceListUpdated.subject, topics.pricingPriceListUpdated.subject]);
      expect(subjectsOf("OUTLET")).toEqual([topics.pricingPriceListCreated.subject]);
      const last = fromBinary(topics.pricingPriceListUpdated.schema, mine().filter((m) => listOf(m) === "RETAIL")[2].payload);
      expect(last).toMatchObject({ accountId: account, version: 3n, priceList: { name: "Retail EU" } });
    });

    it("is NOT_FOUND for an unknown list and for another account's list", async () => {
      const account = randomUUID();
      await client.createPriceList({ priceList: list("MINE") }, as(account));
      const other = randomUUID();
      expect(await codeOf(client.getPriceList({ externalPriceListId: "MINE" }, as(other)))).toBe(Code.NotFound);
      expect(await codeOf(client.updatePriceList({ externalPriceListId: "MINE", priceList: list("MINE") }, as(other)))).toBe(Code.NotFound);
      expect(await codeOf(client.updatePriceList({ externalPriceListId: "NOPE", priceList: list("NOPE") }, as(account)))).toBe(Code.NotFound);
      expect(await codeOf(client.listPrices({ listExternalId: "MINE" }, as(other)))).toBe(Code.NotFound);
      expect((await client.listPriceLists({}, as(other))).priceLists).toEqual([]);
    });

    it("refuses a PUT at another revision than the one named (If-Match: Aborted, nothing changed)", async () => {
      const account = randomUUID();
      await client.createPriceList({ priceList: list("REV") }, as(account));
      const { revision } = await client.getPriceList({ externalPriceListId: "REV" }, as(account));
      await client.updatePriceList({ externalPriceListId: "REV", priceList: list("", { name: "Now" }), ifRevision: revision }, as(account));
      const refusal = (call: Promise<unknown>) => call.then(() => undefined, (e: ConnectError) => [Code[e.code], e.rawMessage]);
      expect(await refusal(client.updatePriceList({ externalPriceListId: "REV", priceList: list("", { name: "Late" }), ifRevision: revision }, as(account)))).toEqual([
        "Aborted",
        "price list REV changed since the revision the request named",
      ]);
      expect(await refusal(client.updatePriceList({ externalPriceListId: "NOPE", priceList: list("NOPE"), ifRevision: revision }, as(account)))).toEqual([
        "Aborted",
        "price list NOPE changed since the revision the request named",
      ]);
      expect((await client.getPriceList({ externalPriceListId: "REV" }, as(account))).priceList?.name).toBe("Now");
    });

    it("refuses bad fields naming each, and a body id that differs from the path", async () => {
      const account = randomUUID();
      const error = (await client.createPriceList({ priceList: list("X", { currency: "EURO", defaultVat: dec("101"), name: "" }) }, as(account)).catch((e) => e)) as ConnectError;
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.message).toMatch(/currency/);
      expect(error.message).toMatch(/defaultVat/);
      expect(error.message).toMatch(/name/);
      await client.createPriceList({ priceList: list("X") }, as(account));
      expect(await codeOf(client.updatePriceList({ externalPriceListId: "X", priceList: list("Y") }, as(account)))).toBe(Code.InvalidArgument);
    });
  });

  describe("prices", () => {
    it("upserts by (list, SKU, season): 201 then 200, custom prices merged, vat falls back to the list's", async () => {
      const account = randomUUID();
      await client.createPriceList({ priceList: list("R") }, as(account));
      const product = randomUUID();
      const first = await upsert(account, [
        { listExternalId: "R", key: "K1", productId: product, productKey: "K1", sku: "S1", price: dec("19.99"), customPrices: { outlet: dec("9.5") } },
        { listExternalId: "R", key: "K1", productId: product, productKey: "K1", sku: "S1", price: dec("21"), season: "AW26" },
      ]);
      expect(statuses(first)).toEqual([201, 201]);
      const second = await upsert(account, [{ listExternalId: "R", key: "K1", productId: product, productKey: "K1", price: dec("18.00"), vat: dec("12"), customPrices: { campaign: dec("15.25") } }]);
      expect(second[0].result).toMatchObject({ statusCode: 200, reference: "K1", referenceField: "key", message: "updated" });
      const page = await client.listPrices({ page: { page: 1, pageSize: 10 } }, as(account));
      expect(page.totalCount).toBe(2n);
      expect(page.prices[0]).toMatchObject({
        listExternalId: "R",
        key: "K1",
        price: { value: "18.00" },
        currency: "EUR",
        vat: { value: "12" },
        customPrices: { outlet: { value: "9.5" }, campaign: { value: "15.25" } },
      });
      expect(page.prices[0].season).toBeUndefined();
      expect(page.prices[1]).toMatchObject({ season: "AW26", price: { value: "21" }, vat: { value: "25" } });
      const messages = () => published.filter((m) => m.accountId === account && m.subject.endsWith("pricing.price.upserted"));
      await eventually(async () => messages().length === 3, 10_000, "price messages");
      const last = fromBinary(topics.pricingPriceUpserted.schema, messages()[2].payload);
      expect(last).toMatchObject({ productId: product, version: 2n, price: { price: { value: "18.00" } } });
      // Each price's latest message carries it exactly as a read answers it (vat from the list,
      // merged custom prices, updatedAt), though the write never reads it back.
      const latest = new Map(messages().map((m) => fromBinary(topics.pricingPriceUpserted.schema, m.payload)).map((m) => [m.price?.season ?? "", m.price]));
      expect(page.prices.map((p) => latest.get(p.season ?? ""))).toEqual(page.prices);
    });

    it("answers each bad item alone: unknown SKU or list 404, custom price outside the settings 400, bad price 400", async () => {
      const account = randomUUID();
      await settings(account, ["outlet"]);
      await client.createPriceList({ priceList: list("R") }, as(account));
      const product = randomUUID();
      const results = await upsert(account, [
        { listExternalId: "R", key: "GONE", productId: "", price: dec("1") },
        { listExternalId: "NOPE", key: "K", productId: product, price: dec("1") },
        { listExternalId: "R", key: "K", productId: product, price: dec("1"), customPrices: { campaign: dec("2") } },
        { listExternalId: "R", key: "K", productId: product, price: dec("-1") },
        { listExternalId: "R", key: "K", productId: product, price: dec("abc") },
        { listExternalId: "R", key: "K", productId: product, price: dec("3"), customPrices: { outlet: dec("2") } },
      ]);
      expect(statuses(results)).toEqual([404, 404, 400, 400, 400, 201]);
      expect(results[0].result?.message).toMatch(/SKU GONE not found/);
      expect(results[1].result?.message).toMatch(/price list NOPE not found/);
      expect(results[2].violations[0].path).toBe("customPrices.campaign");
      expect(results[3].violations[0].path).toBe("price");
      // Another account sees none of it, and cannot write to this account's list.
      const other = randomUUID();
      expect((await client.listPrices({}, as(other))).totalCount).toBe(0n);
      expect(statuses(await upsert(other, [{ listExternalId: "R", key: "K", productId: product, price: dec("1") }]))).toEqual([404]);
      expect((await client.pricesOfProducts({ productIds: [product] }, as(other))).prices).toEqual([]);
      expect((await client.pricesOfProducts({ productIds: [product] }, as(account))).prices).toHaveLength(1);
    });

    it("answers a product's prices as REST JSON text equal to the converted prices, digits kept, lists in order", async () => {
      const account = randomUUID();
      await settings(account, ["outlet", "staff"]);
      await client.createPriceList({ priceList: list("B", { currency: "SEK" }) }, as(account));
      await client.createPriceList({ priceList: list("A", { defaultVat: undefined }) }, as(account));
      const [p1, p2, bare] = [randomUUID(), randomUUID(), randomUUID()];
      expect(
        statuses(
          await upsert(account, [
            { listExternalId: "A", key: "K1", productId: p1, price: dec("10.50"), customPrices: { outlet: dec("5.250"), staff: dec("0.1") } },
            { listExternalId: "B", key: "K1", productId: p1, price: dec("99.99"), vat: dec("12.5") },
            { listExternalId: "A", key: "K2", productId: p2, price: dec("0.10"), season: "SS27" },
            { listExternalId: "A", key: "K2", productId: p2, price: dec("7"), season: "AW27" },
          ]),
        ),
      ).toEqual([201, 201, 201, 201]);
      const { products } = await client.productPricesJson({ productIds: [p1, p2, bare, "not-a-uuid"] }, as(account));
      const text = new Map(products.map((p) => [p.productId, p.pricesJson]));
      expect([...text.keys()].sort()).toEqual([p1, p2].sort());
      // The same as the Price messages give, converted field by field.
      const converted = (await client.pricesOfProducts({ productIds: [p1, p2] }, as(account))).prices;
      for (const product of [p1, p2]) {
        expect(JSON.parse(text.get(product)!)).toEqual(
          converted
            .filter((p) => p.productId === product)
            .map((p) => ({
              listExternalID: p.listExternalId,
              price: Number(p.price!.value),
              currency: p.currency,
              vat: p.vat ? Number(p.vat.value) : null,
              customPrices: Object.fromEntries(Object.entries(p.customPrices).map(([k, v]) => [k, Number(v.value)])),
            })),
        );
      }
      // Lists in creation order (B before A), and the stored digits as written.
      expect(text.get(p1)).toBe(
        '[{"listExternalID":"B","price":99.99,"currency":"SEK","vat":12.5,"customPrices":{}},' +
          '{"listExternalID":"A","price":10.50,"currency":"EUR","vat":0,"customPrices":{"staff":0.1,"outlet":5.250}}]',
      );
      expect(JSON.parse(text.get(p2)!).map((p: { price: number }) => p.price)).toEqual([0.1, 7]);
      expect((await client.productPricesJson({ productIds: [p1] }, as(randomUUID()))).products).toEqual([]);
    });

    it("builds a product's prices JSON text in SQL exactly as toRestJson of the ProductPrice message writes it", async () => {
      const account = randomUUID();
      await settings(account, ["outlet", "staff", "c"]);
      await client.createPriceList({ priceList: list("L1", { defaultVat: dec("25.00") }) }, as(account));
      await client.createPriceList({ priceList: list("NOVAT", { currency: "SEK" }) }, as(account));
      const [p1, p2] = [randomUUID(), randomUUID()];
      await upsert(account, [
        { listExternalId: "L1", key: "K1", productId: p1, price: dec("10.500"), customPrices: { outlet: dec("5.250"), staff: dec("0.10"), c: dec("3") } },
        { listExternalId: "NOVAT", key: "K1", productId: p1, price: dec("1.0") },
        { listExternalId: "L1", key: "K2", productId: p2, price: dec("0.00"), vat: dec("12.50"), season: "SS" },
      ]);
      // No list has a null VAT today (price_lists.default_vat is NOT NULL), but the SQL's answer
      // for one is pinned too: inside a transaction that is rolled back.
      await db
        .transaction(async (tx) => {
          await tx.raw("ALTER TABLE price_lists ALTER COLUMN default_vat DROP NOT NULL");
          await tx("price_lists").where({ account_id: account, external_id: "NOVAT" }).update({ default_vat: null });
          const text = new Map((await repo.productPricesJson(tx, account, [p1, p2])).rows.map((p) => [p.product_id, p.prices]));
          const prices = (await repo.pricesOfProducts(tx, account, [p1, p2])).map(priceFromRow);
          for (const product of [p1, p2]) {
            expect(text.get(product)).toBe(stringifyRest(prices.filter((p) => p.productId === product).map(productPriceToRest)));
          }
          expect(text.get(p1)).toBe(
            '[{"listExternalID":"L1","price":10.500,"currency":"EUR","vat":25.00,"customPrices":{"c":3,"staff":0.10,"outlet":5.250}},' +
              '{"listExternalID":"NOVAT","price":1.0,"currency":"SEK","vat":null,"customPrices":{}}]',
          );
          expect(text.get(p2)).toBe('[{"listExternalID":"L1","price":0.00,"currency":"EUR","vat":12.50,"customPrices":{}}]');
          throw new Error("rolled back");
        })
        .catch((e: Error) => expect(e.message).toBe("rolled back"));
      expect((await db("price_lists").where({ account_id: account, external_id: "NOVAT" }).first()).default_vat).toBe("25");
    });

    it("answers the prices' version with them, never newer than they are: a write committing meanwhile is in both or in neither", async () => {
      const account = randomUUID();
      await client.createPriceList({ priceList: list("L1") }, as(account));
      const { id: priceListId } = await db("price_lists").where({ account_id: account, external_id: "L1" }).first("id");
      const product = randomUUID();
      const versions = new DataVersions(new Set([PricingService.typeName]));
      const { products } = await readWhileAWriteCommits(
        db,
        (tx) => tx("prices").insert({ id: randomUUID(), account_id: account, price_list_id: priceListId, product_id: product, key: "K1", price: 1 }),
        () => client.productPricesJson({ productIds: [product] }, { ...as(account), contextValues: askingDataVersions(versions) }),
      );
      expect(BigInt((await versions.versionOf(PricingService.typeName)) as string)).toBe((await client.getAccountVersion({}, as(account))).version);
      expect(products.map((p) => p.productId)).toEqual([product]);
    });

    it("prices a streamed page's chunks with a named statement, parsed and planned once per connection", async () => {
      const one = createDb({ url: pricing.url, schema: "pricing", poolMax: 1 });
      try {
        for (let i = 0; i < 3; i++) expect((await repo.productPricesJson(one, randomUUID(), [randomUUID()])).rows).toEqual([]);
        const { rows } = await one.raw("SELECT name, generic_plans + custom_plans AS runs FROM pg_prepared_statements");
        expect(rows).toEqual([{ name: "pricing.product_prices_json", runs: 3 }]);
      } finally {
        await one.destroy();
      }
    });

    it("applies items naming one price in request order within a batch", async () => {
      const account = randomUUID();
      await client.createPriceList({ priceList: list("R") }, as(account));
      const product = randomUUID();
      const results = await upsert(account, [
        { listExternalId: "R", key: "K", productId: product, price: dec("1"), customPrices: { a: dec("1") } },
        { listExternalId: "R", key: "K", productId: product, price: dec("2"), customPrices: { b: dec("2") } },
      ]);
      expect(statuses(results)).toEqual([201, 201]);
      const [price] = (await client.listPrices({}, as(account))).prices;
      expect(price).toMatchObject({ price: { value: "2" }, customPrices: { a: { value: "1" }, b: { value: "2" } } });
    });

    it("lists a list's prices, pages with a total, streams every price, and deletes by key (and season)", async () => {
      const account = randomUUID();
      await client.createPriceList({ priceList: list("A") }, as(account));
      await client.createPriceList({ priceList: list("B", { currency: "USD" }) }, as(account));
      const products = Array.from({ length: 30 }, () => randomUUID());
      const items = products.flatMap((id, n) => [
        { listExternalId: "A", key: `K${n}`, productId: id, price: dec(`${n}.5`) },
        { listExternalId: "B", key: `K${n}`, productId: id, price: dec(`${n}`), season: "SS27" },
      ]);
      expect(new Set(statuses(await upsert(account, items)))).toEqual(new Set([201]));
      const b = await client.listPrices({ listExternalId: "B", page: { page: 2, pageSize: 20 } }, as(account));
      expect(b.totalCount).toBe(30n);
      expect(b.prices.map((p) => p.key)).toEqual(products.slice(20).map((_, n) => `K${n + 20}`));
      expect(b.prices.every((p) => p.currency === "USD")).toBe(true);
      const streamed: string[] = [];
      for await (const chunk of client.streamPrices({}, as(account))) streamed.push(...chunk.prices.map((p) => `${p.listExternalId}/${p.key}`));
      expect(streamed).toHaveLength(60);
      expect(streamed.slice(0, 2)).toEqual(["A/K0", "B/K0"]);
      expect(await codeOf(client.listPrices({ page: { page: 1, pageSize: 1001 } }, as(account)))).toBe(Code.InvalidArgument);

      const deleted = await client.deletePrices(
        { listExternalId: "B", season: "SS27", keys: [{ key: "K0", productId: products[0] }, { key: "K1", productId: products[1] }, { key: "GONE", productId: "" }] },
        as(account),
      );
      expect(deleted.results.map((r) => r.statusCode)).toEqual([200, 200, 404]);
      const wrongSeason = await client.deletePrices({ listExternalId: "A", season: "SS27", keys: [{ key: "K2", productId: products[2] }] }, as(account));
      expect(wrongSeason.results[0].statusCode).toBe(404);
      expect((await client.deletePrices({ listExternalId: "NOPE", keys: [{ key: "K2", productId: products[2] }] }, as(account))).results[0].statusCode).toBe(404);
      const other = await client.deletePrices({ listExternalId: "A", keys: [{ key: "K2", productId: products[2] }] }, as(randomUUID()));
      expect(other.results[0].statusCode).toBe(404);
      expect((await client.listPrices({ listExternalId: "B" }, as(account))).totalCount).toBe(28n);
      expect((await client.listPrices({ listExternalId: "A" }, as(account))).totalCount).toBe(30n);
      await eventually(async () => published.filter((m) => m.accountId === account && m.subject.endsWith("pricing.price.deleted")).length === 2, 10_000, "deleted messages");
    });

    it("writes a batch of 1000 prices in a fixed handful of statements", async () => {
      const account = randomUUID();
      await client.createPriceList({ priceList: list("R") }, as(account));
      const countStatements = async (n: number) => {
        const own = createDb({ url: pricing.url, schema: "pricing" });
        let statements = 0;
        own.on("query", () => void statements++);
        const ctx = { db: own, relay: { kick: () => undefined }, logger: pino({ level: "silent" }) } as unknown as ServiceContext;
        const items = Array.from({ length: n }, (_, i) => create(pricingV1.PriceWriteSchema, { listExternalId: "R", key: `K${i}`, productId: randomUUID(), price: dec("1.25") }));
        const outcomes = await upsertPrices(ctx, account, items);
        await own.destroy();
        expect(outcomes.every((o) => o.statusCode === 201)).toBe(true);
        return statements;
      };
      const small = await countStatements(2);
      const large = await countStatements(1000);
      expect(large).toBe(small);
      // BEGIN, settings replica, lists, the upsert (which answers the written prices), outbox, COMMIT.
      expect(large).toBeLessThanOrEqual(6);
    });
  });

  describe("fx rates", () => {
    const rate = (fromDate: string, extra: Partial<{ toDate: string; externalReference: string; rate: string; fromCurrency: string }> = {}) => ({
      fromCurrency: "EUR",
      toCurrency: "SEK",
      externalReference: "",
      fromDate,
      ...extra,
      rate: dec(extra.rate ?? "11.5"),
    });

    it("closes an open range at a new rate's fromDate, refuses other overlaps naming the clashing rate", async () => {
      const account = randomUUID();
      const [first] = (await client.createFxRates({ fxRates: [rate("2026-01-01", { externalReference: "ERP" })] }, as(account))).fxRates;
      expect(first).toMatchObject({ fromDate: "2026-01-01", rate: { value: "11.5" }, externalReference: "ERP" });
      expect(first.toDate).toBeUndefined();
      const [second] = (await client.createFxRates({ fxRates: [rate("2026-03-01", { externalReference: "ERP", rate: "11.75" })] }, as(account))).fxRates;
      let all = (await client.listFxRates({}, as(account))).fxRates;
      expect(all.map((r) => [r.id, r.fromDate, r.toDate])).toEqual([
        [first.id, "2026-01-01", "2026-03-01"],
        [second.id, "2026-03-01", undefined],
      ]);
      const error = (await client.createFxRates({ fxRates: [rate("2026-02-01", { externalReference: "ERP", toDate: "2026-02-15" })] }, as(account)).catch((e) => e)) as ConnectError;
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.message).toContain(`rate ${first.id} (2026-01-01 to 2026-03-01)`);
      // Another reference or currency pair is another set of ranges.
      await client.createFxRates({ fxRates: [rate("2026-02-01"), rate("2026-02-01", { fromCurrency: "USD" })] }, as(account));
      expect((await client.listFxRates({ externalReferences: ["ERP"] }, as(account))).fxRates).toHaveLength(2);
      expect((await client.listFxRates({ fromCurrencies: ["USD"] }, as(account))).fxRates).toHaveLength(1);
      // One request with two open rates of a triple: the earlier ends where the later starts.
      const two = (await client.createFxRates({ fxRates: [rate("2027-06-01", { externalReference: "B" }), rate("2027-01-01", { externalReference: "B" })] }, as(account))).fxRates;
      expect(two.map((r) => [r.fromDate, r.toDate])).toEqual([
        ["2027-06-01", undefined],
        ["2027-01-01", "2027-06-01"],
      ]);
      const subjects = () => published.filter((m) => m.accountId === account && m.subject.includes(".fx_rate.")).map((m) => m.subject.replace(pricing.stream.subjectPrefix, "").split(".")[3]);
      await eventually(async () => subjects().length === 7, 10_000, "fx messages");
      // Ordered per aggregate (rate), not across rates.
      expect(subjects().sort()).toEqual(["closed", ...Array(6).fill("created")]);
      all = (await client.listFxRates({}, as(randomUUID()))).fxRates;
      expect(all).toEqual([]);
    });

    it("refuses bad rates naming the field; PUT recreates with a new id; DELETE; another account's rate is NOT_FOUND", async () => {
      const account = randomUUID();
      for (const bad of [rate("2026-01-01", { rate: "0" }), rate("2026-13-01"), rate("2026-01-01", { fromCurrency: "XXY" }), rate("2026-01-05", { toDate: "2026-01-01" }), rate("2026-01-01", { fromCurrency: "SEK" })]) {
        const error = (await client.createFxRates({ fxRates: [bad] }, as(account)).catch((e) => e)) as ConnectError;
        expect(error.code).toBe(Code.InvalidArgument);
      }
      const [r] = (await client.createFxRates({ fxRates: [rate("2026-01-01")] }, as(account))).fxRates;
      expect(await codeOf(client.replaceFxRate({ id: r.id, fxRate: rate("2026-01-01") }, as(randomUUID())))).toBe(Code.NotFound);
      expect(await codeOf(client.deleteFxRate({ id: r.id }, as(randomUUID())))).toBe(Code.NotFound);
      const replaced = (await client.replaceFxRate({ id: r.id, fxRate: rate("2025-12-01", { rate: "12" }) }, as(account))).fxRate!;
      expect(replaced.id).not.toBe(r.id);
      expect(replaced).toMatchObject({ fromDate: "2025-12-01", rate: { value: "12" } });
      expect((await client.listFxRates({}, as(account))).fxRates.map((x) => x.id)).toEqual([replaced.id]);
      await client.deleteFxRate({ id: replaced.id }, as(account));
      expect(await codeOf(client.deleteFxRate({ id: replaced.id }, as(account)))).toBe(Code.NotFound);
      expect((await client.listFxRates({}, as(account))).fxRates).toEqual([]);
    });

    it("holds in the database too: the exclusion constraint refuses an overlap, and concurrent writers never both win", async () => {
      const account = randomUUID();
      await client.createFxRates({ fxRates: [rate("2026-01-01", { toDate: "2026-02-01" })] }, as(account));
      const direct = await db
        .raw("INSERT INTO fx_rates (account_id, from_currency, to_currency, rate, from_date, to_date) VALUES (?, 'EUR', 'SEK', 1, '2026-01-15', '2026-03-01')", [account])
        .catch((e) => e);
      expect(direct.code).toBe("23P01");
      const racers = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => client.createFxRates({ fxRates: [rate(`2026-0${3 + (i % 2)}-01`, { toDate: "2026-06-01", externalReference: "RACE" })] }, as(account))),
      );
      // One range wins; the writers of the same rate get it back (a retry is no new rate), the others a 400.
      const won = racers.flatMap((r) => (r.status === "fulfilled" ? r.value.fxRates : []));
      expect(new Set(won.map((r) => `${r.id}:${r.fromDate}`)).size).toBe(1);
      for (const r of racers) if (r.status === "rejected") expect((r.reason as ConnectError).code).toBe(Code.InvalidArgument);
      expect((await client.listFxRates({ externalReferences: ["RACE"] }, as(account))).fxRates).toHaveLength(1);
    });

    it("answers a rate sent again exactly as stored with the stored rate: no second range, no 400, nothing announced", async () => {
      const account = randomUUID();
      const first = await client.createFxRates({ fxRates: [rate("2026-01-01")] }, as(account));
      const again = await client.createFxRates({ fxRates: [rate("2026-01-01")] }, as(account));
      expect(again.fxRates).toEqual(first.fxRates);
      expect((await client.listFxRates({}, as(account))).fxRates).toEqual(first.fxRates);
      // Another rate is still an overlap.
      expect(await client.createFxRates({ fxRates: [rate("2026-01-01", { rate: "9" })] }, as(account)).catch((e: ConnectError) => e.code)).toBe(Code.InvalidArgument);
    });
  });

  describe("pricats", () => {
    const item = (sku: string, extra: Omit<MessageInitShape<typeof pricingV1.PricatSkuSchema>, "$typeName" | "sku"> = {}) => ({ sku, ...extra });

    it("upserts the pricat and its rows by (sku, season), answers each row, filters and pages", async () => {
      const account = randomUUID();
      const pricat = { externalId: "P1", name: "Spring", supplierGln: "7300000000001", supplierName: "Knits AB" };
      const first = await client.upsertPricatSkus(
        {
          pricat,
          items: [
            item("A", { season: "SS27", prices: { wholesale: dec("10.10"), retail: dec("29.95") }, currency: "EUR", vat: dec("25"), customFields: { fabric: "wool" } }),
            item("A", { season: "AW27", prices: { wholesale: dec("11") } }),
            item("B", { currency: "EURO" }),
            item(""),
            item("N", { prices: { wholesale: dec("-1") } }),
          ],
        },
        as(account),
      );
      expect(statuses(first.results)).toEqual([201, 201, 400, 400, 400]);
      expect(first.results[4].violations.map((v) => [v.path, v.message])).toEqual([["prices.wholesale", "must be at least 0"]]);
      expect(first.results[2].violations[0].path).toBe("currency");
      const again = await client.upsertPricatSkus({ pricat: { ...pricat, name: "Spring 27" }, items: [item("A", { season: "SS27", prices: { wholesale: dec("9.5") } }), item("C")] }, as(account));
      expect(statuses(again.results)).toEqual([200, 201]);
      await client.upsertPricatSkus({ pricat: { externalId: "P2", name: "Other", supplierGln: "7300000000002", supplierName: "Shoes AB" }, items: [item("Z")] }, as(account));

      const pricats = await client.listPricats({ page: { page: 1, pageSize: 10 } }, as(account));
      expect(pricats.totalCount).toBe(2n);
      expect(pricats.pricats[0]).toMatchObject({ externalId: "P1", name: "Spring 27", supplierName: "Knits AB" });
      expect((await client.listPricats({ suppliers: ["Shoes AB"] }, as(account))).pricats.map((p) => p.externalId)).toEqual(["P2"]);
      expect((await client.listPricats({ supplierGlns: ["7300000000001"], externalIds: ["P1", "P2"] }, as(account))).pricats.map((p) => p.externalId)).toEqual(["P1"]);

      const rows = await client.listPricatSkus({ pricatExternalIds: ["P1"], page: { page: 1, pageSize: 10 } }, as(account));
      expect(rows.totalCount).toBe(3n);
      expect(rows.skus[0]).toMatchObject({ pricatExternalId: "P1", sku: "A", season: "SS27", prices: { wholesale: { value: "9.5" } } });
      expect(rows.skus[0].prices.retail).toBeUndefined();
      expect((await client.listPricatSkus({ suppliers: ["Shoes AB"] }, as(account))).skus.map((s) => s.sku)).toEqual(["Z"]);
      expect((await client.listPricatSkus({ skus: ["A"], seasons: ["AW27"] }, as(account))).skus.map((s) => s.season)).toEqual(["AW27"]);
      expect((await client.listPricatSkus({ page: { page: 2, pageSize: 3 } }, as(account))).skus.map((s) => s.sku)).toEqual(["Z"]);

      // Another account sees nothing.
      expect((await client.listPricats({}, as(randomUUID()))).totalCount).toBe(0n);
      expect((await client.listPricatSkus({}, as(randomUUID()))).totalCount).toBe(0n);
      expect(await codeOf(client.upsertPricatSkus({ pricat: { externalId: "" }, items: [item("A")] }, as(account)))).toBe(Code.InvalidArgument);
      await eventually(async () => published.filter((m) => m.accountId === account && m.subject.endsWith("pricat_sku.upserted")).length === 5, 10_000, "pricat messages");
    });

    it("answers a row named twice in one request as if in order: 201 then 200, the later stored", async () => {
      const account = randomUUID();
      const pricat = { externalId: "PD", name: "Twice" };
      const first = await client.upsertPricatSkus({ pricat, items: [item("D", { season: "SS27", prices: { wholesale: dec("1") } }), item("E"), item("D", { season: "SS27", prices: { wholesale: dec("2") } })] }, as(account));
      expect(statuses(first.results)).toEqual([201, 201, 200]);
      const again = await client.upsertPricatSkus({ pricat, items: [item("D", { season: "SS27" }), item("D", { season: "SS27", prices: { wholesale: dec("3") } })] }, as(account));
      expect(statuses(again.results)).toEqual([200, 200]);
      const rows = await client.listPricatSkus({ pricatExternalIds: ["PD"], skus: ["D"] }, as(account));
      expect(rows.skus.map((s) => s.prices.wholesale?.value)).toEqual(["3"]);
    });

    it("a row whose custom fields, attributes or price names Postgres cannot store (NUL) is its own 400 naming the path; the others are written", async () => {
      const account = randomUUID();
      const { results } = await client.upsertPricatSkus(
        {
          pricat: { externalId: "PN", name: "NUL" },
          items: [
            item("N1", { customFields: { fabric: "wo\u0000ol" } }),
            item("N2", { externalAttributes: { nested: [{ "k\u0000": 1 }] } }),
            item("N3", { prices: { "whole\u0000sale": dec("1") } }),
            item("OK", { customFields: { fabric: "wool" } }),
          ],
        },
        as(account),
      );
      expect(statuses(results)).toEqual([400, 400, 400, 201]);
      expect(results.slice(0, 3).map((r) => r.violations.map((v) => v.path))).toEqual([["customFields.fabric"], ["externalAttributes.nested[0].k\u0000"], ["prices.whole\u0000sale"]]);
    });
  });
});
