// baton dev: the page. It reads the run's token from the address's fragment, follows the event stream,
// and builds the view from it. Text from the server is only ever set as textContent; the only markup
// inserted is the forms that Baton's own HTML renderer made (every server string in them escaped).
"use strict";

const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
const headers = { "X-Baton-Dev-Token": token };
let lastSeq = 0;
let capabilities = {};
let listsShown = "";
const calls = new Map();

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k === "cls") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

function setStatus(text) {
  document.getElementById("status").textContent = text;
}

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

// -- the event stream ------------------------------------------------------------------------------------

async function follow() {
  if (!token) {
    setStatus("This address has no token: open the address that baton dev printed.");
    return;
  }
  for (;;) {
    try {
      const response = await fetch("/api/events", { headers });
      if (!response.ok) {
        const data = await response.json().catch(() => ({}));
        setStatus(data.error || `The page was refused (HTTP ${response.status}).`);
        return;
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffered = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, end);
          buffered = buffered.slice(end + 1);
          if (!line.trim()) continue;
          const event = JSON.parse(line);
          if (event.seq === undefined || event.seq <= lastSeq) continue;
          lastSeq = event.seq;
          try {
            apply(event);
          } catch (error) {
            console.error("baton dev: could not show", event, error);
          }
        }
      }
    } catch (error) {
      console.warn("baton dev: the event stream broke", error);
    }
    setStatus("Lost the connection to baton dev; trying again… (is it still running?)");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function apply(event) {
  const handler = handlers[event.type];
  if (handler) handler(event);
}

