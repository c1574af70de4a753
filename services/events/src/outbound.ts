import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";

/**
 * Outbound calls to URLs an account chose (CONTRACT.md, "Webhooks"): only https:// and only to
 * public addresses, checked when the socket connects (the name is resolved by our own lookup on
 * every attempt, so a name that re-resolves to 127.0.0.1 or 169.254.169.254 after the endpoint
 * was registered fails then); a deadline on connecting and on the whole exchange; at most 64 KiB
 * of an answer read; redirects never followed (a 3xx is a failed attempt).
 */

const BLOCKED_V4: [string, number][] = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata (169.254.169.254)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
];
const BLOCKED_V6: [string, number][] = [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96], // NAT64
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7], // unique local (AWS's metadata fd00:ec2::254)
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
];
const blocked = new net.BlockList();
for (const [a, p] of BLOCKED_V4) blocked.addSubnet(a, p, "ipv4");
for (const [a, p] of BLOCKED_V6) blocked.addSubnet(a, p, "ipv6");

/** True for an address the platform may call: not loopback, private, link-local, multicast, metadata or reserved. */
export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return !blocked.check(address, "ipv4");
  if (family !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isPublicAddress(mapped[1]);
  return !blocked.check(address, "ipv6");
}

/** A URL's host without the brackets of an IPv6 literal. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");

/** Why a URL may not be registered, or undefined. Names are judged at connect time, literals and localhost now. */
export function urlProblem(raw: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) return "must be an https:// URL";
  if (url.username || url.password) return "must not carry credentials";
  if (allowPrivate) return undefined;
  const host = hostOf(url).toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return "must be a public address";
  if (net.isIP(host) && !isPublicAddress(host)) return "must be a public address";
  return undefined;
}

export class BlockedAddressError extends Error {
  readonly code = "EBLOCKEDADDRESS";
}

export type Resolve = (hostname: string, options: dns.LookupAllOptions, callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;

/** net's lookup, resolving with `resolve` and refusing any name with a non-public address among its answers. */
function guardedLookup(resolve: Resolve, allowPrivate: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const refused = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
      if (refused || !addresses.length) return callback(new BlockedAddressError(`${hostname} resolves to ${refused?.address ?? "nothing"}, not a public address`), "", 0);
      if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

export interface OutboundOptions {
  allowPrivate: boolean;
  connectTimeoutMs: number;
  /** The whole exchange: connecting, sending, the answer's headers and body. */
  timeoutMs: number;
  maxResponseBytes: number;
  /** Name resolution (tests inject one); dns.lookup by default. */
  resolve?: Resolve;
}

export interface OutboundResult {
  /** The answer's status, when one came. */
  statusCode?: number;
  /** Why no answer came (refused address, timeout, connection error). */
  error?: string;
  durationMs: number;
}

/** POSTs `body` to `url` under the rules above; never throws. A fresh connection per call: every attempt connects, so every attempt is checked. */
export function postSafely(rawUrl: string, headers: Record<string, string>, body: string, options: OutboundOptions): Promise<OutboundResult> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: Omit<OutboundResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(whole);
      clearTimeout(connecting);
      resolve({ ...r, durationMs: took() });
    };
    let connecting: NodeJS.Timeout | undefined;
    const whole = setTimeout(() => {
      done({ error: `no answer within ${options.timeoutMs} ms` });
      req.destroy();
    }, options.timeoutMs);
    const url = new URL(rawUrl);
    const problem = urlProblem(rawUrl, options.allowPrivate);
    if (problem) return done({ error: `url ${problem}` });
    const host = hostOf(url);
    if (net.isIP(host) && !options.allowPrivate && !isPublicAddress(host)) return done({ error: `${host} is not a public address` });
    const client = url.protocol === "https:" ? https : http;
    const req = client.request(url, {
      method: "POST",
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      agent: false,
      lookup: guardedLookup(options.resolve ?? (dns.lookup as unknown as Resolve), options.allowPrivate),
    });
    req.once("socket", (socket) => {
      connecting = setTimeout(() => {
        done({ error: `not connected within ${options.connectTimeoutMs} ms` });
        req.destroy();
      }, options.connectTimeoutMs);
      socket.once(url.protocol === "https:" ? "secureConnect" : "connect", () => clearTimeout(connecting));
    });
    req.once("error", (err: NodeJS.ErrnoException) => done({ error: err instanceof BlockedAddressError ? err.message : `${err.code ?? "error"}: ${err.message}` }));
    req.once("response", (res) => {
      let read = 0;
      res.on("data", (chunk: Buffer) => {
        read += chunk.length;
        // Enough: the status decides; a receiver streaming more is cut off.
        if (read >= options.maxResponseBytes) {
          done({ statusCode: res.statusCode });
          res.destroy();
        }
      });
      res.once("end", () => done({ statusCode: res.statusCode }));
      res.once("error", () => done({ statusCode: res.statusCode }));
      res.once("close", () => done({ statusCode: res.statusCode }));
    });
    req.end(body);
  });
}
