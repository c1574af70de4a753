import http from "node:http";
import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { eventually, startWebhookReceiver, type WebhookReceiver } from "../src";

const SECRET = `whsec_${Buffer.from("r".repeat(32)).toString("base64")}`;

/** A signed delivery of one entry of `product`, as the platform sends it; resolves with the status, or "hung up". */
function deliver(receiver: WebhookReceiver, endpoint: string, product: string, webhookId: string = randomUUID(), hangUp?: Promise<void>) {
  const body = JSON.stringify({ id: webhookId, type: "update_sku", timestamp: new Date().toISOString(), data: { id: webhookId, eventType: "update_sku", payload: { id: product } } });
  const now = new Date();
  const headers = {
    "content-type": "application/json",
    "webhook-id": webhookId,
    "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
    "webhook-signature": new Webhook(SECRET).sign(webhookId, now, body),
  };
  return new Promise<number | "hung up">((resolve, reject) => {
    const req = http.request(receiver.url(endpoint), { method: "POST", headers, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on("error", (e) => (hangUp ? resolve("hung up") : reject(e)));
    req.end(body);
    void hangUp?.then(() => req.destroy());
  });
}

describe("the webhook receiver of the e2e tests", () => {
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
    receiver.trust("a", SECRET);
  });
  afterEach(() => receiver.close());

  /** Answers are held until released, each in arrival order. */
  function holdAnswers() {
    const held: (() => void)[] = [];
    receiver.answer = () => new Promise<number>((resolve) => held.push(() => resolve(204)));
    return held;
  }

  it("records a delivery on arrival, before it is answered, and one of a product sent while another is unanswered as an overlap", async () => {
    const held = holdAnswers();
    const first = deliver(receiver, "a", "p1", "first");
    await eventually(async () => held.length === 1, 5_000, "the first held");
    expect(receiver.arrived).toEqual([{ endpoint: "a", webhookId: "first", product: "update_sku:p1" }]);
    expect(receiver.received).toEqual([]);
    const second = deliver(receiver, "a", "p1", "second");
    // Another product at the same time is no overlap.
    const other = deliver(receiver, "a", "p2", "other");
    await eventually(async () => held.length === 3, 5_000, "all three held");
    expect(receiver.arrived.map((d) => d.webhookId)).toEqual(["first", "second", "other"]);
    expect(receiver.overlaps).toEqual([{ endpoint: "a", product: "update_sku:p1", webhookId: "second", inFlight: ["first"] }]);
    expect(receiver.open.get("a")).toBe(3);
    held.splice(0).forEach((release) => release());
    expect(await Promise.all([first, second, other])).toEqual([204, 204, 204]);
    expect(receiver.open.get("a")).toBe(0);
  });

  it("finds no overlap when each delivery of a product waits for the earlier one's answer", async () => {
    for (const id of ["one", "two", "three"]) expect(await deliver(receiver, "a", "p1", id)).toBe(204);
    expect(receiver.arrived.map((d) => d.webhookId)).toEqual(["one", "two", "three"]);
    expect(receiver.overlaps).toEqual([]);
  });

  it("counts a held delivery out of flight when its sender hangs up: its re-send is no overlap", async () => {
    const held = holdAnswers();
    let hangUp!: () => void;
    const killed = deliver(receiver, "a", "p1", "x", new Promise<void>((resolve) => (hangUp = resolve)));
    await eventually(async () => receiver.open.get("a") === 1, 5_000, "the delivery held");
    hangUp();
    expect(await killed).toBe("hung up");
    await eventually(async () => receiver.open.get("a") === 0, 5_000, "the hung-up request out of flight");
    receiver.answer = () => 204;
    expect(await deliver(receiver, "a", "p1", "x")).toBe(204);
    expect(receiver.arrived.map((d) => d.webhookId)).toEqual(["x", "x"]);
    expect(receiver.overlaps).toEqual([]);
    // The held answer, released late, goes to nobody and breaks nothing.
    held.splice(0).forEach((release) => release());
    await eventually(async () => receiver.received.length === 2, 5_000, "the late answer recorded");
  });
});
