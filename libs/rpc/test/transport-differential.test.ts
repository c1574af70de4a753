import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, createClient, type ConnectRouter, type Transport } from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport } from "@connectrpc/connect-node";
import { catalogueV1, eventsV1, ValidationErrorsSchema } from "@analytics/contracts";
import { createServiceTransport } from "../src";

/**
 * The gateway's transport is kept because it costs well under half of connect-node's CPU per call
 * (bench/connect-transport.mjs); these pin it to connect-node's behaviour: every scenario runs through
 * both clients against the same connect-node server, and what the caller sees must be equal.
 */

async function serve(routes: (router: ConnectRouter) => void) {
  const server = http2.createServer(connectNodeAdapter({ routes }));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}

const transports: Record<string, (url: string) => Transport> = {
  ours: (url) => createServiceTransport(url),
  "connect-node": (url) => createConnectTransport({ baseUrl: url, httpVersion: "2", useBinaryFormat: true }),
};

/** What a caller can observe of an outcome: the answer, or the error's code, message and details. */
function observed(outcome: { value?: unknown; error?: unknown }) {
  if (!outcome.error) return { value: outcome.value };
  const error = ConnectError.from(outcome.error);
  return { code: Code[error.code], message: error.rawMessage, violations: error.findDetails(ValidationErrorsSchema).flatMap((d) => d.violations.map((v) => [v.path, v.message])) };
}

const settle = (promise: Promise<unknown>) => promise.then((value) => ({ value }), (error: unknown) => ({ error }));

/** Runs `call` through both transports against a server of `routes`; returns both observations. */
async function both(routes: (router: ConnectRouter) => void, call: (transport: Transport) => Promise<unknown>) {
  const server = await serve(routes);
  try {
    const results: Record<string, unknown> = {};
    for (const [name, make] of Object.entries(transports)) results[name] = observed(await settle(call(make(server.url))));
    return results;
  } finally {
    await server.close();
  }
}

const chunk = (size: number) => ({ productsJson: new Uint8Array(size).fill(7), ids: [`id-${size}`] });

async function readStream(transport: Transport, request: Parameters<ReturnType<typeof catalogueClient>["streamProductsJson"]>[0] = {}) {
  const sizes: number[] = [];
  for await (const message of catalogueClient(transport).streamProductsJson(request)) sizes.push(message.productsJson.length);
  return sizes;
}
const catalogueClient = (transport: Transport) => createClient(catalogueV1.CatalogueService, transport);
const eventsClient = (transport: Transport) => createClient(eventsV1.EventsService, transport);

describe("the gateway's transport behaves as connect-node's", () => {
  it("on a unary answer, headers and deadline included", async () => {
    const results = await both(
      (router) =>
        router.service(eventsV1.EventsService, {
          listEvents: (request, context) => ({ events: [{ id: context.requestHeader.get("x-caller") ?? "", eventType: request.eventType }], totalCount: (context.timeoutMs() ?? 0) > 4000 ? 1n : 0n }),
        }),
      async (transport) => {
        const answer = await eventsClient(transport).listEvents({ eventType: "update_sku" }, { headers: { "X-Caller": "c1" }, timeoutMs: 5000 });
        return { events: answer.events.map((e) => [e.id, e.eventType]), totalCount: answer.totalCount };
      },
    );
    expect(results.ours).toEqual(results["connect-node"]);
    expect(results.ours).toEqual({ value: { events: [["c1", "update_sku"]], totalCount: 1n } });
  });

  it("on a service's error with details", async () => {
    const results = await both(
      (router) =>
        router.service(eventsV1.EventsService, {
          listEvents: () => {
            throw new ConnectError("page too big", Code.InvalidArgument, undefined, [{ desc: ValidationErrorsSchema, value: { violations: [{ path: "pageSize", message: "at most 1000" }] } }]);
          },
        }),
      (transport) => eventsClient(transport).listEvents({}),
    );
    expect(results.ours).toEqual(results["connect-node"]);
    expect(results.ours).toEqual({ code: "InvalidArgument", message: "page too big", violations: [["pageSize", "at most 1000"]] });
  });

  it("on an unexpected error in a handler", async () => {
    const results = await both(
      (router) =>
        router.service(eventsV1.EventsService, {
          listEvents: () => {
            throw new Error("boom");
          },
        }),
      (transport) => eventsClient(transport).listEvents({}),
    );
    expect(results.ours).toEqual(results["connect-node"]);
  });

  it("on a deadline the service does not meet", async () => {
    const results = await both(
      (router) =>
        router.service(eventsV1.EventsService, {
          listEvents: (_request, context) => new Promise((_resolve, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason))),
        }),
      (transport) => eventsClient(transport).listEvents({}, { timeoutMs: 150 }),
    );
    expect(results.ours).toMatchObject({ code: "DeadlineExceeded" });
    expect((results.ours as { code: string }).code).toEqual((results["connect-node"] as { code: string }).code);
  });

  it("on an unknown method (a service of an older release)", async () => {
    const results = await both(
      (router) => router.service(catalogueV1.CatalogueService, {}),
      (transport) => eventsClient(transport).listEvents({}),
    );
    expect(results.ours).toEqual(results["connect-node"]);
    expect(results.ours).toMatchObject({ code: "Unimplemented" });
  });

  it("on a stream: every message in order, whole, then its end", async () => {
    const results = await both(
      (router) =>
        router.service(catalogueV1.CatalogueService, {
          async *streamProductsJson() {
            for (const size of [0, 1, 70_000, 3]) yield chunk(size);
          },
        }),
      (transport) => readStream(transport),
    );
    expect(results.ours).toEqual(results["connect-node"]);
    expect(results.ours).toEqual({ value: [0, 1, 70_000, 3] });
  });

  it("on a stream that fails after its first message", async () => {
    const results = await both(
      (router) =>
        router.service(catalogueV1.CatalogueService, {
          async *streamProductsJson() {
            yield chunk(5);
            throw new ConnectError("no such filter", Code.InvalidArgument);
          },
        }),
      async (transport) => {
        const sizes: number[] = [];
        const error = await (async () => {
          for await (const message of catalogueClient(transport).streamProductsJson({})) sizes.push(message.productsJson.length);
        })().then(() => undefined, (e: unknown) => e);
        return { sizes, ...observed({ error }) };
      },
    );
    expect(results.ours).toEqual(results["connect-node"]);
    expect(results.ours).toEqual({ value: { sizes: [5], code: "InvalidArgument", message: "no such filter", violations: [] } });
  });

  it("on a service that cannot be reached, where it differs on purpose: unavailable, not internal", async () => {
    const server = await serve(() => undefined);
    await server.close();
    const results: Record<string, unknown> = {};
    for (const [name, make] of Object.entries(transports)) results[name] = observed(await settle(eventsClient(make(server.url)).listEvents({})));
    // connect-node reports a refused connection as Internal; the gateway answers it 503 with
    // Retry-After, as a service that is down (Unavailable), keeping the same network error.
    expect(results["connect-node"]).toMatchObject({ code: "Internal", message: expect.stringMatching(/ECONNREFUSED/) });
    expect(results.ours).toMatchObject({ code: "Unavailable", message: expect.stringMatching(/ECONNREFUSED/) });
  });
});
