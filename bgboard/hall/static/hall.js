// SPDX-License-Identifier: MIT
// The hall page, kept up to date by the server's events (GET /api/events): the alerts, each
// linking to its table's box, live page, replay and files, and one box per table (id
// "table-NAME") with the live page's SVG board (board.js: BG.draw) and the last move's arrows,
// player 1 at the bottom, how long ago the hall last heard from it and its downloads. A box is
// made again only when its table changed: a hundred boards redrawn for each action would lag.
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
  if (draw && typeof BG !== "undefined") holder.append(BG.draw(draw));
  else holder.append(el("p", "no position yet", "note"));
}

// The boxes off the screen are not drawn by the browser (hall.css: content-visibility: auto),
// and their boards are not made either until they come on it: with a hundred tables playing,
// making boards nobody sees would keep the page too busy to show the others in time.
const skipped = new Set(); // the tables whose box the browser skips now
const later = new WeakMap(); // a board holder -> the state to draw in it once it is seen

function drawWhenSeen(holder, name, draw) {
  if (skipped.has(name)) later.set(holder, draw);
  else drawInto(holder, draw);
}

document.addEventListener("contentvisibilityautostatechange", (event) => {
  const box = event.target;
  if (!box.id || !box.id.startsWith("table-")) return;
  const name = box.id.slice("table-".length);
  box.toggleAttribute("data-offscreen", event.skipped);
  if (event.skipped) {
    skipped.add(name);
    return;
  }
  skipped.delete(name);
  const holder = box.querySelector(".board-holder");
  if (holder && later.has(holder)) {
    drawInto(holder, later.get(holder));
    later.delete(holder);
  }
}, true); // the event does not bubble: caught on its way down

function playerLine(t, player) {
  const line = el("div", undefined, `player player--p${player}`);
  line.dataset.player = String(player);
  line.append(el("span", undefined, `swatch swatch--p${player}`));
  line.append(el("span", t.players[player - 1] || `Player ${player}`, "name"));
  line.append(" ");
  line.append(el("span", String(t.score[player - 1] ?? 0), "points"));
  return line;
}

// A table's links (as the server writes them): its live page and replay when it has a page,
// its match's files from the hall.
const WORDS = [["live", "live page"], ["replay", "replay"], ["mat", ".mat"], ["sgf", ".sgf"]];

function linkItems(links) {
  const out = [];
  for (const [key, words] of WORDS) {
    if (!links[key]) continue;
    const a = el("a", words, key);
    a.href = links[key];
    // The files are saved; the table's own pages open beside the hall's.
    if (key === "mat" || key === "sgf") a.setAttribute("download", "");
    else Object.assign(a, { target: "_blank", rel: "noopener" });
    out.push(a);
  }
  return out;
}

function tableLinks(t) {
  const links = { ...(t.downloads || {}) };
  if (t.page) links.live = t.page;
  if (t.replay) links.replay = t.replay;
  return links;
}

function tableBox(t) {
  const box = el("section", undefined, t.online ? "table" : "table off");
  box.id = `table-${t.table}`;
  const title = el("h2", t.table);
  const of = t.length ? `(${t.length}-point match)` : t.length === 0 ? "(money)" : "(no match yet)";
  title.append(" ", el("small", `${t.players.join(" vs ")} ${of}`, "match"));
  box.append(title, playerLine(t, 2));
  const holder = el("div", undefined, "board-holder");
  drawWhenSeen(holder, t.table, t.draw);
  box.append(holder, playerLine(t, 1));
  box.append(el("div", `last move: ${t.last_move || "-"}`, "last-move"));
  if (t.illegal) box.append(el("div", `illegal move: ${t.illegal}`, "illegal"));
  if (t.check) box.append(el("div", `please check: ${t.check}`, "check"));
  if (t.dispute) box.append(el("div", `dispute: ${t.dispute}`, "dispute"));
  const small = el("small", "last heard ");
  const when = el("span", ago(t.last_seen), "ago");
  when.dataset.time = t.last_seen || "";
  small.append(when, `, ${t.actions} actions held, ${t.online ? "online" : "offline"}`);
  const facts = el("div", undefined, "facts");
  facts.append(small);
  box.append(facts);
  const links = el("div", undefined, "links");
  const every = el("a", "every match (.zip)", "zip");
  every.href = `/api/tables/${encodeURIComponent(t.table)}/export.zip`;
  every.setAttribute("download", "");
  links.append(...linkItems(tableLinks(t)), every);
  box.append(links);
  return box;
}

function alertItem(a) {
  const item = el("li", `${a.table}: ${a.text} `, a.kind);
  const link = el("a", "show table", "goto");
  link.href = a.links.table;
  item.append(link, ...linkItems(a.links));
  return item;
}

// What is on the page now: each table's JSON and box, and the alerts' JSON.
const shown = new Map();
let shownAlerts = null;

function show(data) {
  document.getElementById("count").textContent = String(data.tables.length);
  const tournament = data.tables.some((t) => t.tournament);
  document.getElementById("tournament").textContent = tournament ? " (tournament mode: hints off)" : "";
  const said = JSON.stringify(data.alerts);
  if (said !== shownAlerts) {
    shownAlerts = said;
    const alerts = document.getElementById("alerts");
    alerts.replaceChildren(...(data.alerts.length ? data.alerts.map(alertItem) : [el("li", "none")]));
  }
  const names = new Set();
  const boxes = data.tables.map((t) => {
    names.add(t.table);
    const text = JSON.stringify(t);
    const kept = shown.get(t.table);
    if (kept && kept.text === text) return kept.box;
    const box = tableBox(t);
    shown.set(t.table, { text, box });
    return box;
  });
  for (const name of [...shown.keys()]) if (!names.has(name)) shown.delete(name);
  // Put each box in its place; the boxes replaced or gone end up after the last and go.
  const main = document.getElementById("tables");
  boxes.forEach((box, i) => {
    const there = main.children[i];
    if (there !== box) main.insertBefore(box, there || null);
  });
  while (main.children.length > boxes.length) main.lastElementChild.remove();
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
