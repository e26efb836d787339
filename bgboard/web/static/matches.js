// SPDX-License-Identifier: MIT
// The match browser: the stored matches, and any game replayed move by move, from the seat the
// table's bottom player sat in (as the live page drew it), with gnubg's analysis when one is kept.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  let steps = [];
  let at = -1;
  let before = false; // showing the position before the step's action (the decision)

  const signed = (x, digits) => (x >= 0 ? "+" : "-") + Math.abs(x).toFixed(digits);
  const cell = (tr, text, tag) => {
    const td = document.createElement(tag || "td");
    td.textContent = text;
    tr.append(td);
    return td;
  };

  // Players, score, pips and who sits where, above the board.
  function facts(state) {
    const bottom = state.board.bottom;
    const rows = state.players.map((name, i) => {
      const player = i + 1;
      const seat = player === bottom ? 1 : 2;
      const div = document.createElement("div");
      div.className = "fact";
      div.dataset.player = String(player);
      div.dataset.seat = String(seat);
      if (state.turn === player) div.dataset.turn = "yes";
      const swatch = document.createElement("span");
      swatch.className = `swatch swatch--p${seat}`;
      const who = document.createElement("b");
      who.textContent = name;
      const rest = document.createElement("span");
      rest.className = "muted";
      rest.textContent = ` ${seat === 1 ? "bottom" : "top"} · score ${state.score[i]} · pips ${state.pips[i]}`;
      div.append(swatch, who, rest);
      return div;
    });
    const length = document.createElement("div");
    length.className = "fact muted";
    length.textContent = (state.length ? `${state.length}-point match` : "money") + (state.crawford ? " · Crawford" : "") +
      (state.cube.value > 1 ? ` · cube ${state.cube.value}` : "");
    $("facts").replaceChildren(...rows, length);
  }

  // What gnubg said of the decision at this step: for a marked error the play made, its best
  // and the equity lost; for any analysed decision gnubg's top plays (the play made
  // highlighted) and the cube figures.
  function decision(step) {
    const e = step.error;
    const d = step.decision;
    const alternatives = d && d.alternatives && d.alternatives.length ? d.alternatives : null;
    const cube = d && d.cube ? d.cube : null;
    $("decision").hidden = !e && !alternatives && !cube;
    const parts = [];
    const who = step.state.players[step.player - 1];
    if (e) {
      const made = document.createElement("span");
      made.className = "made";
      const best = document.createElement("span");
      best.className = "best";
      if (e.dice && e.dice.length) {
        made.textContent = `played ${e.play || "no move"}`;
        best.textContent = `gnubg's best ${e.best}`;
      } else {
        made.textContent = e.play;
        best.textContent = `right was ${e.best}`;
      }
      const lost = document.createElement("span");
      lost.textContent = ` (${signed(-e.equity_lost, 3)} EMG, ${e.label})`;
      const roll = e.dice && e.dice.length ? `${e.dice.join("")}: ` : "";
      const p = document.createElement("p");
      p.className = "decision-error";
      p.append(`${who}, game ${e.game} move ${e.move}, ${roll}`, made, " · ", best, lost);
      parts.push(p);
    }
    // The checker play first; then the cube decision (for a move, the one before the roll).
    if (alternatives) parts.push(playsTable(d, who));
    if (cube) parts.push(cubeTable(cube, who));
    $("decision").replaceChildren(...parts);
  }

  const percent = (x) => (x == null ? "" : (100 * x).toFixed(1));

  // gnubg's top plays at a checker-play decision: rank, play, equity, difference to the best,
  // win and gammon chances; the play made highlighted.
  function playsTable(d, who) {
    const table = document.createElement("table");
    table.id = "alternatives";
    table.className = "alternatives";
    const caption = document.createElement("caption");
    caption.textContent = `${who}'s ${d.dice.join("")}: gnubg's top plays` + (d.label ? ` (played: ${d.label})` : "");
    const head = document.createElement("tr");
    for (const h of ["#", "play", "equity", "diff", "win %", "gammon %"]) cell(head, h, "th");
    head.cells[1].className = "play";
    const thead = document.createElement("thead");
    thead.append(head);
    const tbody = document.createElement("tbody");
    for (const a of d.alternatives) {
      const tr = document.createElement("tr");
      if (a.made) {
        tr.className = "made";
        tr.title = "the play made";
      }
      tr.dataset.rank = String(a.rank);
      cell(tr, String(a.rank));
      cell(tr, a.play || "no move").className = "play";
      cell(tr, signed(a.equity, 3));
      cell(tr, a.difference ? signed(a.difference, 3) : "");
      cell(tr, percent(a.chances && a.chances.win));
      cell(tr, percent(a.chances && a.chances.win_gammon));
      tbody.append(tr);
    }
    table.append(caption, thead, tbody);
    return table;
  }

  // gnubg's cubeful equities at a cube decision (the doubler's, a pass worth +1), the right
  // action in gnubg's words, and the decision made with what it lost.
  function cubeTable(c, who) {
    const table = document.createElement("table");
    table.id = "cube-figures";
    table.className = "alternatives cube";
    const caption = document.createElement("caption");
    const lost = c.equity_lost ? ` (${signed(-c.equity_lost, 3)}${c.label ? `, ${c.label}` : ""})` : "";
    caption.textContent = `${who}: ${c.played}${lost} · gnubg: ${c.action}`;
    const rows = [["No double", c.no_double], ["Double, take", c.double_take], ["Double, pass", c.double_pass]];
    const best = Math.max(c.no_double, Math.min(c.double_take, c.double_pass));
    const head = document.createElement("tr");
    for (const h of ["cube action", "equity", "diff"]) cell(head, h, "th");
    const thead = document.createElement("thead");
    thead.append(head);
    const tbody = document.createElement("tbody");
    for (const [words, equity] of rows) {
      const tr = document.createElement("tr");
      tr.dataset.action = words;
      cell(tr, words);
      cell(tr, signed(equity, 3));
      cell(tr, equity === best ? "" : signed(equity - best, 3));
      tbody.append(tr);
    }
    const foot = document.createElement("tr");
    const chances = c.chances ? `win ${percent(c.chances.win)}%, gammon ${percent(c.chances.win_gammon)}%` : "";
    const note = cell(foot, `the doubler's equities (EMG, cube ${c.cube})${chances ? ` · ${chances}` : ""}`);
    note.colSpan = 3;
    note.className = "muted";
    tbody.append(foot);
    table.append(caption, thead, tbody);
    return table;
  }

  function show(index, opts) {
    if (!steps.length) return;
    at = Math.max(0, Math.min(index, steps.length - 1));
    if (opts && "before" in opts) before = opts.before;
    const step = steps[at];
    const state = before ? step.before : step.state;
    const svg = BG.draw(state);
    svg.dataset.step = String(at);
    svg.dataset.view = before ? "before" : "after";
    $("board").replaceChildren(svg);
    facts(state);
    const when = before ? "before" : "after";
    $("status").textContent = `game ${step.game}, ${at + 1}/${steps.length}: ${step.text} · ${when}: ${state.status}`;
    $("view").textContent = before ? "after the move" : "before the move";
    $("view").setAttribute("aria-pressed", before ? "true" : "false");
    $("game").value = String(step.game);
    decision(step);
    $("evidence").hidden = !step.frame || before;
    if (step.frame && !before) $("frame").src = step.frame;
    document.querySelectorAll("#steps li").forEach((li, i) => li.setAttribute("aria-current", i === at ? "true" : "false"));
    document.querySelectorAll("#errors li").forEach((li) => li.setAttribute("aria-current", step.error && li.dataset.ref === step.error.ref ? "true" : "false"));
    const current = document.querySelector("#steps li[aria-current='true']");
    if (current && current.scrollIntoViewIfNeeded) current.scrollIntoViewIfNeeded(false);
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
      // A move gnubg analysed (or marked as an error) opens on the decision; any other on the
      // position after it.
      li.addEventListener("click", () => show(i, { before: !!(s.error || s.decision) }));
      return li;
    }));
    analysis(data.analysis, m.players);
    const games = [...new Set(steps.map((s) => s.game))];
    $("game").replaceChildren(...games.map((g) => new Option(`${g}`, `${g}`)));
    show(0, { before: false });
  }

  // gnubg's figures per player, its errors counted per game, and every error it marked; an
  // error made with a stored move opens the decision: the position before it, the dice, the
  // play made and gnubg's best as arrows.
  function analysis(kept, names) {
    $("analysis").hidden = !kept;
    $("no-analysis").hidden = !!kept;
    if (!kept) return;
    $("analysis-ply").textContent = `(${kept.ply}-ply)`;
    $("figures").querySelector("tbody").replaceChildren(...kept.players.map((p) => {
      const tr = document.createElement("tr");
      cell(tr, p.name);
      cell(tr, p.error_rate == null ? "n/a" : p.error_rate.toFixed(1));
      cell(tr, p.rating);
      const luck = cell(tr, p.luck == null ? "n/a" : signed(p.luck, 1));
      luck.className = "luck";
      if (p.luck_total != null) luck.title = `${signed(p.luck_total, 3)} EMG in the match` + (p.luck_rating && p.luck_rating !== "None" ? ` (${p.luck_rating})` : "");
      return tr;
    }));
    // Errors per game: how many each player made and the equity they lost.
    const games = new Map();
    kept.players.forEach((p, player) => p.errors.forEach((e) => {
      if (!games.has(e.game)) games.set(e.game, kept.players.map(() => ({ n: 0, lost: 0 })));
      const tally = games.get(e.game)[player];
      tally.n += 1;
      tally.lost += e.equity_lost;
    }));
    const head = document.createElement("tr");
    cell(head, "game", "th");
    kept.players.forEach((p) => cell(head, p.name, "th"));
    $("per-game").querySelector("thead").replaceChildren(head);
    $("per-game").querySelector("tbody").replaceChildren(...[...games.keys()].sort((a, b) => a - b).map((g) => {
      const tr = document.createElement("tr");
      tr.dataset.game = String(g);
      cell(tr, String(g));
      for (const t of games.get(g)) cell(tr, t.n ? `${t.n} (${signed(-t.lost, 3)})` : "none");
      return tr;
    }));
    const items = [];
    kept.players.forEach((p, player) => p.errors.forEach((e, n) => {
      const li = document.createElement("li");
      const ref = `${player}-${n}`;
      const roll = e.dice.length ? `${e.dice.join("")} played ${e.play || "nothing"}, best ${e.best}` : `${e.play}, right was ${e.best}`;
      li.textContent = `${p.name}, game ${e.game} move ${e.move}: ${roll} (-${e.equity_lost.toFixed(3)}, ${e.label})`;
      li.dataset.ref = ref;
      li.dataset.game = String(e.game);
      const at = steps.findIndex((s) => s.error && s.error.ref === ref);
      if (at >= 0) li.addEventListener("click", () => { show(at, { before: true }); $("board").scrollIntoView({ block: "nearest" }); });
      else li.classList.add("no-move");
      items.push(li);
    }));
    items.sort((a, b) => Number(a.dataset.game) - Number(b.dataset.game));
    $("errors").replaceChildren(...items);
  }

  $("first").addEventListener("click", () => show(0));
  $("prev").addEventListener("click", () => show(at - 1));
  $("next").addEventListener("click", () => show(at + 1));
  $("last").addEventListener("click", () => show(steps.length - 1));
  $("view").addEventListener("click", () => show(at, { before: !before }));
  $("game").addEventListener("change", () => show(steps.findIndex((s) => String(s.game) === $("game").value)));
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLSelectElement) return;
    if (e.key === "ArrowRight") show(at + 1);
    if (e.key === "ArrowLeft") show(at - 1);
  });

  fetch("/api/matches").then((r) => r.json()).then((matches) => {
    $("empty").hidden = matches.length > 0;
    const body = $("matches").querySelector("tbody");
    body.replaceChildren(...matches.map((m) => {
      const tr = document.createElement("tr");
      const cells = [m.id, `${m.players[0]} vs ${m.players[1]}`, m.length ? `${m.length} points` : "money", m.score.join("-")];
      for (const c of cells) cell(tr, String(c));
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
