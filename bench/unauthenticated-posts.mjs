// Gateway memory under four parallel 50 MiB unauthenticated POSTs (issue 7, "bodies are read before
// authentication"). Runs against a platform already started (`npm start`), whose process id and
// address are given: node bench/unauthenticated-posts.mjs <pid> [http://127.0.0.1:8080]
// Prints the resident memory before and its peak (VmHWM) after, in MiB, and the statuses.
import { readFileSync } from "node:fs";
import http from "node:http";

const [pid, base = "http://127.0.0.1:8080"] = process.argv.slice(2);
const MiB = 1024 * 1024;
const memory = () => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)[1]);
  return { rssMiB: Math.round(kib("VmRSS") / 1024), peakMiB: Math.round(kib("VmHWM") / 1024) };
};

const SIZE = 50 * MiB - 16; // just within the image batch route's 50 MiB limit

/** One unauthenticated POST of a 50 MiB JSON body to the image batch route, chunked or with its Content-Length. */
function post(announced) {
  return new Promise((resolve) => {
    const url = new URL("/v2/api/products/imageupload/batch", base);
    const req = http.request(url, { method: "POST", headers: { "content-type": "application/json", ...(announced ? { "content-length": SIZE } : {}) } });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", (e) => resolve(e.code));
    // ["xxxx…x"]: one string of almost 50 MiB in an array, sent in 1 MiB chunks.
    const chunk = Buffer.alloc(MiB, "x");
    req.write('["');
    let left = SIZE - 4;
    const write = () => {
      while (left > 0) {
        const part = chunk.subarray(0, Math.min(MiB, left));
        left -= part.length;
        if (left === 0) return req.end(Buffer.concat([part, Buffer.from('"]')]));
        if (!req.write(part)) return req.once("drain", write);
      }
    };
    write();
  });
}

const before = memory();
const chunked = await Promise.all([1, 2, 3, 4].map(() => post(false)));
const announced = await Promise.all([1, 2, 3, 4].map(() => post(true)));
const after = memory();
console.log(JSON.stringify({ before, after, statusesChunked: chunked, statusesWithContentLength: announced }));
