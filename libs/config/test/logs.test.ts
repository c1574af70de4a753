import { context, trace, TraceFlags } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { createLogger, loadConfig, requestContext, tracingSettings } from "../src";

/** A logger whose JSON lines are kept. */
function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ LOG_LEVEL: "info" }, "test", { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

describe("logs and traces", () => {
  afterEach(() => context.disable());

  it("gives every line written inside a span its trace_id and span_id (and the request id), none outside", () => {
    // The context manager startTracing registers (libs/telemetry) when tracing is on.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const ids = { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: TraceFlags.SAMPLED };
    const { logger, lines } = capturedLogger();
    context.with(trace.setSpan(context.active(), trace.wrapSpanContext(ids)), () =>
      requestContext.run({ requestId: "r-1" }, () => logger.child({ rpc: "listProducts" }).info("inside")),
    );
    logger.info("outside");
    expect(lines[0]).toMatchObject({ msg: "inside", requestId: "r-1", rpc: "listProducts", trace_id: ids.traceId, span_id: ids.spanId });
    expect(lines[1]).toMatchObject({ msg: "outside" });
    expect(lines[1]).not.toHaveProperty("trace_id");
    // A line that names its trace itself (the gateway's request line, after its span) keeps it.
    context.with(trace.setSpan(context.active(), trace.wrapSpanContext(ids)), () => logger.info({ trace_id: "own", span_id: "own" }, "named"));
    expect(lines[2]).toMatchObject({ trace_id: "own", span_id: "own" });
  });

  it("writes no trace fields while tracing is off (no context manager: no active span)", () => {
    const { logger, lines } = capturedLogger();
    context.with(trace.setSpan(context.active(), trace.wrapSpanContext({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1 })), () => logger.info("off"));
    expect(lines[0]).not.toHaveProperty("trace_id");
  });

  it("names the spans' service OTEL_SERVICE_NAME when set, else the deployable's own name", () => {
    // As gateway/src/main.ts and libs/rpc start tracing: the deployable's name, then the settings.
    const options = (env: Record<string, string>) => ({ serviceName: "analytics-gateway", ...tracingSettings(loadConfig(env)) });
    expect(options({ OTEL_SERVICE_NAME: "shop-analytics-api" }).serviceName).toBe("shop-analytics-api");
    expect(options({}).serviceName).toBe("analytics-gateway");
    expect(options({ OTEL_SERVICE_NAME: "  " }).serviceName).toBe("analytics-gateway");
  });
});
