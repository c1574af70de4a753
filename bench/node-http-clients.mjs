// Issue 48: would Connect over HTTP/1.1 with keep-alive cost the gateway less CPU than HTTP/2?
// Node's own clients alone, no Connect: 10 requests in flight against a server in a child process
// that answers 600 bytes after DELAY_MS (20: about 430 requests a second, the rate the gateway's
// calls run at in bench/gateway-hop.mjs), a 60-byte POST each. Prints this process's CPU per
// request (the client's) and requests a second for each protocol, alternating rounds.
// Usage: node bench/node-http-clients.mjs [--seconds S] [--rounds N] [--delay-ms D]
import { fork } from "node:child_process";
import http from "node:http";
import http2 from "node:http2";
import { arg } from "./platform.mjs";

const SECONDS = Number(arg("--seconds", 3));
const ROUNDS = Number(arg("--rounds", 3));
const DELAY_MS = Number(arg("--delay-ms", 20));

if (process.argv[2] === "serve") {
  const body = Buffer.alloc(600, 1);
  const answer = (request, response) => {
    request.resume();
    request.on("end", () => setTimeout(() => (response.writeHead(200, { "content-type": "application/proto", "content-length": body.length }), response.end(body)), DELAY_MS));
  };
  const h2 = http2.createServer(answer).listen(0, "127.0.0.1", () => {
    const h1 = http.createServer({ keepAliveTimeout: 60_000 }, answer).listen(0, "127.0.0.1", () => process.send({ h2: h2.address().port, h1: h1.address().port }));
  });
} else {
  const server = fork(new URL(import.meta.url).pathname, ["serve", "--delay-ms", String(DELAY_MS)]);
  const ports = await new Promise((resolve) => server.once("message", resolve));
  const payload = Buffer.alloc(60, 2);
  const headers = { "content-type": "application/proto", "connect-protocol-version": "1" };
  const session = http2.connect(`http://127.0.0.1:${ports.h2}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
  const read = (resolve, reject) => (response) => {
    response.on("data", () => {});
    response.on("end", resolve);
    response.on("error", reject);
  };
  const clients = {
    "HTTP/2": () =>
      new Promise((resolve, reject) => {
        const stream = session.request({ ":method": "POST", ":path": "/a.B/C", ...headers });
        read(resolve, reject)(stream);
        stream.end(payload);
      }),
    "HTTP/1.1 keep-alive": () =>
      new Promise((resolve, reject) => {
        const request = http.request({ agent, host: "127.0.0.1", port: ports.h1, method: "POST", path: "/a.B/C", headers: { ...headers, "content-length": payload.length } }, read(resolve, reject));
        request.on("error", reject);
        request.end(payload);
      }),
  };
  const measure = async (call) => {
    const end = performance.now() + SECONDS * 1000;
    const cpu = process.cpuUsage();
    let done = 0;
    await Promise.all(Array.from({ length: 10 }, async () => { while (performance.now() < end) (await call(), done++); }));
    const { user, system } = process.cpuUsage(cpu);
    return { rps: Math.round(done / SECONDS), cpuUsPerRequest: Math.round((user + system) / done) };
  };
  const results = Object.fromEntries(Object.keys(clients).map((name) => [name, []]));
  for (const call of Object.values(clients)) await measure(call);
  for (let round = 0; round < ROUNDS; round++) for (const [name, call] of Object.entries(clients)) results[name].push(await measure(call));
  for (const [name, rounds] of Object.entries(results)) console.log(`${name}: ${rounds.map((r) => `${r.cpuUsPerRequest} µs/request at ${r.rps}/s`).join(", ")}`);
  console.log(JSON.stringify({ nodeHttpClients: results }));
  session.close();
  agent.destroy();
  server.kill();
}
