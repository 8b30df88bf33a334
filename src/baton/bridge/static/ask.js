// baton bridge: the page for the questions a host cannot show. It reads the run's token from the address's
// fragment, polls the waiting questions, and answers them. Text from the server is only ever set as
// textContent; the only markup inserted is the forms that Baton's own HTML renderer made (every server
// string in them escaped). The DOM helpers (`el`, `setStatus`, `values`) are baton dev's (dom.js).
"use strict";

const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
const headers = { "X-Baton-Dev-Token": token };
const shown = new Map();

function question(q) {
  const box = el("section", { cls: "question", "aria-label": `Question: ${q.message}` });
  const problem = el("p", { cls: "alert", role: "alert" });
  const answer = async (action, vals) => {
    const response = await fetch("/api/answer", {
      method: "POST",
      headers: { ...headers, "Content-Type": "application/json" },
      body: JSON.stringify({ id: q.id, action, values: vals || {} }),
    });
    const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
    if (!response.ok) return (problem.textContent = data.error || `HTTP ${response.status}`);
    box.replaceChildren(el("p", { cls: "ok", text: `Answered (${action}): ${q.message}` }));
  };
  box.append(el("p", { text: q.message }));
  if (q.mode === "form") {
    const holder = document.createElement("template");
    holder.innerHTML = q.form; // Baton's own renderer (baton.render.html), every server string escaped
    const form = holder.content.firstElementChild;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const action = event.submitter ? event.submitter.value : "accept";
      answer(action, action === "accept" ? values(form) : {});
    });
    box.append(form);
  } else {
    const buttons = el("div", { cls: "baton-buttons" });
    if (q.url) {
      box.append(el("p", {}, "Open this address, then press Done: ", el("a", { href: q.url, target: "_blank", rel: "noopener noreferrer", text: q.url })));
      box.append(el("p", { text: `Site: ${q.site}` }));
      buttons.append(el("button", { type: "button", text: "Done", onclick: () => answer("accept") }));
    } else {
      box.append(el("p", { cls: "alert", text: `This address is not opened: ${q.refused.join(" ")}` }));
    }
    buttons.append(el("button", { type: "button", text: "Decline", onclick: () => answer("decline") }));
    box.append(buttons);
  }
  box.append(problem);
  return box;
}

async function poll() {
  if (!token) return setStatus("This address has no token: open the address that baton bridge printed.");
  try {
    const response = await fetch("/api/questions", { headers });
    const data = await response.json();
    if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
    const waiting = new Set(data.questions.map((q) => q.id));
    for (const [id, box] of shown) {
      if (!waiting.has(id) && box.querySelector("form, button")) box.remove(); // withdrawn or timed out
      if (!waiting.has(id)) shown.delete(id);
    }
    for (const q of data.questions) {
      if (shown.has(q.id)) continue;
      const box = question(q);
      shown.set(q.id, box);
      document.getElementById("questions").append(box);
    }
    setStatus(data.questions.length ? `${data.questions.length} question(s) waiting` : "No question waiting.");
  } catch (error) {
    setStatus(`The bridge is not answering (${error.message}); it may have ended.`);
  }
  setTimeout(poll, 1000);
}

poll();