const handlers = {
  status(e) {
    setStatus(e.text);
    if (e.state === "failed") showProblem(e.output);
  },
  connected(e) {
    capabilities = e.capabilities || {};
    const server = e.server || {};
    const info = document.getElementById("server-info");
    info.replaceChildren();
    const rows = [
      ["Protocol version", e.version],
      ["Name", server.name || "(none given)"],
      ["Version", server.version || "(none given)"],
      ["Target", e.target],
      ["Capabilities", Object.keys(capabilities).join(", ") || "none"],
    ];
    if (server.title) rows.splice(2, 0, ["Title", server.title]);
    for (const [k, v] of rows) info.append(el("dt", { text: k }), el("dd", { text: v }));
    const instructions = document.getElementById("instructions");
    instructions.replaceChildren();
    if (e.instructions) {
      instructions.append(el("h3", { text: "Instructions" }), el("pre", { text: e.instructions }));
    }
    setStatus(`Connected to ${server.name || e.target}, protocol version ${e.version}`);
    showProblem("");
  },
  lists(e) {
    const shown = JSON.stringify([e.tools, e.resources, e.templates, e.prompts, e.skills]);
    if (shown === listsShown) return;
    listsShown = shown;
    showTools(e.tools);
    showResources(e.resources);
    showTemplates(e.templates);
    showPrompts(e.prompts);
    showSkills(e.skills || []);
  },
  notice(e) {
    setStatus(e.text);
  },
  call(e) {
    document.getElementById("no-calls").hidden = true;
    const title = e.kind === "resource" ? e.uri : e.name;
    const state = el("p", { cls: "meta", role: "status", text: "Running…" });
    const stop = el("button", { type: "button", text: "Stop", onclick: () => post("/api/stop", { call: e.call }).catch(alertIn(article)) });
    const timeline = el("ol", { cls: "timeline", "aria-label": "Timeline" });
    const questions = el("div");
    const result = el("div");
    const raw = rawExchange(e.call);
    const article = el(
      "article",
      { cls: "call", "aria-label": `Call ${e.call}: ${e.method} ${title}` },
      el("h3", { text: `${title} ` }, el("span", { cls: "badge", text: e.method })),
      e.arguments && Object.keys(e.arguments).length ? el("pre", { "aria-label": "Arguments", text: JSON.stringify(e.arguments, null, 2) }) : null,
      state,
      stop,
      timeline,
      questions,
      result,
      raw.node,
    );
    calls.set(e.call, { article, state, stop, timeline, questions, result, raw, progress: null, asked: new Map() });
    document.getElementById("calls").prepend(article);
    article.scrollIntoView({ block: "nearest" });
  },
  round(e) {
    const call = calls.get(e.call);
    if (!call) return;
    let text = `Round ${e.number}: ${e.outcome}`;
    if (e.outcome === "input_required") {
      const asks = e.asks.map(describeAsk).join("; ");
      text += ` (${e.asks.length} ${e.asks.length === 1 ? "ask" : "asks"}: ${asks})`;
      if (e.stateBytes !== null) text += `, requestState ${e.stateBytes} bytes`;
    }
    text += `, ${e.ms} ms`;
    call.timeline.append(el("li", { text }));
  },
  ask(e) {
    const call = calls.get(e.call);
    if (call) call.timeline.append(el("li", { text: `The server asked: ${describeAsk(e)}` }));
  },
  question(e) {
    const call = calls.get(e.call);
    if (!call) return;
    call.asked.set(e.key, e.mode === "sampling" ? "a model reply (sampling)" : `"${e.message}"`);
    call.questions.append(question(e));
  },
  answered(e) {
    const call = calls.get(e.call);
    if (!call) return;
    const node = call.questions.querySelector(`[data-key="${CSS.escape(e.key)}"]`);
    if (node) node.remove();
    const what = { accept: "Sent", decline: "Declined", cancel: "Cancelled", withdrawn: "The question was withdrawn" }[e.action] || e.action;
    const asked = call.asked.get(e.key) || e.key;
    const text = e.sent ? `${what}: ${describeSent(e.sent)} (answering ${asked})` : `${what}: ${asked}`;
    call.timeline.append(el("li", { text }));
  },
  output(e) {
    const call = calls.get(e.call);
    if (!call) return;
    if (!call.output) {
      call.output = el("pre", { "aria-label": "Server output" });
      call.result.before(el("div", {}, el("h4", { text: "The server's stderr" }), call.output));
    }
    call.output.textContent += e.text;
  },
  progress(e) {
    const call = calls.get(e.call);
    if (!call) return;
    if (!call.progress) {
      call.progress = el("progress", { "aria-label": "Progress" });
      call.progressText = el("span", { cls: "meta" });
      call.timeline.after(el("div", {}, call.progress, " ", call.progressText));
    }
    if (typeof e.total === "number") call.progress.max = e.total;
    if (typeof e.progress === "number") call.progress.value = e.progress;
    call.progressText.textContent = `${e.progress}${typeof e.total === "number" ? ` of ${e.total}` : ""} ${e.message || ""}`;
  },
  log(e) {
    const call = calls.get(e.call);
    const data = typeof e.data === "string" ? e.data : JSON.stringify(e.data);
    if (call) call.timeline.append(el("li", { cls: "log", text: `Log ${e.level}${e.logger ? ` (${e.logger})` : ""}: ${data}` }));
  },
  result(e) {
    const call = calls.get(e.call);
    if (call) showResult(call, e);
  },
  failed(e) {
    const call = calls.get(e.call);
    if (!call) return;
    call.article.classList.add("failed");
    const code = e.code !== undefined ? ` (JSON-RPC error ${e.code})` : "";
    call.result.append(el("p", { cls: "alert", role: "alert", text: `Failed${code}: ${e.text}` }));
  },
  done(e) {
    const call = calls.get(e.call);
    if (!call) return;
    call.stop.remove();
    call.questions.replaceChildren();
    call.state.textContent = `Finished in ${e.ms} ms`;
    call.raw.refresh();
  },
};

function describeSent(sent) {
  const parts = Object.entries(sent).map(([k, v]) => `${k} = ${JSON.stringify(v)}`);
  return parts.length ? parts.join(", ") : "no values";
}

