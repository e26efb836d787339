// SPDX-License-Identifier: MIT
// The match browser: the stored matches, and any game replayed move by move.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  let steps = [];
  let at = -1;

  function show(index) {
    if (!steps.length) return;
    at = Math.max(0, Math.min(index, steps.length - 1));
    const step = steps[at];
    const svg = BG.draw(step.state);
    svg.dataset.step = String(at);
    $("board").replaceChildren(svg);
    $("status").textContent = `game ${step.game}, ${at + 1}/${steps.length}: ${step.text} · ${step.state.status}`;
    $("game").value = String(step.game);
    $("evidence").hidden = !step.frame;
    if (step.frame) $("frame").src = step.frame;
    document.querySelectorAll("#steps li").forEach((li, i) => li.setAttribute("aria-current", i === at ? "true" : "false"));
  }

  async function open(id) {
    const data = await (await fetch(`/api/matches/${id}`)).json();
    steps = data.steps;
    const m = data.match;
    $("replay").hidden = false;
    $("replay-title").textContent = `Match ${m.id}: ${m.players[0]} vs ${m.players[1]}`;
    $("steps").replaceChildren(...steps.map((s, i) => {
      const li = document.createElement("li");
      li.textContent = `G${s.game} ${s.text}` + (s.source === "correction" ? " (corrected)" : "");
      if (s.error) {
        li.classList.add("error");
        li.dataset.error = s.error.ref;
        li.append(` · ${s.error.label}, -${s.error.equity_lost.toFixed(3)} (best ${s.error.best})`);
      }
      li.addEventListener("click", () => show(i));
      return li;
    }));
    analysis(data.analysis);
    const games = [...new Set(steps.map((s) => s.game))];
    $("game").replaceChildren(...games.map((g) => new Option(`${g}`, `${g}`)));
    show(0);
  }

  // gnubg's figures per player, and every error it marked; an error made with a stored move
  // opens that move.
  function analysis(kept) {
    $("analysis").hidden = !kept;
    $("no-analysis").hidden = !!kept;
    if (!kept) return;
    $("analysis-ply").textContent = `(${kept.ply}-ply)`;
    $("figures").querySelector("tbody").replaceChildren(...kept.players.map((p) => {
      const tr = document.createElement("tr");
      for (const c of [p.name, p.error_rate.toFixed(1), p.rating, p.luck.toFixed(3)]) {
        const td = document.createElement("td");
        td.textContent = c;
        tr.append(td);
      }
      return tr;
    }));
    const items = [];
    kept.players.forEach((p, player) => p.errors.forEach((e, n) => {
      const li = document.createElement("li");
      const ref = `${player}-${n}`;
      const roll = e.dice.length ? `${e.dice.join("")} played ${e.play || "nothing"}, best ${e.best}` : `${e.play}, right was ${e.best}`;
      li.textContent = `${p.name}, game ${e.game} move ${e.move}: ${roll} (-${e.equity_lost.toFixed(3)}, ${e.label})`;
      li.dataset.ref = ref;
      const at = steps.findIndex((s) => s.error && s.error.ref === ref);
      if (at >= 0) li.addEventListener("click", () => show(at));
      items.push(li);
    }));
    $("errors").replaceChildren(...items);
  }

  $("first").addEventListener("click", () => show(0));
  $("prev").addEventListener("click", () => show(at - 1));
  $("next").addEventListener("click", () => show(at + 1));
  $("last").addEventListener("click", () => show(steps.length - 1));
  $("game").addEventListener("change", () => show(steps.findIndex((s) => String(s.game) === $("game").value)));
  document.addEventListener("keydown", (e) => {
    if (e.key === "ArrowRight") show(at + 1);
    if (e.key === "ArrowLeft") show(at - 1);
  });

  fetch("/api/matches").then((r) => r.json()).then((matches) => {
    $("empty").hidden = matches.length > 0;
    const body = $("matches").querySelector("tbody");
    body.replaceChildren(...matches.map((m) => {
      const tr = document.createElement("tr");
      const cells = [m.id, `${m.players[0]} vs ${m.players[1]}`, m.length ? `${m.length} points` : "money", m.score.join("-")];
      for (const c of cells) { const td = document.createElement("td"); td.textContent = c; tr.append(td); }
      const replay = document.createElement("td");
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = "replay";
      button.addEventListener("click", () => open(m.id));
      replay.append(button);
      const files = document.createElement("td");
      for (const fmt of ["mat", "sgf"]) {
        const a = document.createElement("a");
        a.href = `/api/matches/${m.id}/export?format=${fmt}`;
        a.textContent = `.${fmt}`;
        files.append(a, " ");
      }
      tr.append(replay, files);
      return tr;
    }));
    const wanted = new URLSearchParams(location.search).get("match");
    if (wanted) open(wanted);
  });
})();
