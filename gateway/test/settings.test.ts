import { fromBinary } from "@bufbuild/protobuf";
import type { BusMessage } from "@analytics/bus";
import { topics } from "@analytics/contracts";
import { databaseAndStreamForFile, eventually } from "@analytics/testing";
import { buildGateway, type Gateway } from "../src/app";
import { TEST_ADMIN_TOKEN as ADMIN, testGatewayDeps } from "./gateway-deps";

const admin = { authorization: `Bearer ${ADMIN}` };

/** The gateway owns account settings and announces each change as a typed message. */
describe("account settings on the bus (real Postgres and JetStream)", () => {
  const perFile = databaseAndStreamForFile();
  let gw: Gateway;

  beforeAll(async () => {
    gw = await buildGateway(testGatewayDeps(perFile.url, { bus: perFile.stream.bus, outboxPollMs: 50 }));
    perFile.atClose(() => gw.close());
  });

  it("publishes AccountSettingsChanged with a growing version for every change", async () => {
    const received: BusMessage[] = [];
    const sub = await perFile.stream.bus.subscribe({ durable: "probe", subjects: [topics.accountSettingsChanged.subject], handle: async (ms) => void received.push(...ms) });
    const account = (await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Acme" } })).json();
    const put = (payload: object) => gw.app.inject({ method: "PUT", url: `/admin/v1/accounts/${account.accountID}/settings`, headers: admin, payload });
    expect((await put({ customPriceFields: ["outlet"], timezone: "Europe/Stockholm" })).statusCode).toBe(200);
    expect((await put({ customPriceFields: ["outlet", "campaign"], timezone: "America/New_York" })).statusCode).toBe(200);
    await eventually(async () => received.length === 2);
    await sub.stop();
    const messages = received.map((m) => fromBinary(topics.accountSettingsChanged.schema, m.payload));
    expect(messages.map((m) => [m.accountId, m.version, m.customPriceFields, m.timezone])).toEqual([
      [account.accountID, 1n, ["outlet"], "Europe/Stockholm"],
      [account.accountID, 2n, ["outlet", "campaign"], "America/New_York"],
    ]);
    expect(received[0].accountId).toBe(account.accountID);
  });
});