function showProblem(output) {
  const box = document.getElementById("problem");
  box.hidden = !output;
  box.querySelector("pre").textContent = output || "";
}

function describeAsk(ask) {
  if (ask.method === "elicitation/create") return `${ask.mode} "${ask.message}"`;
  return `${ask.method}${ask.deprecated ? " (deprecated)" : ""}`;
}

function alertIn(container) {
  return (error) => {
    let node = container.querySelector(":scope > .alert.transient");
    if (!node) {
      node = el("p", { cls: "alert transient", role: "alert" });
      container.append(node);
    }
    node.textContent = error.message;
  };
}

// -- lists -------------------------------------------------------------------------------------------------

function showTools(tools) {
  const box = document.getElementById("tools");
  box.replaceChildren();
  if (!tools.length) return box.append(nothing("tools"));
  for (const tool of tools) {
    const item = el("details", { cls: "item" }, el("summary", { text: tool.name }));
    if (tool.title) item.append(el("p", { text: tool.title }));
    if (tool.description) item.append(el("p", { cls: "meta", text: tool.description }));
    const notes = annotations(tool.annotations);
    if (notes) item.append(notes);
    item.append(schema("Input schema", tool.inputSchema));
    if (tool.outputSchema) item.append(schema("Output schema", tool.outputSchema));
    item.append(argumentForm(tool.form, "tool", tool.name, null));
    box.append(item);
  }
}

function showResources(resources) {
  const box = document.getElementById("resources");
  box.replaceChildren();
  if (!resources.length) return box.append(nothing("resources"));
  for (const resource of resources) {
    const item = el("details", { cls: "item" }, el("summary", { text: resource.name || resource.uri }));
    item.append(el("p", { cls: "meta", text: `${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ""}` }));
    if (resource.description) item.append(el("p", { cls: "meta", text: resource.description }));
    const notes = annotations(resource.annotations);
    if (notes) item.append(notes);
    item.append(
      el("button", {
        type: "button",
        text: "Read",
        onclick: () => post("/api/call", { kind: "resource", name: resource.uri, values: {} }).catch(alertIn(item)),
      }),
    );
    box.append(item);
  }
}

function showTemplates(templates) {
  const box = document.getElementById("templates");
  box.replaceChildren();
  if (!templates.length) return box.append(nothing("resource templates"));
  for (const template of templates) {
    const item = el("details", { cls: "item" }, el("summary", { text: template.name }));
    item.append(el("p", { cls: "meta", text: template.uriTemplate }));
    if (template.description) item.append(el("p", { cls: "meta", text: template.description }));
    item.append(argumentForm(template.form, "resource", template.name, { type: "ref/resource", uri: template.uriTemplate }));
    box.append(item);
  }
}

function showPrompts(prompts) {
  const box = document.getElementById("prompts");
  box.replaceChildren();
  if (!prompts.length) return box.append(nothing("prompts"));
  for (const prompt of prompts) {
    const item = el("details", { cls: "item" }, el("summary", { text: prompt.name }));
    if (prompt.description) item.append(el("p", { cls: "meta", text: prompt.description }));
    item.append(argumentForm(prompt.form, "prompt", prompt.name, { type: "ref/prompt", name: prompt.name }));
    box.append(item);
  }
}

