import { eventually } from "@analytics/testing";
import { E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/** PurchaseOrder.buyer, declared once in the proto: accepted, bounded, stored, answered, documented and announced. */
describe("a purchase order's buyer", () => {
  const platform = platformForFile();

  it("round-trips through POST, GET and the batch, is bounded by its rule and is in the OpenAPI document", async () => {
    const acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    await acme.api("POST", "/v2/api/products", { key: "B1" });
    const po = { externalPONo: "PO-B1", buyer: "Ada", deliveryStatus: 4, items: [{ key: "B1", quantity: 3 }] };
    expect((await acme.api("POST", "/v2/api/purchaseorders", [po])).status).toBe(201);
    expect((await acme.api("GET", "/v2/api/purchaseorders/PO-B1")).body).toMatchObject({ buyer: "Ada" });
    expect((await acme.api("POST", "/v2/api/purchaseorders/batch", [po])).body[0].message).toBe("unchanged");
    expect((await acme.api("POST", "/v2/api/purchaseorders/batch", [{ ...po, buyer: "Grace" }])).body[0].message).toBe("updated");
    const tooLong = await acme.api("POST", "/v2/api/purchaseorders/batch", [{ ...po, buyer: "x".repeat(501) }]);
    expect(JSON.stringify(tooLong.body)).toContain("buyer");
    await eventually(async () => JSON.stringify((await acme.api("GET", "/v2/api/events?pageSize=100")).body).includes('"buyer":"Grace"'), 10_000, "the queue's draft_po_change with buyer Grace");
    const doc = (await acme.api("GET", "/docs/json")).body;
    expect(JSON.stringify(doc.components.schemas.PurchaseOrder.properties.buyer)).toContain("string");
  });
});
