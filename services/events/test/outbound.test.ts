import dgram from "node:dgram";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { cAresResolve, isPublicAddress, postSafely, urlProblem, type OutboundOptions, type Resolve } from "../src/outbound";

/**
 * A DNS server on UDP for the test: A and AAAA records of the names it knows; a name it does not
 * know it never answers (a name server that is down or slow), and it counts those questions.
 */
async function startDnsServer(records: Record<string, { a?: string[]; aaaa?: string[] }>) {
  const socket = dgram.createSocket("udp4");
  const unanswered: string[] = [];
  socket.on("message", (query, from) => {
    // The question: labels from byte 12, then its type and class.
    const labels: string[] = [];
    let at = 12;
    while (query[at] !== 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]).toString("ascii"));
      at += query[at] + 1;
    }
    const question = query.subarray(12, at + 5);
    const type = query.readUInt16BE(at + 1);
    const name = labels.join(".").toLowerCase();
    const known = records[name];
    if (!known) return void unanswered.push(name);
    const addresses = (type === 1 ? known.a : type === 28 ? known.aaaa : undefined) ?? [];
    const answers = addresses.map((address) => {
      const data = type === 1 ? Buffer.from(address.split(".").map(Number)) : Buffer.from(hextetsOf(address).flatMap((h) => [h >> 8, h & 255]));
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      rr.writeUInt16BE(type, 2);
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(0, 6); // TTL
      rr.writeUInt16BE(data.length, 10);
      return Buffer.concat([rr, data]);
    });
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // its id
    header.writeUInt16BE(0x8180, 2); // an answer, recursion available, no error (no records: "no data")
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    socket.send(Buffer.concat([header, question, ...answers]), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
  return { server: `127.0.0.1:${socket.address().port}`, unanswered, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}

/** The eight groups of an IPv6 address written with "::" (the test's own records only). */
function hextetsOf(address: string): number[] {
  const [head, tail] = address.split("::").map((part) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []));
  return [...head, ...Array<number>(8 - head.length - (tail?.length ?? 0)).fill(0), ...(tail ?? [])];
}

