// A second ACP implementation drives agent-lsp: the official TypeScript SDK's client side, which validates every
// request and notification the agent sends against ACP's schema; the answers are checked against it here too.
// Usage: node client.mjs WORKSPACE AGENT_COMMAND... ; prints one JSON object (what the client saw) on stdout.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import * as z from "./node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js";

const [workspace, ...command] = process.argv.slice(2);
const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const seen = { updates: [], requests: [], writes: [], answers: {} };
const buffers = new Map();

const app = acp
  .client({ name: "agent-lsp-node-test" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    seen.updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    seen.requests.push({ method: "session/request_permission", toolCallId: params.toolCall.toolCallId,
                         kinds: params.options.map((o) => o.kind) });
    return { outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === "allow_once").optionId } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
    seen.requests.push({ method: "fs/read_text_file", path: params.path });
    return { content: buffers.has(params.path) ? buffers.get(params.path) : readFileSync(params.path, "utf8") };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
    seen.requests.push({ method: "fs/write_text_file", path: params.path });
    seen.writes.push([params.path, params.content]);
    buffers.set(params.path, params.content);
    return {};
  });

const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
try {
  await app.connectWith(stream, async (ctx) => {
    const call = async (name, method, params, schema) => {
      const answer = await ctx.request(method, params);
      seen.answers[name] = schema.parse(answer ?? {});
      return answer;
    };
    await call("initialize", acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      clientInfo: { name: "agent-lsp-node-test", version: "1" },
    }, z.zInitializeResponse);
    const { sessionId } = await call("new", acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] },
                                     z.zNewSessionResponse);
    await call("prompt1", acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: "text", text: "Make greet say hello, then check it." },
        { type: "resource_link", uri: `file://${workspace}/app.py`, name: "app.py" },
        { type: "resource", resource: { uri: `file://${workspace}/notes.txt`, text: "greet is public API" } },
      ],
    }, z.zPromptResponse);
    await call("setMode", acp.methods.agent.session.setMode, { sessionId, modeId: "bypassPermissions" },
               z.zSetSessionModeResponse);
    await call("prompt2", acp.methods.agent.session.prompt,
               { sessionId, prompt: [{ type: "text", text: "run it" }] }, z.zPromptResponse);
    await call("list", acp.methods.agent.session.list, {}, z.zListSessionsResponse);
    seen.replayFrom = seen.updates.length;
    await call("load", acp.methods.agent.session.load, { sessionId, cwd: workspace, mcpServers: [] },
               z.zLoadSessionResponse);
  });
} finally {
  child.stdin.end();
}
process.stdout.write(JSON.stringify(seen) + "\n");
process.exit(0);
