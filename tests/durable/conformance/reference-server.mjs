// Starts the Node reference server (npm @durable-streams/server) on 127.0.0.1 and prints its URL;
// webhook subscriptions are on (the reserved __ds APIs, sections 6-7).
import { DurableStreamTestServer } from "@durable-streams/server";

const port = Number(process.env.PORT ?? 0);
const longPollTimeout = Number(process.env.LONG_POLL_TIMEOUT_MS ?? 500);
const server = new DurableStreamTestServer({ port, host: "127.0.0.1", longPollTimeout, webhooks: true });
const url = await server.start();
console.log(`listening on ${url}`);
const stop = async () => {
  await server.stop();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
