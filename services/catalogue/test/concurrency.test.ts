import { randomUUID } from "node:crypto";
import pino from "pino";
import { callerHeaders } from "@analytics/auth";
import { InProcessBus } from "@analytics/bus";
import { catalogueV1 } from "@analytics/contracts";
import { createServiceClient } from "@analytics/rpc";
import { databaseForFile } from "@analytics/testing";
import { startCatalogueService } from "../src/service";

const internalToken = "x".repeat(40);

/**
 * One account's product writes run one at a time (the account's advisory lock): a write that
 * resolved a key just before a key switch committed must not write a second product under the
 * key that became a synonym.
 */
describe("concurrent product writes of one account (real Postgres)", () => {
  const database = databaseForFile();
  const db = database.openDb("catalogue");
  let client: ReturnType<typeof createServiceClient<typeof catalogueV1.CatalogueService>>;
  const account = randomUUID();
  const as = { headers: callerHeaders(internalToken, { accountId: account, apiKeyId: randomUUID() }) };

  beforeAll(async () => {
    const service = await startCatalogueService({ databaseUrl: database.url, bus: new InProcessBus(), logger: pino({ level: "silent" }), internalToken, port: 0 });
    database.atClose(() => service.close());
    client = createServiceClient(catalogueV1.CatalogueService, service.url);
  });

  it("keeps keys and old keys apart under overlapping upserts and key switches", async () => {
    const N = 300;
    const keys = Array.from({ length: N }, (_, i) => `k${i}`);
    await client.upsertProducts({ products: keys.map((key) => ({ key, sku: key })) }, as);

    const upserts = Array.from({ length: 4 }, (_, round) =>
      client.upsertProducts({ products: keys.map((key) => ({ key, sku: `${key}-r${round}` })) }, as),
    );
    const switches = [0, 1, 2].map((part) =>
      client.switchKeys({ switches: keys.slice(part * 100, part * 100 + 100).map((key) => ({ oldKey: key, key: `s-${key}`, sku: `s-${key}` })) }, as),
    );
    const answers = await Promise.all([...upserts, ...switches]);

    // Every item answered on its own, none failed.
    for (const answer of answers) {
      expect(answer.results.every((r) => r.result && r.result.statusCode < 300)).toBe(true);
    }
    // Still one product per original SKU, and no key that is also someone's old key.
    const products = await db("products").where({ account_id: account }).select("key");
    expect(products).toHaveLength(N);
    const clashes = await db("products as p")
      .join("sku_synonyms as s", function () {
        this.on("s.account_id", "=", "p.account_id").andOn("s.synonym", "=", "p.key");
      })
      .where("p.account_id", account)
      .select("p.key");
    expect(clashes).toEqual([]);
    expect(await db("sku_synonyms").where({ account_id: account })).toHaveLength(N);
  });
});
