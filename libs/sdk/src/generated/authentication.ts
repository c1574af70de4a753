// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, RequestOptions } from "../core/client";

export type CreateAccessTokenBody = {
  accountID: string;
  apiKey: string;
};

/** Exchange an account id and API key for a bearer access token. */
export class Authentication {
  constructor(private readonly client: Client) {}

  /** Exchange an account id and API key for a bearer token */
  createAccessToken(body: CreateAccessTokenBody, options?: RequestOptions): Promise<{
    accessToken: string;
    tokenType: "Bearer";
    expiresIn: number;
  }> {
    return this.client.call<{
    accessToken: string;
    tokenType: "Bearer";
    expiresIn: number;
  }>({ method: "POST", path: `/v2/api/auth`, auth: "none" }, undefined, body, options);
  }
}
