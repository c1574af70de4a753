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
// Beside it, on a second port, a raw proxy: node:http's server and node:http2's client, each
// route sending request bytes built once at start (the same calls, Connect's binary protocol) and
// answering the services' bytes as they came, unread: no Connect, no protobuf, no JSON. What it
// spends per request is what Node's networking alone costs these two routes on this machine.
// Env: BARE_URLS (JSON {catalogue, events, pricing}), BARE_TOKEN, BARE_CALLER (JSON {accountId, apiKeyId}).
// Prints `listening <port> <raw port>` on stdout.
import http from "node:http";
import http2 from "node:http2";
import Fastify from "fastify";
import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
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

/** A Connect call's bytes, made once: a unary request's message, or a server stream's one envelope. */
function requestBytes<D extends DescMessage>(schema: D, init: MessageInitShape<D>, stream: boolean): Buffer {
  const message = toBinary(schema, create(schema, init));
  if (!stream) return Buffer.from(message);
  const envelope = Buffer.alloc(5 + message.length);
  envelope.writeUInt32BE(message.length, 1);
  envelope.set(message, 5);
  return envelope;
}
const sessions = new Map<string, http2.ClientHttp2Session>();
/** POSTs `body` to `url`'s service at `path` over one HTTP/2 session per service: the answer's bytes. */
function post(url: string, path: string, body: Buffer, stream: boolean): Promise<Buffer> {
  let session = sessions.get(url);
  if (!session) sessions.set(url, (session = http2.connect(url)));
  const call = session.request({
    ":method": "POST",
    ":path": path,
    "content-type": stream ? "application/connect+proto" : "application/proto",
    "connect-protocol-version": "1",
    ...options.headers,
  });
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    call.on("response", (headers) => headers[":status"] === 200 || reject(new Error(`${path}: ${headers[":status"]}`)));
    call.on("data", (part: Buffer) => parts.push(part));
    call.on("end", () => resolve(Buffer.concat(parts)));
    call.on("error", reject);
    call.end(body);
  });
}
const listPage = { list: { key: "K-500", page: { page: 1, pageSize: 10 } } };
const productIds = [];
for await (const chunk of catalogue.streamProductsJson(listPage, options)) productIds.push(...chunk.ids);
const raw = {
  events: requestBytes(eventsV1.ListEventsRequestSchema, { page: { page: 1, pageSize: 10 } }, false),
  products: requestBytes(catalogueV1.StreamProductsJsonRequestSchema, listPage, true),
  prices: requestBytes(pricingV1.ProductPricesJsonRequestSchema, { productIds }, false),
};
const rawServer = http.createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
  const answer = (parts: Buffer[]) => {
    const body = Buffer.concat(parts);
    response.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
    response.end(body);
  };
  const fail = (err: Error) => (response.writeHead(502), response.end(String(err)));
  if (request.url === "/events") post(urls.events, "/analytics.events.v1.EventsService/ListEvents", raw.events, false).then((b) => answer([b]), fail);
  else
    post(urls.catalogue, "/analytics.catalogue.v1.CatalogueService/StreamProductsJson", raw.products, true)
      .then((b) => post(urls.pricing, "/analytics.pricing.v1.PricingService/ProductPricesJson", raw.prices, false).then((p) => answer([b, p])))
      .catch(fail);
});
await new Promise<void>((resolve) => rawServer.listen(0, "127.0.0.1", resolve));
process.stdout.write(`listening ${new URL(address).port} ${(rawServer.address() as { port: number }).port}\n`);
