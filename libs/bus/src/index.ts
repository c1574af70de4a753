import type { Logger } from "pino";
import { InProcessBus } from "./in-process";
import { NatsBus } from "./nats";
import type { Bus } from "./types";

export * from "./types";
export { InProcessBus } from "./in-process";
export { NatsBus } from "./nats";

/** NATS JetStream when a URL is given, otherwise the in-process bus. */
export async function createBus(options: {
  natsUrl?: string;
  stream: string;
  subjectPrefix?: string;
  logger?: Logger;
  name?: string;
}): Promise<Bus> {
  if (!options.natsUrl) return new InProcessBus(options.logger);
  return NatsBus.connect({ url: options.natsUrl, stream: options.stream, subjectPrefix: options.subjectPrefix, logger: options.logger, name: options.name });
}
