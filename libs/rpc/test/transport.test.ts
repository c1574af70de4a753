import { spawn } from "node:child_process";
import http2 from "node:http2";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, createClient, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { catalogueV1, eventsV1, ValidationErrorsSchema } from "@analytics/contracts";
import { eventually } from "@analytics/testing";
import { createServiceTransport } from "../src";

/** A connect-node server (as every service runs) on a free port; `sessions` lets a test cut them. */
async function serve(routes: (router: ConnectRouter) => void) {
  const server = http2.createServer(connectNodeAdapter({ routes }));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => sessions.add(session));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const session of sessions) session.destroy();
    });
  return { url, sessions, close };
}

/** A raw HTTP/2 server that answers every call with `answer`: protocol faults connect-node never makes. */
async function rawServer(answer: (stream: http2.ServerHttp2Stream) => void) {
  const server = http2.createServer();
  server.on("stream", answer);
  // The client's session stays open after its call: closing the server ends it, or it would keep jest's worker alive.
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const close = () => {
    server.close();
    for (const session of sessions) session.destroy();
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close };
}

const chunk = (size: number, fill: number) => ({ productsJson: new Uint8Array(size).fill(fill), ids: [`id-${size}`] });

describe("createServiceTransport (the gateway's Connect client)", () => {
  it("sends the caller's headers and deadline and decodes the answer", async () => {
    let seen: { token: string | null; timeoutMs: number | undefined } | undefined;
    const server = await serve((router) =>
      router.service(eventsV1.EventsService, {
        listEvents: (request, context: HandlerContext) => {
          seen = { token: context.requestHeader.get("x-internal-token"), timeoutMs: context.timeoutMs() };
          return { events: [{ id: "e1", eventType: request.eventType }], totalCount: 7n };
        },
      }),
    );
    try {
      const client = createClient(eventsV1.EventsService, createServiceTransport(server.url));
      const answer = await client.listEvents({ eventType: "update_sku" }, { headers: { "X-Internal-Token": "secret" }, timeoutMs: 5000 });
      expect(answer.events.map((e) => [e.id, e.eventType])).toEqual([["e1", "update_sku"]]);
      expect(answer.totalCount).toBe(7n);
      expect(seen?.token).toBe("secret");
      expect(seen?.timeoutMs).toBeGreaterThan(4000);
    } finally {
      await server.close();
    }
  });

  it("gives a service's error with its code, message and details", async () => {
    const server = await serve((router) =>
      router.service(eventsV1.EventsService, {
        listEvents: () => {
          throw new ConnectError("page too big", Code.InvalidArgument, undefined, [{ desc: ValidationErrorsSchema, value: { violations: [{ path: "pageSize", message: "at most 1000" }] } }]);
        },
      }),
    );
    try {
      const client = createClient(eventsV1.EventsService, createServiceTransport(server.url));
      const error = await client.listEvents({}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectError);
      const connectError = error as ConnectError;
      expect([connectError.code, connectError.rawMessage]).toEqual([Code.InvalidArgument, "page too big"]);
      expect(connectError.findDetails(ValidationErrorsSchema)[0].violations).toEqual([expect.objectContaining({ path: "pageSize", message: "at most 1000" })]);
    } finally {
      await server.close();
    }
  });

  it("ends a call at its deadline when the service never answers, and resets its stream", async () => {
    // A frozen service (not connect-node, which would answer its own deadline): only the client's timer ends the call.
    let closed = false;
    const server = await rawServer((stream) => stream.on("close", () => (closed = true)));
    try {
      const client = createClient(eventsV1.EventsService, createServiceTransport(server.url));
      const error = await client.listEvents({}, { timeoutMs: 200 }).catch((e: unknown) => e);
      expect((error as ConnectError).code).toBe(Code.DeadlineExceeded);
      await eventually(async () => closed);
    } finally {
      server.close();
    }
  });

  it("ends a call at its deadline while its connection is still being attempted", async () => {
    // A host that drops connection attempts: a listener in a stopped process whose accept queue
    // is full, so the kernel answers no further SYN.
    const listener = spawn(process.execPath, ["-e", "require('net').createServer().listen({ host: '127.0.0.1', port: 0, backlog: 1 }, function () { console.log(this.address().port) })"]);
    try {
      const port = await new Promise<number>((resolve) => listener.stdout.once("data", (line: Buffer) => resolve(Number(line.toString()))));
      listener.kill("SIGSTOP");
      const fillers = Array.from({ length: 4 }, () => net.connect(port, "127.0.0.1").on("error", () => undefined));
      try {
        const client = createClient(eventsV1.EventsService, createServiceTransport(`http://127.0.0.1:${port}`));
        const error = (await client.listEvents({}, { timeoutMs: 300 }).catch((e: unknown) => e)) as ConnectError;
        expect(error.code).toBe(Code.DeadlineExceeded);
      } finally {
        for (const socket of fillers) socket.destroy();
      }
    } finally {
      listener.kill("SIGKILL");
    }
  });

  it("ends a call when the caller's signal aborts, with the caller's reason", async () => {
    const server = await serve((router) => router.service(eventsV1.EventsService, { listEvents: () => new Promise<never>(() => undefined) }));
    try {
      const client = createClient(eventsV1.EventsService, createServiceTransport(server.url));
      const caller = new AbortController();
      const call = client.listEvents({}, { signal: caller.signal }).catch((e: unknown) => e);
      caller.abort(new ConnectError("the client went away", Code.Canceled));
      const error = (await call) as ConnectError;
      expect([error.code, error.rawMessage]).toEqual([Code.Canceled, "the client went away"]);
      // A signal aborted before the call, without a reason: no request at all, still a ConnectError.
      const before = (await client.listEvents({}, { signal: AbortSignal.abort() }).catch((e: unknown) => e)) as ConnectError;
      expect(before).toBeInstanceOf(ConnectError);
      expect(before.code).toBe(Code.Canceled);
    } finally {
      await server.close();
    }
  });

  it("reports a service that cannot be reached as unavailable, keeping the network error", async () => {
    const server = await serve(() => undefined);
    await server.close();
    const client = createClient(eventsV1.EventsService, createServiceTransport(server.url));
    const error = (await client.listEvents({}).catch((e: unknown) => e)) as ConnectError;
    expect(error.code).toBe(Code.Unavailable);
    expect((error.cause as { code?: string }).code).toBe("ECONNREFUSED");
  });

  it("keeps one session for thousands of calls", async () => {
    // A stream read to its end must not be reset as well: the server counts resets of closed
    // streams as invalid frames and drops the whole session after 1000 of them.
    const server = await serve((router) => router.service(eventsV1.EventsService, { listEvents: () => ({ totalCount: 1n }) }));
    try {
      const client = createClient(eventsV1.EventsService, createServiceTransport(server.url));
      for (let i = 0; i < 1500; i++) expect((await client.listEvents({})).totalCount).toBe(1n);
      expect(server.sessions.size).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("streams a service's messages in order, whole, whatever their size", async () => {
    // An empty message is zero bytes on the wire.
    const sent = [chunk(10, 1), { productsJson: new Uint8Array(0), ids: [] }, chunk(3_000_000, 2), chunk(70_000, 3)];
    const server = await serve((router) =>
      router.service(catalogueV1.CatalogueService, {
        async *streamProductsJson() {
          yield* sent;
        },
      }),
    );
    try {
      const client = createClient(catalogueV1.CatalogueService, createServiceTransport(server.url));
      const received: { ids: string[]; productsJson: Uint8Array }[] = [];
      for await (const message of client.streamProductsJson({})) received.push(message);
      expect(received.map((m) => [m.ids[0], m.productsJson.length])).toEqual(sent.map((s) => [s.ids[0], s.productsJson.length]));
      expect(received.map((m, n) => Buffer.from(m.productsJson).equals(sent[n].productsJson))).toEqual([true, true, true, true]);
    } finally {
      await server.close();
    }
  });

  it("gives the messages before a stream's error, then the error", async () => {
    const server = await serve((router) =>
      router.service(catalogueV1.CatalogueService, {
        async *streamProductsJson() {
          yield chunk(5, 1);
          throw new ConnectError("no such filter", Code.InvalidArgument);
        },
      }),
    );
    try {
      const client = createClient(catalogueV1.CatalogueService, createServiceTransport(server.url));
      const received: number[] = [];
      const error = await (async () => {
        for await (const message of client.streamProductsJson({})) received.push(message.productsJson.length);
      })().catch((e: unknown) => e as ConnectError);
      expect(received).toEqual([5]);
      expect([error?.code, error?.rawMessage]).toEqual([Code.InvalidArgument, "no such filter"]);
    } finally {
      await server.close();
    }
  });

  it("cancels a stream its caller leaves, and the session serves the next call", async () => {
    let serviceSignal: AbortSignal | undefined;
    const server = await serve((router) =>
      router.service(catalogueV1.CatalogueService, {
        async *streamProductsJson(_request, context) {
          serviceSignal = context.signal;
          for (let i = 0; ; i++) yield chunk(100_000, i % 250);
        },
      }),
    );
    try {
      const client = createClient(catalogueV1.CatalogueService, createServiceTransport(server.url));
      const caller = new AbortController();
      for await (const message of client.streamProductsJson({}, { signal: caller.signal })) {
        expect(message.productsJson.length).toBe(100_000);
        caller.abort();
        break;
      }
      await eventually(async () => serviceSignal?.aborted);
      const next = client.streamProductsJson({}, { signal: AbortSignal.timeout(5000) });
      for await (const message of next) {
        expect(message.productsJson.length).toBe(100_000);
        break;
      }
      expect(server.sessions.size).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("reports a unary answer cut short by a reset as unavailable, never as a message", async () => {
    const server = await rawServer((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/proto" });
      stream.write(Buffer.from([0x0a, 0x05, 0x61]), () => stream.close(http2.constants.NGHTTP2_CANCEL));
    });
    try {
      const client = createClient(eventsV1.EventsService, createServiceTransport(server.url));
      const error = (await client.listEvents({}).catch((e: unknown) => e)) as ConnectError;
      expect(error.code).toBe(Code.Unavailable);
    } finally {
      server.close();
    }
  });

  it("ends a unary call at its deadline when its answer stops after its headers", async () => {
    const server = await rawServer((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/proto" });
      stream.write(Buffer.from([0x0a, 0x05, 0x61]));
    });
    try {
      const client = createClient(eventsV1.EventsService, createServiceTransport(server.url));
      const error = (await client.listEvents({}, { timeoutMs: 100 }).catch((e: unknown) => e)) as ConnectError;
      expect(error.code).toBe(Code.DeadlineExceeded);
    } finally {
      server.close();
    }
  });

  it("reports a stream that ends without its end-of-stream message as unavailable", async () => {
    const server = await rawServer((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/connect+proto" });
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
    });
    try {
      const client = createClient(catalogueV1.CatalogueService, createServiceTransport(server.url));
      const received: unknown[] = [];
      const error = await (async () => {
        for await (const message of client.streamProductsJson({})) received.push(message);
      })().catch((e: unknown) => e as ConnectError);
      expect(received).toHaveLength(1);
      expect(error?.code).toBe(Code.Unavailable);
    } finally {
      server.close();
    }
  });

  it("reports a stream cut by a service that stopped as unavailable", async () => {
    const server = await serve((router) =>
      router.service(catalogueV1.CatalogueService, {
        async *streamProductsJson() {
          yield chunk(5, 1);
          for (const session of server.sessions) session.destroy();
          await new Promise<never>(() => undefined);
        },
      }),
    );
    try {
      const client = createClient(catalogueV1.CatalogueService, createServiceTransport(server.url));
      const error = await (async () => {
        for await (const message of client.streamProductsJson({})) void message;
      })().catch((e: unknown) => e as ConnectError);
      expect(error?.code).toBe(Code.Unavailable);
    } finally {
      await server.close();
    }
  });
});
