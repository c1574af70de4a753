import pino from "pino";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { callerHeaders, callerOf } from "@analytics/auth";
import { InProcessBus } from "@analytics/bus";
import { catalogueV1, eventsV1 } from "@analytics/contracts";
import { accountVersion, bumpAccountVersions, createAccountVersionsTable } from "@analytics/db";
import { databaseForFile } from "@analytics/testing";
import { accountVersionText, askingDataVersions, createServiceTransport, DataVersions, startService, type RunningService, type ServiceDefinition } from "../src";

/**
 * The data version answered with a list's call (CONTRACT "Conditional requests"): read by the
 * service before its handler, so that the gateway's weak ETag is never newer than the data
 * answered with it.
 */
describe("data versions answered with the calls (real Postgres)", () => {
  const database = databaseForFile();
  const token = "x".repeat(40);
  const account = "00000000-0000-4000-8000-0000000000d1";
  const as = (versions?: DataVersions) => ({ headers: callerHeaders(token, { accountId: account, apiKeyId: "" }), ...(versions ? { contextValues: askingDataVersions(versions) } : {}) });
  const events = eventsV1.EventsService.typeName;
  const catalogue = catalogueV1.CatalogueService.typeName;
  let service: RunningService;
  let url: string;

  // Each list call first writes (a write landing between the version read and the list's query,
  // deterministically), then answers the version its query sees as its data.
  const definition: ServiceDefinition = {
    name: "versioned_probe",
    migrations: [{ name: "001_account_versions", up: (db) => createAccountVersionsTable(db) }],
    dataVersion: accountVersionText,
    routes: (router, { db }) => {
      router.service(eventsV1.EventsService, {
        listEvents: async (_req, ctx) => {
          await bumpAccountVersions(db, [callerOf(ctx).accountId]);
          return { totalCount: await accountVersion(db, callerOf(ctx).accountId) };
        },
      });
      router.service(catalogueV1.CatalogueService, {
        async *streamProductsJson(_req, ctx) {
          await bumpAccountVersions(db, [callerOf(ctx).accountId]);
          yield { ids: [String(await accountVersion(db, callerOf(ctx).accountId))] };
        },
      });
    },
  };

  beforeAll(async () => {
    service = await startService(definition, { databaseUrl: database.url, bus: new InProcessBus(), logger: pino({ level: "silent" }), internalToken: token, port: 0 });
    url = service.url;
    database.atClose(() => service.close());
  });

  it("answers the version read before the handler: a write landing between is in the data, not in the version", async () => {
    const versions = new DataVersions(new Set([events]));
    const { totalCount } = await createClient(eventsV1.EventsService, createServiceTransport(url)).listEvents({}, as(versions));
    const tagged = await versions.versionOf(events);
    expect(typeof tagged).toBe("string");
    expect(BigInt(tagged as string)).toBeLessThan(totalCount);
  });

  it("answers a server stream's version with its header, read before the stream's first query", async () => {
    const versions = new DataVersions(new Set([catalogue]));
    const chunks = [];
    for await (const chunk of createClient(catalogueV1.CatalogueService, createServiceTransport(url)).streamProductsJson({}, as(versions))) chunks.push(chunk);
    const tagged = await versions.versionOf(catalogue);
    expect(BigInt(tagged as string)).toBeLessThan(BigInt(chunks[0].ids[0]));
  });

  it("asks only the owners, and only with the first call to each; a call that does not ask gets none", async () => {
    const client = createClient(eventsV1.EventsService, createServiceTransport(url));
    const notOwner = new DataVersions(new Set([catalogue]));
    await client.listEvents({}, as(notOwner));
    expect(notOwner.versionOf(events)).toBe("not called");
    expect(notOwner.versionOf(catalogue)).toBe("not called");

    const versions = new DataVersions(new Set([events]));
    await client.listEvents({}, as(versions));
    const first = await versions.versionOf(events);
    const { totalCount } = await client.listEvents({}, as(versions));
    // The second call did not ask again: the version stays the first's, older than its data.
    expect(await versions.versionOf(events)).toBe(first);
    expect(BigInt(first as string)).toBeLessThan(totalCount - 1n);

    // Over connect-node's own transport, which shows every header: none unless asked.
    const plain = createClient(eventsV1.EventsService, createConnectTransport({ baseUrl: url, httpVersion: "2" }));
    const answer = async (headers: Record<string, string>) => {
      let version: string | null = "unread";
      const { totalCount } = await plain.listEvents({}, { headers: { ...as().headers, ...headers }, onHeader: (h) => (version = h.get("x-data-version")) });
      return { version: version as string | null, totalCount };
    };
    expect((await answer({})).version).toBeNull();
    const asked = await answer({ "x-data-version": "1" });
    expect(BigInt(asked.version!)).toBeLessThan(asked.totalCount);
  });
});

describe("DataVersions", () => {
  it("lets a later call to an owner start only once the first call to it answered its version", async () => {
    const versions = new DataVersions(new Set(["a.Service"]));
    const answered = await versions.beforeCall("a.Service");
    expect(answered).toBeInstanceOf(Function);
    let secondStarted = false;
    const second = versions.beforeCall("a.Service").then((asks) => {
      secondStarted = true;
      return asks;
    });
    // Every pending callback has run: the second call still waits.
    await new Promise((resolve) => setImmediate(resolve));
    expect(secondStarted).toBe(false);
    answered!("7");
    expect(await second).toBeUndefined();
    expect(await versions.versionOf("a.Service")).toBe("7");
    expect(await versions.beforeCall("other.Service")).toBeUndefined();
  });
});
