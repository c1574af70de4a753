import { SignJWT, jwtVerify } from "jose";
import type { Caller } from "@analytics/auth";

const ISSUER = "analytics-gateway";
const AUDIENCE = "analytics-api";

/** HS256 access tokens naming the account (sub) and the API key (akid) they were issued for. */
export class TokenIssuer {
  private readonly key: Uint8Array;

  constructor(secret: string, readonly ttlSeconds: number) {
    this.key = new TextEncoder().encode(secret);
  }

  issue(caller: Caller): Promise<string> {
    return new SignJWT({ akid: caller.apiKeyId })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(caller.accountId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.key);
  }

  /** The caller of a valid, unexpired token; undefined for anything else. */
  async verify(token: string): Promise<Caller | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ["HS256"] });
      if (typeof payload.sub !== "string" || typeof payload.akid !== "string") return undefined;
      return { accountId: payload.sub, apiKeyId: payload.akid };
    } catch {
      return undefined;
    }
  }
}
