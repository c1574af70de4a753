import type { FastifyInstance } from "fastify";
import { STATUS_CODES, type IncomingMessage } from "node:http";
import { Socket } from "node:net";
import { generalResponse } from "@analytics/errors";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The body is a file streamed on as it arrives (an import): the deadline counts from its last byte. */
    upload?: boolean;
  }
}

/**
 * The request timeout (REQUEST_TIMEOUT_MS), per request rather than Node's one for the server: a
 * request must have arrived whole within it, and a file upload (a route with `config.upload`, a
 * 1 GiB import takes minutes) must not go that long without a byte. Past it the client gets a 408
 * GeneralResponse and the connection is closed. Checked every second (one timer for all), as Node
 * checked its own.
 */
export function installRequestDeadline(app: FastifyInstance, timeoutMs: number): void {
  const body = JSON.stringify(generalResponse(408, `the request did not arrive within ${timeoutMs / 1000} s`));
  // The request's id as on every other answer (X-Request-Id), so a client can name it.
  const answer = (id: string) =>
    `HTTP/1.1 408 ${STATUS_CODES[408]}\r\nConnection: close\r\nX-Request-Id: ${id}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  // The requests whose body is still arriving, checked together by one timer (not one per request).
  const arriving = new Set<{ id: string; raw: IncomingMessage; socket: Socket; upload: boolean; bytes: number; since: number }>();
  const check = setInterval(() => {
    const now = Date.now();
    for (const r of arriving) {
      if (r.raw.complete || r.socket.destroyed) arriving.delete(r);
      else if (r.upload && r.socket.bytesRead !== r.bytes) {
        r.bytes = r.socket.bytesRead;
        r.since = now;
      } else if (now - r.since >= timeoutMs) {
        arriving.delete(r);
        // As Node answered it: on the socket, whatever the handler is doing, then closed.
        r.socket.end(answer(r.id));
      }
    }
  }, Math.min(1_000, timeoutMs));
  check.unref();
  app.addHook("onClose", async () => clearInterval(check));
  app.addHook("onRequest", (request, _reply, done) => {
    const { raw } = request;
    // Arrived whole already, or injected (app.inject: no connection to wait on).
    if (!raw.complete && raw.socket instanceof Socket)
      arriving.add({ id: request.id, raw, socket: raw.socket, upload: request.routeOptions.config?.upload === true, bytes: raw.socket.bytesRead, since: Date.now() });
    done();
  });
}
