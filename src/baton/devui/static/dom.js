// baton dev and baton bridge pages: the DOM helpers both pages use. Text goes in as textContent, never as markup.
"use strict";

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

function values(form) {
  const out = {};
  for (const [name, value] of new FormData(form)) {
    (out[name] = out[name] || []).push(String(value));
  }
  return out;
}
