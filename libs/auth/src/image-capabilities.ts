import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The key image URLs are signed with, derived from the server's secret (JWT_SECRET), as 64 hex
 * digits: what IMAGE_URL_KEY holds where a process should sign image URLs without holding the
 * secret that signs access tokens (the events service).
 */
export function imageUrlKey(secret: string): string {
  return createHmac("sha256", secret).update("image capability urls v1").digest("hex");
}

/**
 * Image URLs usable where no bearer token is sent (an <img> tag, a spreadsheet cell): an
 * account-scoped capability path whose signature is an HMAC of account and content hash under
 * the image URL key (`signing`: the key itself, IMAGE_URL_KEY, or the secret it derives from,
 * JWT_SECRET); absolute when PUBLIC_BASE_URL is set. Shared by the gateway (GET /products, GET
 * /events) and the events service's webhook deliveries, whose `data` must be the entry exactly as
 * GET /events answers it.
 */
export function imageCapabilities(signing: string | { key: string }, publicBaseUrl = "") {
  const key = Buffer.from(typeof signing === "string" ? imageUrlKey(signing) : signing.key, "hex");
  const signature = (accountId: string, sha256: string) => createHmac("sha256", key).update(`${accountId}:${sha256}`).digest("base64url");
  return {
    signature,
    verify: (accountId: string, sha256: string, sig: string) => {
      const expected = Buffer.from(signature(accountId, sha256));
      const given = Buffer.from(sig);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
    /** The catalogue's `/v2/api/images/<sha256>` as the account's capability URL. */
    url: (accountId: string, imageUrl: string) => {
      const sha256 = /^\/v2\/api\/images\/([0-9a-f]{64})$/.exec(imageUrl)?.[1];
      return sha256 ? `${publicBaseUrl}/v2/api/images/${accountId}/${sha256}/${signature(accountId, sha256)}` : imageUrl;
    },
  };
}
export type ImageCapabilities = ReturnType<typeof imageCapabilities>;

/**
 * A product as JSON text (a queue entry's payload) with its catalogue image path made the
 * account's capability URL, as GET /products answers it; the text is not parsed.
 */
export function withCapabilityImageUrl(images: ImageCapabilities, accountId: string, json: string): string {
  return json.replace(/("imageUrl"\s*:\s*)"(\/v2\/api\/images\/[0-9a-f]{64})"/g, (_, field: string, path: string) => `${field}${JSON.stringify(images.url(accountId, path))}`);
}
