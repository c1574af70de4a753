// Issue 48 item 2: what answering a one-chunk page whole saves (jsonArrayStream's `whole`,
// gateway/src/http/json-stream.ts). A bare Fastify with the gateway's compression plugin answers
// the same JSON of one product as a stream of its pieces (as before) and as one Buffer; a client
// process keeps 10 requests in flight, alternating rounds. Reported: this (server) process's CPU
// per request, median of the rounds.
// Usage: node bench/one-chunk-answer.mjs [--seconds S] [--rounds N]
import { spawn } from "node:child_process";
import { Readable } from "node:stream";
import compress from "@fastify/compress";
import Fastify from "fastify";
import { arg, median } from "./platform.mjs";

const SECONDS = Number(arg("--seconds", 2));
const ROUNDS = Number(arg("--rounds", 5));
const CLIENT = `
  const [url, seconds] = process.argv.slice(1);
  const end = Date.now() + Number(seconds) * 1000;
  let n = 0;
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (Date.now() < end) { await (await fetch(url, { headers: { "accept-encoding": "identity" } })).arrayBuffer(); n++; }
  }));
  process.stdout.write(String(n));`;

const product = JSON.stringify({ id: 501, uuid: "00000000-0000-4000-8000-000000000000", key: "K-500", sku: "S-500", season: "SS27", productName: "P 500", imageUrl: null, prices: [] });
const app = Fastify();
await app.register(compress, { global: true, threshold: 1024, encodings: ["br", "gzip"] });
app.get("/stream", async (_request, reply) => {
  async function* pieces() {
    yield Buffer.from("[");
    yield Buffer.from(product);
    yield Buffer.from("]");
  }
  reply.type("application/json; charset=utf-8");
  return Readable.from(pieces());
});
app.get("/whole", async (_request, reply) => {
  reply.type("application/json; charset=utf-8");
  return Buffer.concat([Buffer.from("["), Buffer.from(product), Buffer.from("]")]);
});
await app.listen({ port: 0, host: "127.0.0.1" });
const base = `http://127.0.0.1:${app.server.address().port}`;

/** One round of `path`: this process's CPU microseconds per request. */
const round = (path) =>
  new Promise((resolve) => {
    const client = spawn(process.execPath, ["--input-type=module", "-e", CLIENT, base + path, String(SECONDS)], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    client.stdout.on("data", (d) => (out += d));
    const cpu = process.cpuUsage();
    client.on("exit", () => {
      const used = process.cpuUsage(cpu);
      resolve((used.user + used.system) / Number(out));
    });
  });

try {
  await round("/stream");
  await round("/whole");
  const us = { stream: [], whole: [] };
  for (let r = 0; r < ROUNDS; r++) for (const path of ["stream", "whole"]) us[path].push(await round(`/${path}`));
  for (const path of ["stream", "whole"]) console.log(`${path}: ${median(us[path]).toFixed(0)} µs of CPU per request (rounds: ${us[path].map((x) => x.toFixed(0)).join(", ")})`);
  console.log(JSON.stringify({ oneChunkAnswer: { streamUs: +median(us.stream).toFixed(0), wholeUs: +median(us.whole).toFixed(0) } }));
} finally {
  await app.close();
}
