import type { Logger } from "pino";
import { InProcessBus } from "./in-process";
import { NatsBus } from "./nats";
import type { Bus } from "./types";

export * from "./types";
export { InProcessBus } from "./in-process";
export { NatsBus, MAX_MESSAGE_BYTES, MAX_DELIVER, ACK_WAIT_MS, PULL_HEARTBEAT_MS, PULL_EXPIRES_MS, DUPLICATE_WINDOW_SECONDS, DEFAULT_MAX_AGE_SECONDS, DEFAULT_PARTITIONS, consumerName, partitionOf } from "./nats";

/** NATS JetStream when a URL is given, otherwise the in-process bus. */
export async function createBus(options: {
  natsUrl?: string;
  stream: string;
  subjectPrefix?: string;
  maxAgeSeconds?: number;
  maxBytes?: number;
  replicas?: number;
  partitions?: number;
  logger?: Logger;
  name?: string;
}): Promise<Bus> {
  if (!options.natsUrl) return new InProcessBus(options.logger);
  const { natsUrl, ...rest } = options;
  return NatsBus.connect({ url: natsUrl, ...rest });
}