// Skills (SEP-2640): the entries as listed (no file fetched), and each SKILL.md on request, which the
// server side fetches and verifies against its entry (size, digest, frontmatter) before it reaches here.
function showSkills(skills) {
  const box = document.getElementById("skills");
  box.replaceChildren();
  if (!skills.length) return box.append(nothing("skills"));
  for (const skill of skills) {
    const name = (skill.frontmatter && skill.frontmatter.name) || skill.uri;
    const item = el("details", { cls: "item" }, el("summary", { text: name }));
    if (skill.frontmatter && skill.frontmatter.description) item.append(el("p", { cls: "meta", text: skill.frontmatter.description }));
    item.append(el("p", { cls: "meta", text: skill.uri }));
    const files = el("ul", { "aria-label": `Files of ${name}` });
    if (Array.isArray(skill.resources)) {
      for (const file of skill.resources) files.append(el("li", { text: `${file.uri} (${file.size} bytes)` }));
    } else {
      files.append(el("li", { text: "Files generated on demand (\"dynamic\"): none can be verified" }));
    }
    item.append(files);
    const shown = el("div");
    const load = el("button", {
      type: "button",
      text: "Load SKILL.md",
      onclick: () =>
        post("/api/skill", { uri: skill.uri })
          .then((data) => {
            shown.replaceChildren(
              el("p", { cls: "meta", role: "status", text: "Verified: size, digest and frontmatter match the entry." }),
              el("pre", { "aria-label": `SKILL.md of ${name}`, text: data.text }),
            );
          })
          .catch(alertIn(item)),
    });
    item.append(load, shown);
    box.append(item);
  }
}

function nothing(what) {
  // One rendering for a list the server does not offer and one it offers empty, whatever the server.
  return el("p", { cls: "meta", text: `This server offers no ${what}.` });
}

function annotations(notes) {
  if (!notes || !Object.keys(notes).length) return null;
  const list = el("p", { cls: "meta", "aria-label": "Annotations" });
  for (const [k, v] of Object.entries(notes)) list.append(el("span", { cls: "badge", text: `${k}: ${JSON.stringify(v)}` }));
  return list;
}

function schema(title, value) {
  return el("details", {}, el("summary", { text: title }), el("pre", { text: JSON.stringify(value, null, 2) }));
}

function fromHtml(html) {
  // Markup made by Baton's own renderer (baton.render.html), which escapes every server string.
  const holder = document.createElement("template");
  holder.innerHTML = html;
  return holder.content.firstElementChild;
}

function values(form) {
  const out = {};
  for (const [name, value] of new FormData(form)) {
    (out[name] = out[name] || []).push(String(value));
  }
  return out;
}

function checkGroups(form) {
  for (const group of form.querySelectorAll("fieldset[data-kind=multi]")) {
    const chosen = group.querySelectorAll("input:checked").length;
    const min = group.dataset.minItems, max = group.dataset.maxItems;
    const name = group.querySelector("legend").textContent;
    if (min !== undefined && chosen < Number(min)) return `${name}: choose at least ${min}`;
    if (max !== undefined && chosen > Number(max)) return `${name}: choose at most ${max}`;
  }
  return null;
}

function guard(form) {
  // The browser checks the form before it is sent and fires "invalid" at each field that fails:
  // all of them are said at once, in one alert.
  let problems = [];
  form.addEventListener(
    "invalid",
    (event) => {
      const label = form.querySelector(`label[for="${CSS.escape(event.target.id)}"]`);
      const name = label ? label.textContent : event.target.name;
      if (!problems.length) {
        setTimeout(() => {
          alertIn(form.parentElement)(new Error(problems.join(" ")));
          problems = [];
        });
      }
      problems.push(`${name}: ${event.target.validationMessage}`);
    },
    true,
  );
}

function argumentForm(html, kind, name, ref) {
  const form = fromHtml(html);
  guard(form);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const problem = checkGroups(form);
    if (problem) return alertIn(form.parentElement)(new Error(problem));
    post("/api/call", { kind, name, values: values(form) })
      .then(() => {
        const old = form.parentElement.querySelector(":scope > .alert.transient");
        if (old) old.remove();
      })
      .catch(alertIn(form.parentElement));
  });
  if (ref && capabilities.completions) offerCompletions(form, ref);
  return form;
}

