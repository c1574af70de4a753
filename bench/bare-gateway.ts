// Bundled and run as a process of its own by bench/gateway-hop.mjs --bare: the least any gateway
// in front of the services must do per request, as a floor for issue 48's hop ratio. A bare
// Fastify server (no hooks, no plugins) with one route per bench case, calling the services
// through the gateway's own Connect client (generated client, binary protocol, HTTP/2) with a
// fixed caller (no token, no rate limit, no ETag, no validation), answering JSON:
//   GET /events      -> EventsService.ListEvents(page 1, size 10), the entries' JSON built as one string
//   GET /products    -> CatalogueService.StreamProductsJson(key K-500), then
//                       PricingService.ProductPricesJson of its ids; the two JSON texts joined
// If this process cannot reach 0.75 of the direct calls, no gateway making the same calls through
// the same client can.
// Env: BARE_URLS (JSON {catalogue, events, pricing}), BARE_TOKEN, BARE_CALLER (JSON {accountId, apiKeyId}).
// Prints `listening <port>` on stdout.
import Fastify from "fastify";
import { callerHeaders } from "@analytics/auth";
import { catalogueV1, eventsV1, pricingV1 } from "@analytics/contracts";
import { createServiceClient } from "@analytics/rpc";

const urls = JSON.parse(process.env.BARE_URLS ?? "{}");
const options = { headers: callerHeaders(process.env.BARE_TOKEN ?? "", JSON.parse(process.env.BARE_CALLER ?? "{}")) };
const catalogue = createServiceClient(catalogueV1.CatalogueService, urls.catalogue);
const events = createServiceClient(eventsV1.EventsService, urls.events);
const pricing = createServiceClient(pricingV1.PricingService, urls.pricing);

const app = Fastify({ logger: false });
app.get("/events", async (_request, reply) => {
  const res = await events.listEvents({ page: { page: 1, pageSize: 10 } }, options);
  reply.header("content-type", "application/json");
  // The cheapest JSON of the entries: the payload's own text spliced in, one string built.
  const at = (t: { seconds: bigint; nanos: number } | undefined) => (t ? `"${new Date(Number(t.seconds) * 1000 + t.nanos / 1e6).toISOString()}"` : "null");
  return `[${res.events.map((e) => `{"id":"${e.id}","eventType":"${e.eventType}","payload":${e.payloadJson},"createdAt":${at(e.createdAt)},"completedAt":${at(e.completedAt)},"failedAt":${at(e.failedAt)}}`).join(",")}]`;
});
app.get("/products", async (_request, reply) => {
  const chunks = [];
  for await (const chunk of catalogue.streamProductsJson({ list: { key: "K-500", page: { page: 1, pageSize: 10 } } }, options)) chunks.push(chunk);
  const prices = await pricing.productPricesJson({ productIds: chunks.flatMap((c) => c.ids) }, options);
  reply.header("content-type", "application/json");
  return `{"products":${chunks.map((c) => Buffer.from(c.productsJson).toString()).join("")},"prices":${JSON.stringify(prices.products.map((p) => p.pricesJson))}}`;
});
const address = await app.listen({ port: 0, host: "127.0.0.1" });
process.stdout.write(`listening ${new URL(address).port}\n`);
