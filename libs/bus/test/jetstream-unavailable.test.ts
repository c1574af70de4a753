import { JetStreamApiError } from "@nats-io/jetstream";
import { NoRespondersError, TimeoutError } from "@nats-io/nats-core";
import { whileJetStreamUnavailable } from "../src/nats";

/**
 * A service's stream and consumer set-up while a JetStream cluster elects a leader (a server was
 * lost as the service started): what the cluster answers then is tried again, anything else fails
 * the start at once. The errors are the client library's own, as the cluster run met them.
 */
describe("JetStream set-up while the cluster cannot answer", () => {
  const unavailable = () => new JetStreamApiError({ code: 503, err_code: 10008, description: "JetStream system temporarily unavailable" });

  /** `work` failing with each of `errors` in turn, then answering "ok"; and how often it ran. */
  function failingWith(errors: Error[]) {
    let calls = 0;
    const work = async () => {
      const error = errors[calls++];
      if (error) throw error;
      return "ok";
    };
    return { work, calls: () => calls };
  }

  it("tries again on 503 (temporarily unavailable), no responders and timeouts", async () => {
    const { work, calls } = failingWith([unavailable(), new NoRespondersError("$JS.API.CONSUMER.INFO.S.C"), new TimeoutError(), unavailable()]);
    expect(await whileJetStreamUnavailable(work, 1)).toBe("ok");
    expect(calls()).toBe(5);
  });

  it("fails at once on any other answer, and after 15 tries of an unavailable cluster", async () => {
    const refused = failingWith([new JetStreamApiError({ code: 400, err_code: 10052, description: "invalid consumer config" })]);
    await expect(whileJetStreamUnavailable(refused.work, 1)).rejects.toThrow("invalid consumer config");
    expect(refused.calls()).toBe(1);
    const down = failingWith(Array.from({ length: 20 }, unavailable));
    await expect(whileJetStreamUnavailable(down.work, 1)).rejects.toThrow("temporarily unavailable");
    expect(down.calls()).toBe(15);
  });
});