function offerCompletions(form, ref) {
  for (const input of form.querySelectorAll("input[type=text]")) {
    const list = el("datalist", { id: `${input.id}-completions` });
    input.setAttribute("list", list.id);
    input.after(list);
    let timer = null;
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const context = {};
        for (const [k, v] of Object.entries(values(form))) if (k !== input.name) context[k] = v[0];
        try {
          const data = await post("/api/complete", { ref, name: input.name, value: input.value, context });
          list.replaceChildren(...data.values.map((v) => el("option", { value: v })));
        } catch (error) {
          console.warn("baton dev: completion failed", error);
        }
      }, 150);
    });
  }
}

// -- questions ---------------------------------------------------------------------------------------------

function question(e) {
  const label = e.mode === "sampling" ? "Question: sampling" : `Question: ${e.message}`;
  const box = el("section", { cls: "question", "aria-label": label, "data-key": e.key });
  const answer = (action, vals) =>
    post("/api/answer", { call: e.call, key: e.key, action, values: vals || {} }).catch(alertIn(box));
  if (e.mode === "form") {
    box.append(el("p", { text: e.message }));
    const form = fromHtml(e.form);
    guard(form);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const action = event.submitter ? event.submitter.value : "accept";
      if (action === "accept") {
        const problem = checkGroups(form);
        if (problem) return alertIn(box)(new Error(problem));
      }
      answer(action, action === "accept" ? values(form) : {});
    });
    box.append(form);
  } else if (e.mode === "url") {
    box.append(el("p", { text: e.message }));
    const address = el("p", {}, "Address: ");
    for (const part of e.url.segments) {
      address.append(part.style === "domain" ? el("strong", { cls: "url-domain", text: part.text }) : part.text);
    }
    box.append(address, el("p", { text: `Site: ${e.url.site || e.url.host}` }));
    const verdict = el("ul", { "aria-label": "URL check" });
    if (e.url.ok && !e.url.warnings.length) verdict.append(el("li", { cls: "ok", text: "Baton's URL check found nothing wrong with this address." }));
    for (const w of e.url.warnings) verdict.append(el("li", { text: `Warning: ${w}` }));
    for (const x of e.url.errors) verdict.append(el("li", { cls: "alert", text: `Refused: ${x}` }));
    box.append(verdict);
    const buttons = el("div", { cls: "baton-buttons" });
    if (e.url.ok) {
      const done = el("button", { type: "button", text: "Done", hidden: true, onclick: () => answer("accept") });
      buttons.append(
        el("button", {
          type: "button",
          text: "Open",
          onclick: () => {
            window.open(e.url.url, "_blank", "noopener,noreferrer");
            done.hidden = false;
          },
        }),
        done,
      );
    } else {
      buttons.append(el("p", { cls: "alert", text: "This address is not opened." }));
    }
    buttons.append(
      el("button", { type: "button", text: "Decline", onclick: () => answer("decline") }),
      el("button", { type: "button", text: "Cancel", onclick: () => answer("cancel") }),
    );
    box.append(buttons);
  } else {
    box.append(el("p", {}, "The server asks for a model reply ", el("span", { cls: "badge deprecated", text: "deprecated: sampling" })));
    box.append(el("pre", { text: JSON.stringify(e.request.messages || e.request, null, 2) }));
    const reply = el("textarea", { id: `reply-${e.call}-${e.key}`, rows: 3 });
    box.append(el("label", { for: reply.id, text: "Reply as the model" }), reply);
    box.append(
      el("div", { cls: "baton-buttons" },
        el("button", { type: "button", text: "Send", onclick: () => answer("accept", { text: [reply.value] }) }),
        el("button", { type: "button", text: "Decline", onclick: () => answer("decline") }),
      ),
    );
  }
  return box;
}

// -- results -----------------------------------------------------------------------------------------------

