import net from "node:net";
import { once } from "node:events";
import Fastify, { type FastifyInstance } from "fastify";
import type { AddressInfo } from "node:net";
import { installRequestDeadline } from "../src/http/request-deadline";

/**
 * REQUEST_TIMEOUT_MS per route: a request must arrive whole within it; an upload (an import's
 * file) only must not go that long without a byte. The client here is slow on purpose: it sends
 * a byte every PACE_MS, each pause well inside the deadline, the whole body well past it.
 */
const DEADLINE_MS = 600;
const PACE_MS = 150;

/** Sends a request whose body of `bytes` bytes trickles at PACE_MS a byte (`stopAfter`: then falls silent); resolves with the whole answer. */
async function slowRequest(port: number, path: string, bytes: number, stopAfter = bytes): Promise<string> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  let answer = "";
  socket.on("data", (chunk) => (answer += chunk.toString()));
  socket.on("error", () => undefined);
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/octet-stream\r\nContent-Length: ${bytes}\r\n\r\n`);
  let sent = 0;
  const pacer = setInterval(() => {
    if (sent < stopAfter && !socket.destroyed) socket.write("x");
    sent++;
  }, PACE_MS);
  await once(socket, "close");
  clearInterval(pacer);
  return answer;
}

describe("the request deadline (REQUEST_TIMEOUT_MS, per route)", () => {
  let app: FastifyInstance;
  let port: number;
  beforeAll(async () => {
    app = Fastify({ requestTimeout: 0 });
    installRequestDeadline(app, DEADLINE_MS);
    app.addContentTypeParser("application/octet-stream", (_request, payload, done) => done(null, payload));
    const count = async (request: { body: unknown }) => {
      let n = 0;
      for await (const chunk of request.body as AsyncIterable<Buffer>) n += chunk.length;
      return { received: n };
    };
    app.post("/whole", count);
    app.post("/upload", { config: { upload: true } }, count);
    await app.listen({ port: 0, host: "127.0.0.1" });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(() => app.close());

  it("answers 408 with a GeneralResponse when a request has not arrived whole in time, bytes or not", async () => {
    const answer = await slowRequest(port, "/whole", 10);
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
    expect(answer).toContain("Connection: close");
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toEqual({ statusCode: 408, error: "Request Timeout", message: "the request did not arrive within 0.6 s", code: "request_timeout" });
  });

  it("lets an upload take as long as its bytes keep coming", async () => {
    const answer = await slowRequest(port, "/upload", 10);
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
    expect(answer).toContain('{"received":10}');
  });

  it("ends an upload that falls silent for the deadline", async () => {
    const answer = await slowRequest(port, "/upload", 10, 2);
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
  });
});
