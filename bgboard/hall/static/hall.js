// SPDX-License-Identifier: MIT
// The hall page, kept up to date by the server's events (GET /api/events): the alerts, each
// linking to its table, and one box per table (id "table-NAME") with the live page's SVG board
// (board.js: BG.draw), player 1 at the bottom, and how long ago the hall last heard from it.
"use strict";

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

// "12 s ago", "2 min ago", "1 h 5 min ago" since an ISO time (UTC).
function ago(iso) {
  if (!iso) return "-";
  const when = Date.parse(iso);
  if (Number.isNaN(when)) return iso;
  const s = Math.max(0, Math.round((Date.now() - when) / 1000));
  if (s < 60) return `${s} s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.floor(m / 60);
  return `${h} h ${m % 60} min ago`;
}

function tick() {
  for (const span of document.querySelectorAll(".ago")) {
    span.textContent = ago(span.dataset.time);
    span.title = span.dataset.time || "";
  }
}

function drawInto(holder, draw) {
  holder.replaceChildren();
  if (draw && typeof BG !== "undefined") holder.append(BG.draw(draw, { arrows: false }));
  else holder.append(el("p", "no position yet", "note"));
}

function playerLine(t, player) {
  const line = el("div", undefined, `player player--p${player}`);
  line.dataset.player = String(player);
  line.append(el("span", undefined, `swatch swatch--p${player}`));
  line.append(el("span", t.players[player - 1] || `Player ${player}`, "name"));
  line.append(" ");
  line.append(el("span", String(t.score[player - 1] ?? 0), "points"));
  return line;
}

function tableBox(t) {
  const box = el("section", undefined, t.online ? "table" : "table off");
  box.id = `table-${t.table}`;
  const title = el("h2", t.table);
  const of = t.length ? `(${t.length}-point match)` : t.length === 0 ? "(money)" : "(no match yet)";
  title.append(" ", el("small", `${t.players.join(" vs ")} ${of}`, "match"));
  box.append(title, playerLine(t, 2));
  const holder = el("div", undefined, "board-holder");
  drawInto(holder, t.draw);
  box.append(holder, playerLine(t, 1));
  box.append(el("div", `last move: ${t.last_move || "-"}`, "last-move"));
  if (t.illegal) box.append(el("div", `illegal move: ${t.illegal}`, "illegal"));
  if (t.check) box.append(el("div", `please check: ${t.check}`, "check"));
  const small = el("small", "last heard ");
  const when = el("span", ago(t.last_seen), "ago");
  when.dataset.time = t.last_seen || "";
  small.append(when, `, ${t.actions} actions held, ${t.online ? "online" : "offline"}`);
  const facts = el("div", undefined, "facts");
  facts.append(small);
  box.append(facts);
  return box;
}

function alertItem(a) {
  const item = el("li", `${a.table}: ${a.text} `, a.kind);
  const link = el("a", "show table", "goto");
  link.href = `#table-${a.table}`;
  item.append(link);
  return item;
}

function show(data) {
  document.getElementById("count").textContent = String(data.tables.length);
  const tournament = data.tables.some((t) => t.tournament);
  document.getElementById("tournament").textContent = tournament ? " (tournament mode: hints off)" : "";
  const alerts = document.getElementById("alerts");
  alerts.replaceChildren(...(data.alerts.length ? data.alerts.map(alertItem) : [el("li", "none")]));
  document.getElementById("tables").replaceChildren(...data.tables.map(tableBox));
}

// The boxes the server wrote: their boards drawn at once, before the first event.
for (const holder of document.querySelectorAll(".board-holder[data-draw]")) {
  drawInto(holder, JSON.parse(holder.dataset.draw));
}
tick();
setInterval(tick, 5000);

const live = document.getElementById("live");
const source = new EventSource("/api/events");
source.onmessage = (message) => {
  show(JSON.parse(message.data));
  live.textContent = "live";
};
// The browser reconnects by itself; say so meanwhile.
source.onerror = () => { live.textContent = "reconnecting"; };
