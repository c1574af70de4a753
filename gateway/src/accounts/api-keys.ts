import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";

/**
 * An API key is `<apiKeyId>.<secret>`: the id finds the row, the secret is checked against its
 * keyed hash in constant time.
 */
export function newApiKey(pepper: string): { apiKeyId: string; apiKey: string; secretHash: string } {
  const apiKeyId = randomUUID();
  const secret = randomBytes(32).toString("base64url");
  return { apiKeyId, apiKey: `${apiKeyId}.${secret}`, secretHash: hashSecret(pepper, secret) };
}

export function hashSecret(pepper: string, secret: string): string {
  return createHmac("sha256", pepper).update(secret).digest("hex");
}

export function splitApiKey(apiKey: string): { apiKeyId: string; secret: string } | undefined {
  const dot = apiKey.indexOf(".");
  if (dot <= 0) return undefined;
  return { apiKeyId: apiKey.slice(0, dot), secret: apiKey.slice(dot + 1) };
}

/** Compares a secret with a stored hash; with no stored hash it still does the same work. */
export function secretMatches(pepper: string, secret: string, storedHash: string | undefined): boolean {
  const given = Buffer.from(hashSecret(pepper, secret), "hex");
  const stored = Buffer.from(storedHash ?? "0".repeat(64), "hex");
  return timingSafeEqual(given, stored.length === given.length ? stored : Buffer.alloc(given.length)) && storedHash !== undefined;
}
