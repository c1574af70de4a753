import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One delivery a receiver accepted as genuine (its signature checked by the standardwebhooks package, not our code). */
export interface ReceivedDelivery {
  endpoint: string;
  webhookId: string;
  body: { id: string; type: string; timestamp: string; data: { id: string; eventType: string; payload: Record<string, unknown> } };
  /** The answer it was given. */
  status: number;
}

/** A genuine delivery as it arrived, before it was answered. */
export interface ArrivedDelivery {
  endpoint: string;
  webhookId: string;
  /** The product (purchase order, trigger) it is of, by `productOf`; undefined: not tracked. */
  product: string | undefined;
}

/**
 * A local webhook receiver: one path per endpoint (`/<name>`), each with its secrets. Every POST
 * is verified with the Standard Webhooks reference library; a delivery that fails verification
 * is recorded in `rejected` and answered 400. `answer` decides each verified delivery's status
 * (and may wait before answering).
 */
export interface WebhookReceiver {
  url(endpoint: string): string;
  /** Secrets the endpoint's deliveries must verify with (any one of them). */
  trust(endpoint: string, ...secrets: string[]): void;
  /** Deliveries in the order they were answered. */
  received: ReceivedDelivery[];
  /** Deliveries in the order they arrived (a later one may be answered first while an earlier one is held). */
  arrived: ArrivedDelivery[];
  rejected: { endpoint: string; reason: string }[];
  /** Requests being answered right now, per endpoint (until answered, or until the sender hangs up). */
  open: Map<string, number>;
  /** The most requests open at once, per endpoint. */
  mostOpen: Map<string, number>;
  /**
   * Deliveries that arrived while another of their endpoint and product was still being answered:
   * the sender did not wait for the earlier one's outcome (per-product order broken).
   */
  overlaps: { endpoint: string; product: string; webhookId: string; inFlight: string[] }[];
  answer: (endpoint: string, delivery: Omit<ReceivedDelivery, "status">) => number | Promise<number>;
  close(): Promise<void>;
}

export interface WebhookReceiverOptions {
  /** A delivery's product, for the per-product counts; default: the entry's `payload.id` (a SKU's, purchase order's or trigger's id). */
  productOf?: (body: ReceivedDelivery["body"]) => string | undefined;
}

const payloadId = (body: ReceivedDelivery["body"]) => {
  const id = body?.data?.payload?.id;
  return id === undefined || id === null ? undefined : `${body.type}:${String(id)}`;
};

export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const productOf = options.productOf ?? payloadId;
  const secrets = new Map<string, string[]>();
  /** Per endpoint and product, the requests being answered now (by arrival number: a re-send is a request of its own), with their webhook-ids. */
  const inFlight = new Map<string, Map<number, string>>();
  const receiver: WebhookReceiver = {
    url: (endpoint) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/${endpoint}`,
    trust: (endpoint, ...s) => void secrets.set(endpoint, s),
    received: [],
    arrived: [],
    rejected: [],
    open: new Map(),
    mostOpen: new Map(),
    overlaps: [],
    answer: () => 204,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = http.createServer((req, res) => {
    const endpoint = (req.url ?? "/").slice(1);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const open = (receiver.open.get(endpoint) ?? 0) + 1;
      receiver.open.set(endpoint, open);
      receiver.mostOpen.set(endpoint, Math.max(open, receiver.mostOpen.get(endpoint) ?? 0));
      // A request stops being in flight when answered or when its sender hangs up (a killed worker):
      // whichever comes first, once.
      let ended = false;
      const leaveFlight: (() => void)[] = [];
      const end = () => {
        if (ended) return;
        ended = true;
        receiver.open.set(endpoint, (receiver.open.get(endpoint) ?? 1) - 1);
        for (const leave of leaveFlight) leave();
      };
      res.once("close", end);
      const reply = (status: number) => {
        end();
        if (!res.destroyed) res.writeHead(status).end();
      };
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = { "webhook-id": String(req.headers["webhook-id"]), "webhook-timestamp": String(req.headers["webhook-timestamp"]), "webhook-signature": String(req.headers["webhook-signature"]) };
      const verified = (secrets.get(endpoint) ?? []).some((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      if (!verified) {
        receiver.rejected.push({ endpoint, reason: `signature ${headers["webhook-signature"]} did not verify` });
        return reply(400);
      }
      const delivery = { endpoint, webhookId: headers["webhook-id"], body: JSON.parse(body) };
      // Counted on arrival, before the answer is decided: a later entry of the product sent while
      // an earlier one is still unanswered shows here, however the answers are timed.
      const product = productOf(delivery.body);
      receiver.arrived.push({ endpoint, webhookId: delivery.webhookId, product });
      if (product !== undefined) {
        const key = `${endpoint}\n${product}`;
        const flying = inFlight.get(key) ?? new Map<number, string>();
        inFlight.set(key, flying);
        if (flying.size > 0) receiver.overlaps.push({ endpoint, product, webhookId: delivery.webhookId, inFlight: [...flying.values()] });
        const request = receiver.arrived.length;
        flying.set(request, delivery.webhookId);
        leaveFlight.push(() => {
          flying.delete(request);
          if (flying.size === 0) inFlight.delete(key);
        });
      }
      void Promise.resolve(receiver.answer(endpoint, delivery)).then((status) => {
        receiver.received.push({ ...delivery, status });
        reply(status);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return receiver;
}
