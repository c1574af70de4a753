import { Document, Spectral, type ISpectralDiagnostic } from "@stoplight/spectral-core";
import { Json } from "@stoplight/spectral-parsers";
import { servedDocument } from "./document";
import { ruleset } from "./spectral-ruleset";

/** Spectral's diagnostics of a document; severity 0 is an error. */
export async function lint(doc: unknown, rules: unknown = ruleset): Promise<ISpectralDiagnostic[]> {
  const spectral = new Spectral();
  spectral.setRuleset(rules as never);
  return spectral.run(new Document(JSON.stringify(doc, null, 2), Json, "openapi.json"));
}

describe("Spectral (spectral:oas and OWASP) over the served document (item 5)", () => {
  it("finds no errors", async () => {
    const results = await lint(await servedDocument());
    const errors = results.filter((r) => r.severity === 0).map((r) => `${r.code} ${r.path.join(".")}: ${r.message}`);
    if (process.env.SPECTRAL_REPORT) console.log(JSON.stringify(summary(results), null, 1));
    expect(errors).toEqual([]);
  });

  it("passes the OWASP rate-limit rules for every operation of an account: RateLimit headers, 429 with Retry-After", async () => {
    const results = await lint(await servedDocument());
    // Every diagnostic, warnings too; the operations left out are the ruleset's rateLimitExemptions, each with its reason.
    const rateLimit = results.filter((r) => /^owasp:api4:2023-rate-limit/.test(String(r.code))).map((r) => `${r.code} ${r.path.join(".")}`);
    expect(rateLimit).toEqual([]);
  });
});

function summary(results: ISpectralDiagnostic[]) {
  const counts: Record<string, number> = {};
  for (const r of results) counts[`${["error", "warn", "info", "hint"][r.severity]} ${r.code}`] = (counts[`${["error", "warn", "info", "hint"][r.severity]} ${r.code}`] ?? 0) + 1;
  return counts;
}
