import { SignJWT, jwtVerify } from "jose";
import type { Caller } from "@analytics/auth";

const ISSUER = "analytics-gateway";
const AUDIENCE = "analytics-api";

/** HS256 access tokens naming the account (sub) and the API key (akid) they were issued for. */
export class TokenIssuer {
  private readonly key: Uint8Array;
  /** Tokens already verified, with their expiry: a client sends the same token for an hour. */
  private readonly verified = new Map<string, { caller: Caller; expiresAt: number }>();
  private readonly maxVerified = 100_000;

  constructor(
    secret: string,
    readonly ttlSeconds: number,
    private readonly now = () => Date.now(),
  ) {
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
    const known = this.verified.get(token);
    if (known && known.expiresAt > this.now()) return known.caller;
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ["HS256"], currentDate: new Date(this.now()) });
      if (typeof payload.sub !== "string" || typeof payload.akid !== "string" || typeof payload.exp !== "number") return undefined;
      const caller = { accountId: payload.sub, apiKeyId: payload.akid };
      if (this.verified.size >= this.maxVerified) this.verified.clear();
      this.verified.set(token, { caller, expiresAt: payload.exp * 1000 });
      return caller;
    } catch {
      this.verified.delete(token);
      return undefined;
    }
  }
}
