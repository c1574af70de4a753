import { createHmac, timingSafeEqual } from "node:crypto";

/** A delivery that is not the platform's: a signature that does not match, or too old or new. */
export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
}

export interface VerifyOptions {
  /** How far webhook-timestamp may be from now, either way; 300 s when absent. */
  toleranceSeconds?: number;
  /** Now, in ms (tests). */
  now?: number;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

const header = (headers: HeaderBag, name: string): string | undefined => {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const found = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = found === undefined ? undefined : bag[found];
  return Array.isArray(value) ? value.join(" ") : value;
};

/**
 * Checks a webhook delivery (Standard Webhooks): `webhook-signature` holds space-separated
 * `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`; one match with any of the secrets passes, so
 * during a rotation both the old and the new secret verify. Answers the parsed body.
 * `payload` must be the body exactly as received (bytes or string), not re-serialized JSON.
 */
export function verify<T = unknown>(payload: string | Uint8Array, headers: HeaderBag, secret: string | string[], options: VerifyOptions = {}): T {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
  const seconds = Number(timestamp);
  const now = (options.now ?? Date.now()) / 1000;
  if (!/^\d+$/.test(timestamp) || Math.abs(now - seconds) > (options.toleranceSeconds ?? 300)) throw new WebhookVerificationError("webhook-timestamp too old, too new or unreadable");
  const body = typeof payload === "string" ? payload : Buffer.from(payload).toString("utf8");
  const given = signatures.split(" ").flatMap((s) => {
    const [version, sig] = s.split(",");
    return version === "v1" && sig ? [Buffer.from(sig, "base64")] : [];
  });
  for (const s of Array.isArray(secret) ? secret : [secret]) {
    const key = Buffer.from(s.startsWith("whsec_") ? s.slice(6) : s, "base64");
    const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
    if (given.some((g) => g.length === expected.length && timingSafeEqual(g, expected))) return JSON.parse(body) as T;
  }
  throw new WebhookVerificationError("no signature matches");
}
