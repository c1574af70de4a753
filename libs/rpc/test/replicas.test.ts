import { spawn } from "node:child_process";
import http2 from "node:http2";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { eventsV1 } from "@analytics/contracts";
import { eventually } from "@analytics/testing";
import { createServiceTransport } from "../src";
import { Replica } from "../src/replicas";

/**
 * Replicas of one service on one port at several loopback addresses (Linux answers on all of
 * 127/8), as pods behind a headless Service; `calls` counts the calls each one served.
 */
async function replica(address: string, port: number, answer: () => Promise<void> | void = () => undefined) {
  const served = { calls: 0 };
  const server = http2.createServer(
    connectNodeAdapter({
      routes: (router) =>
        router.service(eventsV1.EventsService, {
          listEvents: async () => {
            served.calls++;
            await answer();
            return { totalCount: 1n };
          },
        }),
    }),
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, address, resolve));
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const session of sessions) session.destroy();
    });
  return { address, port: (server.address() as AddressInfo).port, served, sessions, server, stop };
}

/** A host name whose addresses the test sets, and how many times it was resolved. */
function dnsName(...addresses: string[]) {
  const name = { addresses, lookups: 0, lookup: async () => (name.lookups++, name.addresses) };
  return name;
}

/**
 * An address whose connections never complete, as a dead node's: a listener (Python's, since
 * Node accepts by itself) that never accepts, its one-place queue filled, so Linux drops the SYNs.
 */
async function blackhole(address: string, port: number) {
  const listener = spawn("python3", ["-c", `import socket,sys,time\ns=socket.socket()\ns.bind(("${address}",${port}))\ns.listen(0)\nprint("ready",flush=True)\ntime.sleep(120)`], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.stdout.once("data", () => resolve());
  });
  const filling: net.Socket[] = [];
  for (let i = 0; i < 2; i++) filling.push(net.connect({ host: address, port }).on("error", () => undefined));
  await new Promise((resolve) => filling[0].once("connect", resolve));
  return () => {
    for (const socket of filling) socket.destroy();
    listener.kill();
  };
}

/**
 * A replica in its own process (so it can be frozen with SIGSTOP): it answers every unary call
 * with an empty message and prints a dot per call.
 */
async function processReplica(address: string, port: number) {
  const script = `
    const http2 = require("node:http2");
    const server = http2.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        process.stdout.write(".");
        res.writeHead(200, { "content-type": "application/proto" });
        res.end();
      });
    });
    server.listen(${port}, "${address}", () => console.log("port " + server.address().port));`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const served = { calls: 0 };
  const listening = new Promise<number>((resolve, reject) => {
    child.once("error", reject);
    child.stdout.on("data", (data: Buffer) => {
      const text = data.toString();
      const port = /port (\d+)/.exec(text);
      if (port) resolve(Number(port[1]));
      served.calls += text.replace(/port \d+\n/, "").length;
    });
  });
  return { address, port: await listening, served, child, stop: () => child.kill("SIGKILL") };
}

