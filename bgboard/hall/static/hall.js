// SPDX-License-Identifier: MIT
// The hall page, kept up to date by the server's events (GET /api/events): the alerts and one
// box per table, drawn as the server draws them at first.
"use strict";

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

function tableBox(t) {
  const box = el("section", undefined, t.online ? "" : "off");
  box.append(el("h2", t.table));
  const players = t.players.length ? t.players.join(" vs ") : "(no match yet)";
  const of = t.length ? ` in a ${t.length}-point match` : t.length === 0 ? " (money)" : "";
  box.append(el("div", `${players}: ${t.score.join("-")}${of}`));
  box.append(el("pre", t.board));
  box.append(el("div", `last move: ${t.last_move || "-"}`));
  if (t.illegal) box.append(el("div", `illegal move: ${t.illegal}`, "illegal"));
  if (t.check) box.append(el("div", `please check: ${t.check}`, "check"));
  const small = el("small", `${t.actions} actions held, ${t.online ? "online" : "offline"}, last seen ${t.last_seen || "-"}`);
  const line = el("div");
  line.append(small);
  box.append(line);
  return box;
}

function show(data) {
  document.getElementById("count").textContent = String(data.tables.length);
  const tournament = data.tables.some((t) => t.tournament);
  document.getElementById("tournament").textContent = tournament ? " (tournament mode: hints off)" : "";
  const alerts = document.getElementById("alerts");
  alerts.replaceChildren(...(data.alerts.length
    ? data.alerts.map((a) => el("li", `${a.table}: ${a.text}`, a.kind))
    : [el("li", "none")]));
  document.getElementById("tables").replaceChildren(...data.tables.map(tableBox));
}

const live = document.getElementById("live");
const source = new EventSource("/api/events");
source.onmessage = (message) => {
  show(JSON.parse(message.data));
  live.textContent = "live";
};
// The browser reconnects by itself; say so meanwhile.
source.onerror = () => { live.textContent = "reconnecting"; };