/** Outbound webhook calls: public addresses only, checked at connect time; deadlines; bounded reads; no redirects. */
describe("safe outbound calls", () => {
  let server: http.Server;
  let hits: string[];
  let handler: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? "");
      req.resume();
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    hits = [];
    handler = (_req, res) => res.writeHead(204).end();
  });

  /** A resolver answering `address` for every name (a name that re-resolves to it since it was registered). */
  const resolvesTo =
    (address: string): Resolve =>
    async () => [{ address, family: address.includes(":") ? 6 : 4 }];
  const options = (o: Partial<OutboundOptions> = {}): OutboundOptions => ({ allowPrivate: false, connectTimeoutMs: 1_000, timeoutMs: 2_000, maxResponseBytes: 64 * 1024, ...o });
  const post = (url: string, o?: Partial<OutboundOptions>) => postSafely(url, {}, "{}", options(o));

  it("judges addresses: loopback, private, link-local (metadata), CGNAT, multicast, IPv6 local, tunnelled, translated and mapped ones are not public", () => {
    for (const a of [
      ...["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255"],
      ...["::1", "::", "fe80::1", "fd00:ec2::254", "ff02::1"],
      // IPv4-mapped, either spelling: judged by the IPv4 address they carry.
      ...["::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:7f00:1", "::ffff:a9fe:a9fe", "0:0:0:0:0:ffff:c0a8:101"],
      // IPv4-compatible (deprecated), IPv4-translated, 6to4, Teredo and local-use NAT64: reach IPv4 addresses, private ones too.
      ...["::7f00:1", "::127.0.0.1", "::a9fe:a9fe", "::ffff:0:808:808", "::ffff:0:7f00:1", "2002:7f00:1::1", "2002:808:808::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "64:ff9b:1::a00:1"],
      // NAT64's well-known prefix (DNS64): judged by the IPv4 address it carries.
      ...["64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b::10.0.0.1"],
    ]) {
      expect([a, isPublicAddress(a)]).toEqual([a, false]);
    }
    for (const a of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "2a00:1450:4001::1", "::ffff:8.8.8.8", "::ffff:808:808", "2001:4860:4860::8888", "64:ff9b::808:808", "64:ff9b::93.184.216.34"]) {
      expect([a, isPublicAddress(a)]).toEqual([a, true]);
    }
  });

  it("refuses to register http://, private literals and localhost unless private addresses are allowed", () => {
    expect(urlProblem("http://hooks.example.com", false)).toBe("must be an https:// URL");
    expect(urlProblem("ftp://hooks.example.com", true)).toBe("must be an https:// URL");
    for (const url of [
      ...["https://127.0.0.1/x", "https://169.254.169.254/latest", "https://[::1]/", "https://10.0.0.1", "https://2130706433/", "https://127.0.0.1./"],
      ...["https://localhost/", "https://LOCALHOST/", "https://localhost./", "https://hooks.localhost/", "https://hooks.localhost./"],
      ...["https://[::ffff:127.0.0.1]/", "https://[::7f00:1]/", "https://[2002:a9fe:a9fe::1]/", "https://[64:ff9b::a9fe:a9fe]/"],
    ]) {
      expect([url, urlProblem(url, false)]).toEqual([url, "must be a public address"]);
    }
    expect(urlProblem("https://user:pw@hooks.example.com", false)).toBe("must not carry credentials");
    expect(urlProblem("https://hooks.example.com/x", false)).toBeUndefined();
    expect(urlProblem("http://127.0.0.1:8080/x", true)).toBeUndefined();
  });

  it("fails an attempt whose name resolves, at connect time, to 127.0.0.1 or 169.254.169.254: nothing is sent", async () => {
    // http:// is let through here (allowPrivate off would refuse it first): the address check is what is under test.
    for (const address of ["127.0.0.1", "169.254.169.254", "::1"]) {
      const result = await postSafely(`https://rebinding.example.com:${port}/x`, {}, "{}", options({ resolve: resolvesTo(address) }));
      expect(result.statusCode).toBeUndefined();
      expect(result.error).toContain(`resolves to ${address}, not a public address`);
    }
    const literal = await post(`https://127.0.0.1:${port}/x`);
    expect(literal.error).toContain("must be a public address");
    expect(hits).toEqual([]);
  });

  it("checks every attempt on a kept-alive connection too: a name re-resolving to 169.254.169.254 fails though a connection to its old address is open", async () => {
    // A receiver on every loopback address, noting which address each request came in on and each connection.
    const arrivals: string[] = [];
    let connections = 0;
    const everywhere = http.createServer((req, res) => {
      arrivals.push(req.socket.localAddress ?? "");
      req.resume();
      res.writeHead(204).end();
    });
    everywhere.on("connection", () => connections++);
    await new Promise<void>((resolve) => everywhere.listen(0, "0.0.0.0", () => resolve()));
    try {
      let answer = "127.0.0.1";
      const resolver: Resolve = async () => [{ address: answer, family: 4 }];
      // 127.0.0.1 and 127.0.0.2 stand in for public addresses; 169.254.169.254 is judged as in production.
      const o = options({ allowPrivate: true, resolve: resolver, allowAddress: (a) => ["127.0.0.1", "127.0.0.2"].includes(a) || isPublicAddress(a) });
      const url = `http://hooks.example.com:${(everywhere.address() as AddressInfo).port}/x`;
      expect((await postSafely(url, {}, "{}", o)).statusCode).toBe(204);
      answer = "169.254.169.254";
      const refused = await postSafely(url, {}, "{}", o);
      expect(refused.statusCode).toBeUndefined();
      expect(refused.error).toBe("hooks.example.com resolves to 169.254.169.254, not a public address");
      // A kept-alive connection serves only the address it is connected to: a new one to 127.0.0.2.
      answer = "127.0.0.2";
      expect((await postSafely(url, {}, "{}", o)).statusCode).toBe(204);
      // And the first connection was kept alive all along: back to 127.0.0.1, no new connection.
      answer = "127.0.0.1";
      expect((await postSafely(url, {}, "{}", o)).statusCode).toBe(204);
      expect(arrivals).toEqual(["127.0.0.1", "127.0.0.2", "127.0.0.1"]);
      expect(connections).toBe(2);
    } finally {
      everywhere.closeAllConnections();
      await new Promise((resolve) => everywhere.close(resolve));
    }
  });

  it("sends once more on a new connection when a kept-alive one was closed by the receiver meanwhile", async () => {
    const o = options({ allowPrivate: true });
    const url = `http://127.0.0.1:${port}/again`;
    expect((await post(url, o)).statusCode).toBe(204);
    // The receiver drops its side of the kept-alive connection without our pool noticing yet.
    server.closeIdleConnections();
    expect((await post(url, o)).statusCode).toBe(204);
    expect(hits).toEqual(["/again", "/again"]);
  });

  describe("names resolved by c-ares", () => {
    let dns: Awaited<ReturnType<typeof startDnsServer>>;
    beforeAll(async () => {
      dns = await startDnsServer({ "hooks.test": { a: ["127.0.0.1"] }, "mixed.test": { a: ["127.0.0.1"], aaaa: ["::1"] } });
    });
    afterAll(() => dns.close());
    // 127.0.0.1 stands in for a public address; every other address is judged as in production.
    const viaTestDns = (o: Partial<OutboundOptions> = {}) =>
      options({ allowPrivate: true, allowAddress: (a) => a === "127.0.0.1" || isPublicAddress(a), resolve: cAresResolve({ servers: [dns.server], timeoutMs: 500, tries: 2 }), ...o });

    it("fails the attempt of a name whose server never answers, by c-ares' own timeout within the connect deadline, and holds up no other attempt", async () => {
      const o = viaTestDns({ connectTimeoutMs: 4_000, timeoutMs: 5_000 });
      // More such names at once than libuv's pool has threads (4): with dns.lookup they would hold them all and the next name would wait.
      let unresolved = 0;
      const slow = Array.from({ length: 8 }, (_, i) => postSafely(`http://silent-${i}.test:${port}/x`, {}, "{}", o).finally(() => unresolved++));
      const quick = await postSafely(`http://hooks.test:${port}/quick`, {}, "{}", o);
      expect(quick.statusCode).toBe(204);
      expect(unresolved).toBe(0);
      for (const [i, result] of (await Promise.all(slow)).entries()) {
        // c-ares gave up by itself ("ETIMEOUT"), before the attempt's connect deadline ("not resolved within 4000 ms").
        expect(result).toEqual({ error: `silent-${i}.test not resolved (ETIMEOUT)`, durationMs: expect.any(Number) });
      }
      expect(new Set(dns.unanswered)).toEqual(new Set(Array.from({ length: 8 }, (_, i) => `silent-${i}.test`)));
      expect(hits).toEqual(["/quick"]);
    });

    it("checks every address of both families: a name with a public A record and an AAAA record of ::1 fails the attempt", async () => {
      const result = await postSafely(`http://mixed.test:${port}/x`, {}, "{}", viaTestDns());
      expect(result).toEqual({ error: "mixed.test resolves to ::1, not a public address", durationMs: expect.any(Number) });
      expect(hits).toEqual([]);
    });

    it("answers localhost names with loopback addresses without asking the server", async () => {
      const result = await postSafely(`http://api.localhost.:${port}/local`, {}, "{}", viaTestDns({ allowAddress: undefined }));
      expect(result.statusCode).toBe(204);
      expect(dns.unanswered).not.toContain("api.localhost");
    });
  });

  it("reaches a local receiver only when private addresses are allowed (tests, local development)", async () => {
    const result = await postSafely(`http://receiver.test:${port}/ok`, {}, "{}", options({ allowPrivate: true, resolve: resolvesTo("127.0.0.1") }));
    expect(result.statusCode).toBe(204);
    expect(hits).toEqual(["/ok"]);
  });

  it("follows no redirect: a 302 is the answer", async () => {
    handler = (req, res) => (req.url === "/moved" ? res.writeHead(302, { location: `http://127.0.0.1:${port}/target` }).end() : res.writeHead(204).end());
    const result = await post(`http://127.0.0.1:${port}/moved`, { allowPrivate: true });
    expect(result.statusCode).toBe(302);
    expect(hits).toEqual(["/moved"]);
  });

  it("gives up on an endpoint that does not answer within the whole request's deadline", async () => {
    handler = () => undefined;
    const result = await post(`http://127.0.0.1:${port}/silent`, { allowPrivate: true, timeoutMs: 300 });
    expect(result.error).toBe("no answer within 300 ms");
    expect(result.durationMs).toBeLessThan(2_000);
  });

  it("gives up on a connection that is not made within the connect deadline (TLS handshake included)", async () => {
    // A TCP server that accepts and never speaks: the TLS handshake never completes.
    const accepted: net.Socket[] = [];
    const mute = net.createServer((socket) => void accepted.push(socket));
    await new Promise<void>((resolve) => mute.listen(0, "127.0.0.1", () => resolve()));
    try {
      const result = await post(`https://127.0.0.1:${(mute.address() as AddressInfo).port}/`, { allowPrivate: true, connectTimeoutMs: 200, timeoutMs: 5_000 });
      expect(result).toMatchObject({ error: "not connected within 200 ms" });
      expect(result.durationMs).toBeLessThan(2_000);
    } finally {
      accepted.forEach((socket) => socket.destroy());
      await new Promise((resolve) => mute.close(resolve));
    }
  });

  it("reads at most 64 KiB of an answer: an endless body is cut off", async () => {
    let written = 0;
    handler = (_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 120);
      const pump = () => {
        while (written < 50 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
        if (written < 50 * 1024 * 1024) res.once("drain", pump);
      };
      pump();
    };
    const result = await post(`http://127.0.0.1:${port}/endless`, { allowPrivate: true, timeoutMs: 10_000 });
    expect(result.statusCode).toBe(200);
    expect(written).toBeLessThan(50 * 1024 * 1024);
  });
});
