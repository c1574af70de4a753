import { randomUUID } from "node:crypto";
import { eventsV1, topics } from "@analytics/contracts";
import { askingDataVersions, DataVersions } from "@analytics/rpc";
import { busMessage, eventually, readWhileAWriteCommits, serviceUnderTest } from "@analytics/testing";
import { startEventsService } from "../src/service";

const { EventsService, EventState } = eventsV1;

/**
 * GetAccountVersion: the version of an account's queue, behind the gateway's weak ETag on GET
 * /events. Every change of the account's entries moves it on (an entry created, processed, its
 * payload replaced); nothing of another account's does.
 */
describe("the events queue's account version", () => {
  const webhooks = { allowPrivate: false, concurrencyPerEndpoint: 16, pollMs: 250, imageUrls: { signing: "s".repeat(32) } };
  const events = serviceUnderTest(EventsService, (deps) => startEventsService(deps, webhooks), { schema: "events" });
  const { client, db, as } = events;
  const version = async (accountId: string) => (await client.getAccountVersion({}, as(accountId))).version;

  async function entry(accountId: string): Promise<string> {
    const id = randomUUID();
    const [error] = await events.stream.bus.publish([
      busMessage(topics.catalogueSkuUpdated, accountId, `sku:${id}`, { accountId, skuId: id, version: 1n, product: { id, key: id, sku: id } }, id),
    ]);
    if (error) throw error;
    await eventually(async () => (await db("events").where({ account_id: accountId, event_type: "update_sku" }).whereRaw("payload->>'key' = ?", [id]).first()) !== undefined);
    return (await db("events").where({ account_id: accountId }).whereRaw("payload->>'key' = ?", [id]).first("id")).id;
  }

  it("moves on with an entry of the account, its processing and its payload, not with another account's", async () => {
    const [acc, other] = [randomUUID(), randomUUID()];
    expect(await version(acc)).toBe(0n);
    const id = await entry(acc);
    const created = await version(acc);
    expect(created).toBeGreaterThan(0n);
    await entry(other);
    expect(await version(acc)).toBe(created);
    await client.updateEventPayload({ id, payloadJson: '{"a":1}' }, as(acc));
    const replaced = await version(acc);
    expect(replaced).toBeGreaterThan(created);
    await client.updateEventStatus({ id, state: EventState.COMPLETED }, as(acc));
    const processed = await version(acc);
    expect(processed).toBeGreaterThan(replaced);
    // Listing reads only: nothing moves.
    await client.listEvents({ page: { page: 1, pageSize: 10 } }, as(acc));
    expect(await version(acc)).toBe(processed);
  });

  it("answers a page's version with it, never newer than the page: a write committing meanwhile is in both or in neither", async () => {
    const acc = randomUUID();
    await entry(acc);
    const id = randomUUID();
    const versions = new DataVersions(new Set([EventsService.typeName]));
    const page = await readWhileAWriteCommits(
      db,
      (tx) => tx("events").insert({ id, account_id: acc, event_type: "update_sku", payload: {} }),
      () => client.listEvents({ page: { page: 1, pageSize: 10 } }, { ...as(acc), contextValues: askingDataVersions(versions) }),
    );
    const tagged = BigInt((await versions.versionOf(EventsService.typeName)) as string);
    expect(tagged).toBe(await version(acc));
    expect(page.events.map((e) => e.id)).toContain(id);
  });
});
