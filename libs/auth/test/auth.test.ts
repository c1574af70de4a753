import { createContextValues, Code, ConnectError } from "@connectrpc/connect";
import { callerHeaders, callerKey, callerOf, requireInternalCaller, sameSecret } from "../src";

const token = "t".repeat(40);
const account = "3f1e0a52-3a4c-4e57-9f57-0c1a2b3c4d5e";

/** Runs the interceptor over a fake request carrying `headers`; answers the caller it set. */
async function intercept(headers: Record<string, string>) {
  const contextValues = createContextValues();
  const next = async () => ({ caller: contextValues.get(callerKey) }) as never;
  const req = { header: new Headers(headers), contextValues } as never;
  return (await requireInternalCaller(token)(next)(req)) as unknown as { caller: unknown };
}

describe("internal calls", () => {
  it("compares secrets of any length", () => {
    expect(sameSecret("abc", "abc")).toBe(true);
    expect(sameSecret("abc", "abd")).toBe(false);
    expect(sameSecret("abc", "abcd")).toBe(false);
  });

  it("puts the caller in the context only next to the internal credential", async () => {
    const res = await intercept(callerHeaders(token, { accountId: account, apiKeyId: "k" }));
    expect(res.caller).toEqual({ accountId: account, apiKeyId: "k" });
    await expect(intercept(callerHeaders("w".repeat(40), { accountId: account, apiKeyId: "k" }))).rejects.toMatchObject({ code: Code.Unauthenticated });
    await expect(intercept({ "x-account-id": account })).rejects.toMatchObject({ code: Code.Unauthenticated });
    await expect(intercept(callerHeaders(token, { accountId: "not-a-uuid", apiKeyId: "k" }))).rejects.toBeInstanceOf(ConnectError);
  });

  it("refuses a handler context without a caller", () => {
    expect(() => callerOf({ values: createContextValues() } as never)).toThrow(ConnectError);
  });
});
