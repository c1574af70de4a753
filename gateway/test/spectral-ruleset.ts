import { oas } from "@stoplight/spectral-rulesets";
import owaspRuleset from "@stoplight/spectral-owasp-ruleset";

const owasp = ((owaspRuleset as { default?: unknown }).default ?? owaspRuleset) as { rules: Record<string, Record<string, unknown>> };

/**
 * The Spectral ruleset `npm test` applies to the served OpenAPI document (gateway/test/spectral.test.ts):
 * spectral:oas (recommended) and the OWASP API security ruleset. Rules turned off, one line why each:
 */
export const disabledRules: Record<string, string> = {
  "owasp:api8:2023-define-cors-origin":
    "asks for Access-Control-Allow-Origin on every response; CORS is deployment configuration (CORS_ORIGINS), off by default",
  "owasp:api2:2023-write-restricted": "flags POST /v2/api/auth, the sign-in itself, which cannot require the token it issues",
  "owasp:api2:2023-no-credentials-in-url": "flags the path parameter apiKeyId, the key's public id, not its secret",
  "owasp:api1:2023-no-numeric-ids":
    "flags /fxrates/{id}: FX rates have the specification's numeric ids, and every lookup is scoped to the caller's account (another account's id is a 404, e2e/pricing)",
};

/** Input limits are checked where input is: request bodies and parameters (responses are the server's own values). */
const requestOnly = (given: string[]) => (rule: string) => ({ ...owasp.rules[rule], given });
const stringGiven = ['$.paths[*][*].requestBody..[?(@ && @.type == "string")]', '$.paths[*][*].parameters[?(@.schema && @.schema.type == "string")].schema'];
const arrayGiven = ['$.paths[*][*].requestBody..[?(@ && @.type == "array")]', '$.paths[*][*].parameters[?(@.schema && @.schema.type == "array")].schema'];
const integerGiven = ['$.paths[*][*].requestBody..[?(@ && @.type == "integer")]', '$.paths[*][*].parameters[?(@.schema && @.schema.type == "integer")].schema'];

/**
 * Answers without an account's bucket, so without RateLimit headers (limits/rate-limits.ts), left out
 * of the OWASP rate-limit rules; every other operation's answers are checked (spectral.test.ts):
 */
export const rateLimitExemptions: Record<string, string> = {
  "/v2/api/auth": "the sign-in has no account yet: its own brake (failed attempts per address, 429 with Retry-After)",
  "/admin/": "the deployment's administration: the same brake as /auth, no account's bucket",
  "/v2/api/images/{accountId}/": "image capability URLs take no token and are cached a year by browsers and CDNs; limiting them per account would let anyone holding a published URL spend its owner's bucket",
  "401 answers": "without a valid token there is no account, so no bucket to report",
  "408 answers": "written on the connection by the request deadline (http/request-deadline.ts) while the body is still arriving, before the answer's headers are made",
};
const escaped = (path: string) => path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const exemptPaths = `[?(!@property.match(/^(${Object.keys(rateLimitExemptions).filter((p) => p.startsWith("/")).map(escaped).join("|")})/))]`;

export const ruleset = {
  extends: [[oas, "recommended"], [owaspRuleset, "recommended"]],
  rules: {
    ...Object.fromEntries(Object.keys(disabledRules).map((rule) => [rule, "off"])),
    "owasp:api4:2023-string-limit": requestOnly(stringGiven)("owasp:api4:2023-string-limit"),
    "owasp:api4:2023-array-limit": requestOnly(arrayGiven)("owasp:api4:2023-array-limit"),
    "owasp:api4:2023-integer-limit": requestOnly(integerGiven)("owasp:api4:2023-integer-limit"),
    "owasp:api4:2023-rate-limit": { ...owasp.rules["owasp:api4:2023-rate-limit"], given: `$.paths${exemptPaths}..responses[?(@property.match(/^(2|4)/) && @property != '401' && @property != '408')]` },
    "owasp:api4:2023-rate-limit-responses-429": { ...owasp.rules["owasp:api4:2023-rate-limit-responses-429"], given: `$.paths${exemptPaths}..responses` },
  },
};
