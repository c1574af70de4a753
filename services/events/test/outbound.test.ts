import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { isPublicAddress, postSafely, urlProblem, type OutboundOptions, type Resolve } from "../src/outbound";

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
    (_host, _options, callback) =>
      callback(null, [{ address, family: address.includes(":") ? 6 : 4 }]);
  const options = (o: Partial<OutboundOptions> = {}): OutboundOptions => ({ allowPrivate: false, connectTimeoutMs: 1_000, timeoutMs: 2_000, maxResponseBytes: 64 * 1024, ...o });
  const post = (url: string, o?: Partial<OutboundOptions>) => postSafely(url, {}, "{}", options(o));

  it("judges addresses: loopback, private, link-local (metadata), CGNAT, multicast, IPv6 local and mapped ones are not public", () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fd00:ec2::254", "::ffff:127.0.0.1", "::ffff:10.0.0.1"]) {
      expect([a, isPublicAddress(a)]).toEqual([a, false]);
    }
    for (const a of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) expect([a, isPublicAddress(a)]).toEqual([a, true]);
  });

  it("refuses to register http://, private literals and localhost unless private addresses are allowed", () => {
    expect(urlProblem("http://hooks.example.com", false)).toBe("must be an https:// URL");
    expect(urlProblem("ftp://hooks.example.com", true)).toBe("must be an https:// URL");
    for (const url of ["https://127.0.0.1/x", "https://169.254.169.254/latest", "https://[::1]/", "https://localhost/", "https://10.0.0.1"]) expect([url, urlProblem(url, false)]).toEqual([url, "must be a public address"]);
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
      const resolver: Resolve = (_host, _options, callback) => callback(null, [{ address: answer, family: 4 }]);
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
