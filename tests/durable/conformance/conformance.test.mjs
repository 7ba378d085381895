// Runs the official Durable Streams server conformance suite against DURABLE_STREAMS_URL,
// the opt-in reserved subscription APIs (sections 6-7) included.
import { runConformanceTests } from "@durable-streams/server-conformance-tests";

const baseUrl = process.env.DURABLE_STREAMS_URL;
if (!baseUrl) {
  throw new Error("set DURABLE_STREAMS_URL to the server under test");
}
runConformanceTests({ baseUrl, subscriptions: true, longPollTimeoutMs: Number(process.env.LONG_POLL_TIMEOUT_MS ?? 2000) });
