// baton dev: the host side of MCP Apps (io.modelcontextprotocol/ui). A call of a tool that names an app page
// gets a frame: the page is read through baton dev's own client (POST /api/app/render) and loaded from
// /app/<id> in an iframe sandboxed to scripts only (an opaque origin: no access to this page, its token,
// its storage or its API), under a Content-Security-Policy made of what the page declared (protocol.md
// P188). The page speaks JSON-RPC over postMessage: this script answers ui/initialize, sends the call's
// input and result once the page says it is initialized, relays its tools/call and resources/read as calls
// of their own through the same client (P189), asks the person before opening a link, and follows its size.
// It uses el() of dom.js and post() of app.js.
"use strict";

const BatonApps = (() => {
  const PROTOCOL = "2026-01-26";
  const MAX_HEIGHT = 2000;
  const frames = new Map(); // call id -> the frame of that tool call's app
  const relayed = new Map(); // call id of a relayed call -> {frame, id}: who waits for its result
  const finished = new Map(); // a relayed call's result that came before its id did
  let tools = [];

  function toolNamed(name) {
    return tools.find((t) => t.name === name) || null;
  }

  function appUri(tool) {
    const meta = (tool && tool._meta) || {};
    const uri = (meta.ui && meta.ui.resourceUri) || meta["ui/resourceUri"];
    return typeof uri === "string" ? uri : null;
  }

  function send(frame, message) {
    // The frame's origin is opaque ("null"), so no target origin can name it; the window itself is the target.
    if (frame.iframe && frame.iframe.contentWindow) frame.iframe.contentWindow.postMessage({ jsonrpc: "2.0", ...message }, "*");
  }

  function note(frame, text, cls) {
    frame.notes.append(el("li", { text, cls }));
  }

  // -- a tool call with an app ------------------------------------------------------------------------------

  async function open(e, call) {
    const tool = toolNamed(e.name);
    const uri = appUri(tool);
    if (!uri) return;
    const notes = el("ul", { cls: "meta", "aria-label": "App notes" });
    const box = el("section", { cls: "app", "aria-label": `App ${uri}` }, el("h4", { text: `App ${uri}` }), notes);
    call.result.before(box);
    const frame = { call: e.call, tool, box, notes, arguments: e.arguments || {}, ready: false, outcome: null, delivered: false, resultAt: 0 };
    frames.set(e.call, frame);
    let page;
    try {
      page = await post("/api/app/render", { call: e.call });
    } catch (error) {
      box.append(el("p", { cls: "alert", role: "alert", text: `The app page cannot be shown: ${error.message}` }));
      return;
    }
    const allow = page.permissions.map((p) => (p === "clipboardWrite" ? "clipboard-write" : p)).join("; ");
    frame.iframe = el("iframe", {
      src: page.src,
      sandbox: "allow-scripts",
      title: `App of ${e.name}`,
      referrerpolicy: "no-referrer",
      allow: allow || null,
      cls: page.prefersBorder === false ? "app-frame borderless" : "app-frame",
    });
    box.append(frame.iframe, el("details", {}, el("summary", { text: "Content-Security-Policy" }), el("pre", { text: page.policy })));
    for (const left of page.refused) note(frame, `Left out of the page's policy (not an origin): ${left}`, "alert");
  }

  function finish(e, outcome) {
    const frame = frames.get(e.call);
    if (frame) {
      frame.outcome = outcome;
      frame.resultAt = performance.now();
      deliver(frame);
      return;
    }
    const waiting = relayed.get(e.call);
    if (!waiting) return finished.set(e.call, outcome);
    relayed.delete(e.call);
    answerRelayed(waiting, outcome);
  }

  function deliver(frame) {
    if (!frame.ready || frame.delivered || !frame.outcome) return;
    frame.delivered = true;
    if (frame.outcome.result) send(frame, { method: "ui/notifications/tool-result", params: frame.outcome.result });
    else send(frame, { method: "ui/notifications/tool-cancelled", params: { reason: frame.outcome.reason } });
    const ms = (performance.now() - frame.resultAt).toFixed(1);
    note(frame, `The result went to the app ${ms} ms after it came`);
  }

  // -- what the page says -----------------------------------------------------------------------------------

  window.addEventListener("message", (event) => {
    let frame = null;
    for (const f of frames.values()) if (f.iframe && event.source === f.iframe.contentWindow) frame = f;
    const m = event.data;
    if (!frame || !m || typeof m !== "object" || m.jsonrpc !== "2.0" || typeof m.method !== "string") return;
    if (m.id === undefined) notified(frame, m);
    else if (typeof m.id === "string" || Number.isInteger(m.id)) requested(frame, m);
  });

  function notified(frame, m) {
    const params = m.params && typeof m.params === "object" ? m.params : {};
    if (m.method === "ui/notifications/initialized" && !frame.ready) {
      frame.ready = true;
      note(frame, "The app is initialized");
      send(frame, { method: "ui/notifications/tool-input", params: { arguments: frame.arguments } });
      deliver(frame);
    } else if (m.method === "ui/notifications/size-changed") {
      const height = Number(params.height);
      if (Number.isFinite(height) && height > 0) frame.iframe.style.height = `${Math.min(Math.ceil(height), MAX_HEIGHT)}px`;
    } else if (m.method === "notifications/message") {
      const data = typeof params.data === "string" ? params.data : JSON.stringify(params.data);
      note(frame, `App log ${params.level || ""}: ${data}`, "log");
    }
  }

  function reply(frame, id, result) {
    send(frame, { id, result });
  }

  function refuse(frame, id, code, message) {
    send(frame, { id, error: { code, message } });
  }

  function requested(frame, m) {
    const params = m.params && typeof m.params === "object" ? m.params : {};
    switch (m.method) {
      case "ui/initialize":
        return reply(frame, m.id, {
          protocolVersion: PROTOCOL,
          hostInfo: { name: "baton dev", version: "1" },
          hostCapabilities: { openLinks: {}, serverTools: {}, serverResources: {}, logging: {} },
          hostContext: {
            toolInfo: { tool: frame.tool },
            theme: matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
            displayMode: "inline",
            availableDisplayModes: ["inline"],
            containerDimensions: { width: frame.iframe.clientWidth, maxHeight: MAX_HEIGHT },
            locale: navigator.language,
            timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
            platform: "web",
          },
        });
      case "ping":
        return reply(frame, m.id, {});
      case "tools/call":
      case "resources/read":
        return relay(frame, m.id, m.method, params);
      case "ui/open-link":
        return askToOpen(frame, m.id, params.url);
      case "ui/message":
      case "ui/update-model-context":
        note(frame, `${m.method === "ui/message" ? "The app sent a message" : "The app updated the model's context"}: ${JSON.stringify(params)}`);
        return reply(frame, m.id, {});
      case "ui/request-display-mode":
        return reply(frame, m.id, { mode: "inline" });
      default:
        return refuse(frame, m.id, -32601, `baton dev does not serve ${m.method} to apps`);
    }
  }

  async function relay(frame, id, method, params) {
    let started;
    try {
      started = await post("/api/app/call", { from: frame.call, method, params });
    } catch (error) {
      note(frame, `Refused the app's ${method}: ${error.message}`, "alert");
      return refuse(frame, id, -32602, error.message);
    }
    const waiting = { frame, id };
    const early = finished.get(started.call);
    if (early) {
      finished.delete(started.call);
      answerRelayed(waiting, early);
    } else relayed.set(started.call, waiting);
  }

  function answerRelayed(waiting, outcome) {
    if (outcome.result) reply(waiting.frame, waiting.id, outcome.result);
    else refuse(waiting.frame, waiting.id, outcome.code !== undefined ? outcome.code : -32000, outcome.reason);
  }

  function askToOpen(frame, id, url) {
    let parsed = null;
    try {
      parsed = new URL(url);
    } catch {}
    if (!parsed || !["http:", "https:"].includes(parsed.protocol)) {
      note(frame, `Refused to open ${JSON.stringify(url)}: not an http(s) address`, "alert");
      return refuse(frame, id, -32000, "Invalid URL");
    }
    const box = el("div", { role: "group", "aria-label": "The app asks to open a link" }, el("p", { text: `The app asks to open ${parsed.href}` }));
    const done = (opened) => {
      box.remove();
      note(frame, `${opened ? "Opened" : "Refused to open"} ${parsed.href}`);
      if (opened) reply(frame, id, {});
      else refuse(frame, id, -32000, "Link opening denied by user");
    };
    box.append(
      el("button", { type: "button", text: "Open link", onclick: () => { window.open(parsed.href, "_blank", "noopener,noreferrer"); done(true); } }),
      el("button", { type: "button", text: "Refuse", onclick: () => done(false) }),
    );
    frame.box.append(box);
  }

  return {
    setTools(list) {
      tools = Array.isArray(list) ? list : [];
    },
    hasApp(name) {
      return appUri(toolNamed(name)) !== null;
    },
    open,
    result(e) {
      finish(e, { result: e.result || {} });
    },
    failed(e) {
      finish(e, { reason: e.text || "failed", code: e.code });
    },
  };
})();
