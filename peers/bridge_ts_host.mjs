// Interop peer: the TypeScript SDK v1 client (@modelcontextprotocol/sdk 1.x, 2025-11-25 only) as a stdio host
// driving `baton bridge`.
//
// Usage: node bridge_ts_host.mjs SDK_DIR -- COMMAND ...   (SDK_DIR: the folder whose node_modules holds the SDK)
// In one session: the tool list, a plain call, the two-round asking tool answered by the elicitation handler,
// a call with progress and one with log messages. Prints one JSON object (or {"failed": ...}).
import { createRequire } from "node:module";

const args = process.argv.slice(2);
const cut = args.indexOf("--");
const require = createRequire(`${args[0]}/`);
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { ElicitRequestSchema, LoggingMessageNotificationSchema } = require("@modelcontextprotocol/sdk/types.js");

const [command, ...commandArgs] = args.slice(cut + 1);
const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const answers = { "What is your name?": { name: "Ada" }, "What is your favorite color?": { color: "teal" } };
const report = { asked: [], logs: [], progress: [] };

const client = new Client({ name: "ts-sdk-v1-host", version: "1.0.0" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  report.asked.push(request.params.message);
  return { action: "accept", content: answers[request.params.message] || {} };
});
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => report.logs.push(String(n.params.data)));

const transport = new StdioClientTransport({ command, args: commandArgs, stderr: "inherit" });
try {
  await client.connect(transport);
  report.version = client.getServerVersion()?.name;
  report.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  report.simple = text(await client.callTool({ name: "test_simple_text", arguments: {} }));
  report.two_rounds = text(await client.callTool({ name: "test_input_required_result_multi_round", arguments: {} }));
  const withProgress = await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, {
    onprogress: (p) => report.progress.push(p.progress),
  });
  report.progress_result = text(withProgress);
  report.logged = text(await client.callTool({ name: "test_tool_with_logging", arguments: {} }));
} catch (error) {
  report.failed = String(error && error.stack ? error.stack : error);
}
console.log(JSON.stringify(report));
await client.close();