function showResult(call, e) {
  const result = e.result || {};
  const box = el("section", { "aria-label": "Result" });
  if (result.isError) {
    call.article.classList.add("failed");
    box.classList.add("is-error");
    box.append(el("p", { cls: "alert", role: "alert", text: "The tool reported an error (isError)." }));
  }
  for (const block of result.content || []) box.append(contentBlock(block));
  for (const item of result.contents || []) box.append(resourceContents(item));
  for (const message of result.messages || []) {
    box.append(el("p", { cls: "meta", text: `${message.role}:` }), contentBlock(message.content || {}));
  }
  if (result.description) box.prepend(el("p", { cls: "meta", text: result.description }));
  if (result.structuredContent !== undefined) {
    box.append(el("h4", { text: "structuredContent" }), el("pre", { text: JSON.stringify(result.structuredContent, null, 2) }));
  }
  if (e.structuredCheck) {
    const fine = e.structuredCheck === "ok";
    box.append(
      el("p", {
        cls: fine ? "ok" : "alert",
        role: fine ? null : "alert",
        text: fine ? "structuredContent matches the outputSchema." : `structuredContent ${e.structuredCheck}`,
      }),
    );
  }
  call.result.append(box);
}

const SAFE_MEDIA = /^(image|audio)\/[a-z0-9.+-]+$/i;
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

function media(kind, mime, data) {
  const size = Math.floor((data.length * 3) / 4);
  if (!SAFE_MEDIA.test(mime || "") || !mime.startsWith(kind) || !BASE64.test(data || "")) {
    return el("p", { cls: "meta", text: `${kind} (${mime || "no type"}, about ${size} bytes), not shown` });
  }
  const src = `data:${mime};base64,${data.replace(/\s/g, "")}`;
  if (kind === "image") return el("img", { cls: "content", src, alt: `image (${mime}, about ${size} bytes)` });
  return el("audio", { cls: "content", src, controls: true, "aria-label": `audio (${mime}, about ${size} bytes)` });
}

function contentBlock(block) {
  switch (block.type) {
    case "text":
      return el("pre", { text: block.text });
    case "image":
      return media("image", block.mimeType, block.data || "");
    case "audio":
      return media("audio", block.mimeType, block.data || "");
    case "resource":
      return el("div", {}, el("p", { cls: "meta", text: `Embedded resource: ${block.resource && block.resource.uri}` }), resourceContents(block.resource || {}));
    case "resource_link":
      return el("p", { cls: "meta", text: `Resource link: ${block.name || ""} ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ""}` });
    default:
      return el("pre", { text: JSON.stringify(block, null, 2) });
  }
}

function resourceContents(item) {
  if (typeof item.text === "string") return el("pre", { "aria-label": item.uri, text: item.text });
  if (typeof item.blob === "string") {
    const mime = item.mimeType || "";
    if (mime.startsWith("image/") || mime.startsWith("audio/")) return media(mime.split("/")[0], mime, item.blob);
    return el("p", { cls: "meta", text: `${item.uri}: ${Math.floor((item.blob.length * 3) / 4)} bytes (${mime || "binary"})` });
  }
  return el("pre", { text: JSON.stringify(item, null, 2) });
}

// -- the raw exchange -------------------------------------------------------------------------------------

function rawExchange(callId) {
  const pre = el("pre", { "aria-label": "Messages" });
  const copy = el("button", {
    type: "button",
    text: "Copy",
    onclick: () => navigator.clipboard.writeText(pre.textContent).catch(() => setStatus("The browser did not allow copying.")),
  });
  const node = el("details", {}, el("summary", { text: "Raw exchange" }), copy, pre);
  async function refresh() {
    if (!node.open) return;
    const response = await fetch(`/api/exchange?call=${encodeURIComponent(callId)}`, { headers });
    const data = await response.json();
    pre.textContent = (data.messages || [])
      .map((m) => `${m.direction === "sent" ? "→" : "←"} ${m.ms} ms\n${JSON.stringify(m.message, null, 2)}`)
      .join("\n\n");
  }
  node.addEventListener("toggle", refresh);
  return { node, refresh };
}

follow();