/** A TCP proxy at address:port to `to`, that waits `delayMs` before connecting each connection. */
async function slowProxy(address: string, port: number, to: { address: string; port: number }, delayMs: number) {
  const server = net.createServer((socket) => {
    socket.pause();
    setTimeout(() => {
      const upstream = net.connect({ host: to.address, port: to.port });
      socket.pipe(upstream).pipe(socket);
      socket.resume();
      const end = () => (socket.destroy(), upstream.destroy());
      socket.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(port, address, resolve));
  return { stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("createServiceTransport over the replicas of a service", () => {
  it("sends a call whose stream a replica refuses (shutting down) to another, whatever its method", async () => {
    // Replica A refuses every stream (REFUSED_STREAM: by HTTP/2's rules, it processed nothing).
    const a = http2.createServer();
    a.on("stream", (stream) => stream.on("error", () => undefined).close(http2.constants.NGHTTP2_REFUSED_STREAM));
    // Its sessions stay open after a.close() (the client keeps its connection): ended in `finally`, or Jest's worker cannot exit.
    const aSessions: http2.ServerHttp2Session[] = [];
    a.on("session", (session) => aSessions.push(session));
    await new Promise<void>((resolve) => a.listen(0, "127.0.0.1", resolve));
    const port = (a.address() as AddressInfo).port;
    const b = await replica("127.0.0.2", port);
    try {
      const dns = dnsName("127.0.0.1", b.address);
      const client = createClient(eventsV1.EventsService, createServiceTransport(`http://events.refusing.test:${port}`, { lookup: dns.lookup }));
      for (let i = 0; i < 10; i++) expect((await client.listEvents({})).totalCount).toBe(1n);
      expect(b.served.calls).toBe(10);
    } finally {
      a.close();
      for (const session of aSessions) session.destroy();
      await b.stop();
    }
  });

  it("sends calls to the other replicas while one shuts down gracefully (GOAWAY), none failing", async () => {
    const a = await replica("127.0.0.1", 0, () => new Promise((resolve) => setTimeout(resolve, 20)));
    const b = await replica("127.0.0.2", a.port, () => new Promise((resolve) => setTimeout(resolve, 20)));
    try {
      const dns = dnsName(a.address, b.address);
      const client = createClient(eventsV1.EventsService, createServiceTransport(`http://events.goaway.test:${a.port}`, { lookup: dns.lookup, refreshMs: 60_000 }));
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < 40; i++) calls.push(client.listEvents({}));
      await eventually(async () => a.served.calls > 0);
      // As startService's close(): stop listening, GOAWAY every session; their calls finish.
      const closing = new Promise<void>((resolve) => {
        a.server.close(() => resolve());
        for (const session of a.sessions) session.close();
      });
      for (let i = 0; i < 40; i++) calls.push(client.listEvents({}));
      const results = await Promise.allSettled(calls);
      expect(results.filter((r) => r.status === "rejected")).toEqual([]);
      await closing;
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it("survives a replica closing an idle session (GOAWAY) while a call is being opened on it", async () => {
    // connect-node's session manager destroys an idle session that receives GOAWAY with an error,
    // and a call opened meanwhile makes it stop listening for that error: unheard, it would end
    // the process (a gateway crashed so when a service replica shut down in a rolling update).
    const server = http2.createServer((req, res) => req.resume().on("end", () => res.end()));
    const sessions = new Set<http2.ServerHttp2Session>();
    server.on("session", (session) => sessions.add(session));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const replica = new Replica(`http://events.idle.test:${port}`, "127.0.0.1", port);
    const call = async () => {
      const stream = await replica.request("/events.v1.EventsService/ListEvents", { ":method": "POST", ":path": "/events.v1.EventsService/ListEvents" });
      const { session } = stream;
      stream.end();
      stream.resume();
      await new Promise((resolve) => stream.once("close", resolve));
      return session!;
    };
    try {
      const session = await call();
      const goaway = new Promise<void>((resolve) =>
        session.once("goaway", () => {
          // After the manager's own listener: the session is destroyed, its error not yet emitted.
          void call().catch(() => undefined);
          resolve();
        }),
      );
      const closed = new Promise((resolve) => session.once("close", resolve));
      for (const s of sessions) s.close();
      await goaway;
      await closed;
      // The process lives on, and the replica answers calls on a new session.
      expect(await call()).not.toBe(session);
    } finally {
      replica.retire();
      for (const s of sessions) s.destroy();
      server.close();
    }
  });

  it("lets a call still opening on a replica gone from the name finish there", async () => {
    const target = await replica("127.0.0.3", 0);
    // 127.0.0.1 takes 300 ms to connect (to the replica at 127.0.0.3); then the name lists only 127.0.0.2.
    const proxy = await slowProxy("127.0.0.1", target.port, target, 300);
    const b = await replica("127.0.0.2", target.port);
    const dns = dnsName("127.0.0.1");
    try {
      const client = createClient(eventsV1.EventsService, createServiceTransport(`http://events.retire.test:${target.port}`, { lookup: dns.lookup, refreshMs: 20 }));
      const call = client.listEvents({});
      dns.addresses = [b.address];
      const lookups = dns.lookups;
      await eventually(async () => dns.lookups >= lookups + 2);
      expect((await call).totalCount).toBe(1n);
      expect([target.served.calls, b.served.calls]).toEqual([1, 0]);
    } finally {
      await proxy.stop();
      await target.stop();
      await b.stop();
    }
  });

  it("resolves the name again at once when a replica cannot be connected to (a restarted pod's new address)", async () => {
    const a = await replica("127.0.0.1", 0);
    const dns = dnsName(a.address);
    try {
      // The periodic resolution is an hour away: only a failed connection makes the client look again.
      const client = createClient(eventsV1.EventsService, createServiceTransport(`http://events.moved.test:${a.port}`, { lookup: dns.lookup, refreshMs: 3_600_000 }));
      expect((await client.listEvents({})).totalCount).toBe(1n);
      await a.stop();
      const c = await replica("127.0.0.3", a.port);
      try {
        dns.addresses = [c.address];
        for (let i = 0; i < 5; i++) expect((await client.listEvents({})).totalCount).toBe(1n);
        expect(c.served.calls).toBe(5);
      } finally {
        await c.stop();
      }
    } finally {
      await a.stop();
    }
  });

  it("takes a frozen replica (SIGSTOP) out of the rotation within a second or two, and back once it answers again", async () => {
    const a = await processReplica("127.0.0.1", 0);
    const b = await processReplica("127.0.0.2", a.port);
    try {
      const dns = dnsName(a.address, b.address);
      const client = createClient(eventsV1.EventsService, createServiceTransport(`http://events.frozen.test:${a.port}`, { lookup: dns.lookup, firstByteTimeoutMs: 300 }));
      for (let i = 0; i < 10; i++) await client.listEvents({});
      expect([a.served.calls, b.served.calls]).toEqual([5, 5]);

      a.child.kill("SIGSTOP");
      const frozenAt = Date.now();
      // Steady calls, one every 20 ms, each with a 3 s deadline: those sent to A before it was
      // found frozen wait out their deadline; every call sent after that is answered by B at once.
      const late: { startedAfterMs: number; ms: number; ok: boolean }[] = [];
      const calls: Promise<void>[] = [];
      while (Date.now() - frozenAt < 2_500) {
        const started = Date.now();
        calls.push(
          client.listEvents({}, { timeoutMs: 3_000 }).then(
            () => void late.push({ startedAfterMs: started - frozenAt, ms: Date.now() - started, ok: true }),
            () => void late.push({ startedAfterMs: started - frozenAt, ms: Date.now() - started, ok: false }),
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await Promise.all(calls);
      // Found frozen after 300 ms without an answer plus 300 ms without a PING's: from 1 s on, all are quick.
      const afterEjection = late.filter((c) => c.startedAfterMs > 1_000);
      expect(afterEjection.length).toBeGreaterThan(20);
      expect(afterEjection.filter((c) => !c.ok || c.ms > 500)).toEqual([]);

      // Thawed, it answers the background probe and gets calls again.
      a.child.kill("SIGCONT");
      const before = a.served.calls;
      await eventually(async () => {
        await client.listEvents({});
        return a.served.calls > before;
      });
    } finally {
      a.child.kill("SIGCONT");
      a.stop();
      b.stop();
    }
  });

  it("resolves the name again at once when its only known replica is found frozen, and calls the new one", async () => {
    // A rolling update: the name lists a new replica B the client has not resolved yet (its
    // refresh is a minute away) when A, the only one it knows, freezes.
    const a = await processReplica("127.0.0.1", 0);
    const b = await processReplica("127.0.0.2", a.port);
    try {
      const dns = dnsName(a.address);
      const client = createClient(eventsV1.EventsService, createServiceTransport(`http://events.replaced.test:${a.port}`, { lookup: dns.lookup, refreshMs: 60_000, firstByteTimeoutMs: 300 }));
      await client.listEvents({});
      dns.addresses = [a.address, b.address];
      a.child.kill("SIGSTOP");
      const frozenAt = Date.now();
      const late: { startedAfterMs: number; ms: number; ok: boolean }[] = [];
      const calls: Promise<void>[] = [];
      while (Date.now() - frozenAt < 2_000) {
        const started = Date.now();
        const done = (ok: boolean) => () => void late.push({ startedAfterMs: started - frozenAt, ms: Date.now() - started, ok });
        calls.push(client.listEvents({}, { timeoutMs: 3_000 }).then(done(true), done(false)));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await Promise.all(calls);
      // Found frozen after 300 ms plus 300 ms: from 1 s on, every call is B's, at once.
      const afterEjection = late.filter((c) => c.startedAfterMs > 1_000);
      expect(afterEjection.length).toBeGreaterThan(20);
      expect(afterEjection.filter((c) => !c.ok || c.ms > 500)).toEqual([]);
      expect(b.served.calls).toBeGreaterThan(20);
    } finally {
      a.child.kill("SIGCONT");
      a.stop();
      b.stop();
    }
  });

  it("takes a replica whose connection hangs for broken after connectTimeoutMs, and sends its calls to another", async () => {
    const a = await replica("127.0.0.1", 0);
    const stopHole = await blackhole("127.0.0.4", a.port);
    try {
      const dns = dnsName(a.address, "127.0.0.4");
      const client = createClient(eventsV1.EventsService, createServiceTransport(`http://events.hole.test:${a.port}`, { lookup: dns.lookup, connectTimeoutMs: 200 }));
      // Without a connect timeout every other call would wait out its whole deadline (here 2 s).
      for (let i = 0; i < 6; i++) expect((await client.listEvents({}, { timeoutMs: 2_000 })).totalCount).toBe(1n);
      expect(a.served.calls).toBe(6);
    } finally {
      stopHole();
      await a.stop();
    }
  });

  it("spreads calls over every address of the service's name, leaves a stopped replica and takes in a new one", async () => {
    const a = await replica("127.0.0.1", 0);
    const b = await replica("127.0.0.2", a.port);
    const dns = dnsName(a.address, b.address);
    const stops = [a.stop, b.stop];
    try {
      const client = createClient(eventsV1.EventsService, createServiceTransport(`http://events.replicas.test:${a.port}`, { lookup: dns.lookup, refreshMs: 50 }));
      for (let i = 0; i < 100; i++) await client.listEvents({});
      expect([a.served.calls, b.served.calls]).toEqual([50, 50]);

      // A replica stops: a call sent its way cannot connect, has sent nothing, and goes to the other.
      await b.stop();
      const before = a.served.calls;
      for (let i = 0; i < 20; i++) expect((await client.listEvents({})).totalCount).toBe(1n);
      expect(a.served.calls - before).toBe(20);

      // A new replica appears in the name's addresses: calls reach it after the next resolution.
      const c = await replica("127.0.0.3", a.port);
      stops.push(c.stop);
      dns.addresses = [a.address, c.address];
      await eventually(async () => {
        await client.listEvents({});
        return c.served.calls > 0;
      });
      const [fromA, fromC] = [a.served.calls, c.served.calls];
      for (let i = 0; i < 20; i++) await client.listEvents({});
      expect([a.served.calls - fromA, c.served.calls - fromC]).toEqual([10, 10]);
    } finally {
      for (const stop of stops) await stop();
    }
  });

  it("closes the session of a replica gone from the name once its calls have ended", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const a = await replica("127.0.0.1", 0, () => held);
    const b = await replica("127.0.0.2", a.port);
    const dns = dnsName(a.address);
    try {
      const client = createClient(eventsV1.EventsService, createServiceTransport(`http://events.replicas.test:${a.port}`, { lookup: dns.lookup, refreshMs: 50 }));
      const call = client.listEvents({});
      await eventually(async () => a.served.calls === 1);
      dns.addresses = [b.address];
      // Two resolutions later the new list is surely applied.
      const lookups = dns.lookups;
      await eventually(async () => dns.lookups >= lookups + 2);
      await client.listEvents({});
      expect([a.sessions.size, b.served.calls]).toEqual([1, 1]);
      release();
      expect((await call).totalCount).toBe(1n);
      await eventually(async () => a.sessions.size === 0);
    } finally {
      release();
      await a.stop();
      await b.stop();
    }
  });

  it("never sends a call twice when its replica may have received it", async () => {
    // Replica A accepts every call's stream and then drops its session: the call may have run.
    const a = http2.createServer();
    a.on("stream", (stream) => stream.session?.destroy());
    await new Promise<void>((resolve) => a.listen(0, "127.0.0.1", resolve));
    const port = (a.address() as AddressInfo).port;
    const b = await replica("127.0.0.2", port);
    try {
      const dns = dnsName("127.0.0.1", b.address);
      const client = createClient(eventsV1.EventsService, createServiceTransport(`http://events.replicas.test:${port}`, { lookup: dns.lookup }));
      const errors: Code[] = [];
      for (let i = 0; i < 10; i++) await client.listEvents({}).catch((e: unknown) => errors.push(ConnectError.from(e).code));
      // Every call A took failed, and none of them was sent to B as well.
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.length + b.served.calls).toBe(10);
      expect(new Set(errors)).toEqual(new Set([Code.Unavailable]));
    } finally {
      a.close();
      await b.stop();
    }
  });

  it("reports a name that does not resolve as unavailable, and resolves it again on the next call", async () => {
    const a = await replica("127.0.0.1", 0);
    const dns = dnsName();
    dns.lookup = async () => {
      dns.lookups++;
      if (dns.addresses.length === 0) throw Object.assign(new Error("getaddrinfo ENOTFOUND events.replicas.test"), { code: "ENOTFOUND" });
      return dns.addresses;
    };
    try {
      const client = createClient(eventsV1.EventsService, createServiceTransport(`http://events.replicas.test:${a.port}`, { lookup: dns.lookup }));
      const error = (await client.listEvents({}).catch((e: unknown) => e)) as ConnectError;
      expect([error.code, (error.cause as { code?: string }).code]).toEqual([Code.Unavailable, "ENOTFOUND"]);
      dns.addresses = [a.address];
      expect((await client.listEvents({})).totalCount).toBe(1n);
    } finally {
      await a.stop();
    }
  });
});
