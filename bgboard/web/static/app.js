// SPDX-License-Identifier: MIT
// The live page: the table's state and events from /api/events (server-sent events), drawn
// with board.js; changes (done, undo, a correction, the dice) posted with the table's token.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const TOKEN_KEY = "bgboard-token";
  const FLIP_KEY = "bgboard-flip";
  let lastSeq = 0;
  let current = null;
  let chosenDice = [];
  // The match's actions as the events told them (an undo takes the last back): the move list.
  let actions = [];
  const flipped = () => localStorage.getItem(FLIP_KEY) === "yes";

  // The token arrives in the QR code's link after "#" (never sent to the server); keep it.
  const fromLink = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromLink) {
    localStorage.setItem(TOKEN_KEY, fromLink);
    history.replaceState(null, "", location.pathname + location.search);
  }
  const token = () => localStorage.getItem(TOKEN_KEY) || "";
  $("token").value = token();

  function playerLine(node, player, state) {
    const seat = player === state.board.bottom ? 1 : 2;
    const name = state.players[player - 1];
    const points = state.score[player - 1];
    const score = state.length ? `${points}` : `${points} (money)`;
    node.replaceChildren();
    const swatch = document.createElement("span");
    swatch.className = `swatch swatch--p${seat}`;
    const who = document.createElement("strong");
    who.textContent = name;
    const facts = document.createElement("span");
    facts.className = "facts";
    facts.textContent = `score ${score} · pips ${state.pips[player - 1]}`;
    node.append(swatch, who, facts);
    node.dataset.turn = state.turn === player ? "yes" : "no";
    const over = state.phase === "match over";
    if (state.turn === player || (over && winner(state) === player)) {
      const turn = document.createElement("span");
      turn.className = "badge";
      turn.textContent = over ? "won the match" : "to play";
      node.append(turn);
    }
  }

  // The player (1 or 2) ahead on points: the winner once the match is over.
  const winner = (state) => (state.score[0] >= state.score[1] ? 1 : 2);

  // The score as people say it, the leader's first when the match is over ("Ann won 4-3").
  function scoreWords(state) {
    const [a, b] = state.score;
    if (state.phase === "match over") {
      const w = winner(state);
      return `${state.players[w - 1]} won the match ${Math.max(a, b)}-${Math.min(a, b)}`;
    }
    const length = state.length ? `${state.length}-point match` : "money game";
    return `${length}, score ${a}-${b}`;
  }

  function render(state) {
    current = state;
    const flip = flipped();
    const seated = state.board.bottom; // the player at seat 1
    const other = seated === 1 ? 2 : 1;
    playerLine($("player-top"), flip ? seated : other, state);
    playerLine($("player-bottom"), flip ? other : seated, state);
    let status = state.phase === "match over" ? "" : state.status;
    // A please-check stops the match: the status says what is asked, not what was awaited.
    if (state.check && state.check.status) status = state.check.status;
    if (state.crawford) status += " · Crawford game";
    status += (status ? " · " : "") + scoreWords(state);
    $("status").textContent = status;
    const svg = BG.draw(state, { flip });
    alertIllegal(state);
    svg.dataset.seq = String(state.seq);
    $("board").replaceChildren(svg);
    $("gnubgid").textContent = state.gnubgid;
    $("xgid").textContent = state.xgid;
    // The referee's calibration view: always linked, and asked for while the board is not read.
    $("calibrate-link").hidden = !state.calibrate;
    $("calibrate-banner").hidden = !(state.calibrate && state.calibrated === false);

    const banner = $("banner");
    const wrong = state.illegal;
    if (wrong && wrong.kind === "not-gnubgs") {
      // A legal move, only not the one gnubg chose: not called illegal.
      banner.hidden = false;
      banner.className = "banner banner--illegal banner--not-gnubgs";
      banner.textContent = `Not ${wrong.who || "gnubg"}'s move: it plays ${wrong.expected}. Set its checkers as the lights show.`;
    } else if (wrong) {
      banner.hidden = false;
      banner.className = "banner banner--illegal";
      banner.textContent = "Illegal move: " + wrong.reasons.join("; ") + (wrong.expected ? `. Nearest legal move: ${wrong.expected}` : "");
    } else if (state.check) {
      // The please-check panel is the question: no banner besides it.
      banner.hidden = true;
    } else if (state.last_move) {
      banner.hidden = false;
      banner.className = "banner banner--move";
      banner.textContent = `Last move: ${state.players[state.last_move.player - 1]} ${state.last_move.recorded || state.last_move.play}`;
    } else {
      banner.hidden = true;
    }

    renderCheck(state, flip);

    const toggle = $("teach-toggle");
    toggle.textContent = `Teach: ${state.teach ? "on" : "off"}`;
    toggle.setAttribute("aria-pressed", state.teach ? "true" : "false");
    // Teach mode's panel only while teach mode is on (or gnubg, as the opponent, has a move to make).
    const gnubgMove = Boolean(state.hint && state.hint.gnubg);
    $("teach").hidden = !(state.teach || gnubgMove);
    $("teach-title").textContent = state.teach ? "Teach" : "gnubg";
    // The cube's and resignation's buttons: those the match can take now.
    document.querySelectorAll("[data-phases]").forEach((button) => {
      button.disabled = !button.dataset.phases.includes(state.phase);
    });
    $("hint-text").textContent = !state.hint ? "" : state.hint.gnubg ? `gnubg plays ${state.hint.play}: move its checkers so` : `Best play: ${state.hint.play}`;
    $("hint-plays").replaceChildren(...((state.hint && state.hint.plays) || []).map((p) => {
      const li = document.createElement("li");
      li.textContent = `${p.play}  Eq.: ${p.equity >= 0 ? "+" : ""}${p.equity.toFixed(3)}` + (p.error ? ` (-${p.error.toFixed(3)})` : "");
      return li;
    }));
    refreshCamera();
    const fb = state.feedback;
    $("feedback-text").textContent = fb ? `Last move: ${fb.text}` : "";
    if (window.bgUpdated) window.bgUpdated(state.seq);
  }

  // The please-check panel: the question, then what to tap (the dice's faces, or the candidate
  // boards numbered as the big one, their differing points marked), and Done, all in it.
  function renderCheck(state, flip) {
    const check = $("check");
    const asked = state.check;
    const kind = asked ? asked.kind || "board" : null;
    check.hidden = !asked;
    check.dataset.kind = kind || "";
    $("check-title").textContent = kind === "dice" ? "Please check the dice" : kind === "reroll" ? "Roll again" : "Please check the move";
    $("check-text").textContent = asked ? asked.question || asked.text : "";
    // The dice's faces: in the panel while the dice are asked, else with the referee's controls.
    const entry = $("dice-entry");
    const home = kind === "dice" ? $("check-dice") : $("dice-home");
    if (entry.parentElement !== home) home.append(entry);
    $("dice-label").textContent = kind === "dice" ? "Tap the two faces, in any order:" : "Dice: tap two faces";
    if (kind === "dice" && ["opening roll", "game over"].includes(state.phase)) {
      $("dice-label").textContent = "Tap the bottom player's die first:";
    }
    const cands = (asked && asked.candidates) || [];
    $("candidates").replaceChildren(...cands.map((c) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "candidate";
      button.dataset.play = c.play;
      const drawn = { ...state, board: c.board, dice: [], last_move: null, hint: null, illegal: null, check: { points: c.differs || [] } };
      button.append(BG.draw(drawn, { small: true, numbers: true, arrows: false, flip }));
      const label = document.createElement("span");
      label.textContent = c.play;
      button.append(label);
      button.addEventListener("click", () => send("/api/correct", { play: c.play }));
      return button;
    }));
    // Done: the best guess of a board; the dice as read (at the opening only when each die lay
    // in its roller's half, given bottom player's first); nothing to accept for a re-roll.
    const done = $("check-done");
    const read = ((asked && asked.dice) || []).filter((v) => v >= 1 && v <= 6);
    const opening = ["opening roll", "game over"].includes(state.phase);
    const ordered = !opening || (asked && asked.bottom_first === true);
    done.hidden = kind === "reroll";
    done.disabled = kind === "dice" ? read.length !== 2 || !ordered : kind === "board" ? !asked.best : false;
    done.dataset.dice = kind === "dice" && read.length === 2 && ordered ? read.join("") : "";
    $("check-note").textContent = kind === "board" && asked.best ? `best guess: ${asked.best}` : kind === "dice" && read.length === 2 && ordered ? `read as ${read.join("-")}` : "";
  }

  // Sound and vibration when an illegal move is shown, if this device asked for them.
  const ALERT_KEY = "bgboard-alert";
  let alerted = "";
  let audio = null;
  window.bgAlerts = 0;
  function alertIllegal(state) {
    const key = state.illegal ? JSON.stringify([state.gnubgid, state.illegal.marks, state.illegal.reasons]) : "";
    if (key === alerted) return;
    alerted = key;
    if (!key || localStorage.getItem(ALERT_KEY) !== "on") return;
    window.bgAlerts += 1;
    if (navigator.vibrate) navigator.vibrate([200, 100, 200]);
    try {
      audio = audio || new (window.AudioContext || window.webkitAudioContext)();
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.type = "square";
      osc.frequency.value = 880;
      gain.gain.setValueAtTime(0.15, audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.35);
      osc.connect(gain).connect(audio.destination);
      osc.start();
      osc.stop(audio.currentTime + 0.35);
    } catch (err) {
      // No sound on this device: the vibration and the red banner say it.
    }
  }

  // The camera's last still frame with the reading drawn, fetched only while the panel is open.
  function refreshCamera() {
    if (!$("camera-panel").open || !current) return;
    const img = $("camera");
    img.onload = () => { img.hidden = false; $("camera-note").textContent = ""; };
    img.onerror = () => { img.hidden = true; $("camera-note").textContent = "no still frame from the camera yet"; };
    img.src = `/api/camera.jpg?seq=${current.seq}`;
  }

  // An event's words, a move's play as recorded (hits marked), not as it was typed.
  const said = (e) => (e.recorded && e.play ? e.text.replace(e.play, e.recorded) : e.text);

  function logLine(data, seq) {
    const li = document.createElement("li");
    li.className = `log-line log-line--${data.event}` + (data.verdict ? ` log-line--${data.verdict}` : "");
    li.dataset.seq = String(seq);
    li.dataset.event = data.event;
    const time = document.createElement("span");
    time.className = "time";
    time.textContent = data.t == null ? "" : `${data.t.toFixed(1)}s`;
    const text = document.createElement("span");
    // The demo's players' lines are set apart with a "*", as on the console.
    text.textContent = (data.event === "players" ? "* " : "") + said(data);
    li.append(time, text);
    const log = $("log");
    log.prepend(li);
    while (log.children.length > 300) log.lastChild.remove();
  }

  // The numbered move list: each recorded action from the events, the last taken back by an undo.
  function noteAction(data) {
    if (data.event === "undo") actions.pop();
    else if (data.action) actions.push(data);
    else return;
    const names = (current && current.players) || [];
    const items = [];
    let moves = 0;
    let game = 0;
    let dice = null;
    for (const a of actions) {
      if (a.event === "opening-roll") {
        game += 1;
        if (game > 1) items.push({ text: `Game ${game}`, kind: "game" });
      }
      if (a.dice) dice = a.dice;
      if (a.event === "move") {
        moves += 1;
        const who = names[a.player - 1] || `player ${a.player}`;
        items.push({ text: `${who} ${dice ? dice.join("-") + ": " : ""}${a.recorded || a.play || "no move"}`, kind: "move", n: moves });
        dice = null;
      } else if (!["roll", "opening-roll"].includes(a.event)) {
        items.push({ text: a.text, kind: "cube" });
      }
    }
    $("moves").replaceChildren(...items.map((item) => {
      const li = document.createElement("li");
      li.className = `move move--${item.kind}`;
      if (item.n) {
        const n = document.createElement("span");
        n.className = "move-n";
        n.textContent = `${item.n}.`;
        li.append(n, ` ${item.text}`);
      } else {
        li.textContent = item.text;
      }
      return li;
    }));
    const list = $("moves");
    list.scrollTop = list.scrollHeight;
  }

  function connect() {
    const source = new EventSource("/api/events");
    const conn = $("connection");
    source.addEventListener("open", () => { conn.textContent = "live"; conn.dataset.state = "live"; });
    source.addEventListener("error", () => { conn.textContent = "reconnecting…"; conn.dataset.state = "lost"; });
    source.addEventListener("state", (e) => render(JSON.parse(e.data)));
    source.addEventListener("message", (e) => {
      const seq = Number(e.lastEventId);
      if (seq && seq <= lastSeq) return; // already shown before a reconnection
      lastSeq = seq || lastSeq;
      const data = JSON.parse(e.data);
      logLine(data, seq);
      noteAction(data);
    });
  }

  async function send(path, body) {
    const answer = $("answer");
    answer.className = "answer";
    answer.textContent = "sending…";
    try {
      const response = await fetch(path, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token()}` },
        body: JSON.stringify(body),
      });
      const data = await response.json().catch(() => ({}));
      if (response.status === 401) {
        answer.className = "answer answer--refused";
        answer.textContent = "Refused: enter the table's token (printed on the console) first.";
        return;
      }
      if (!response.ok && response.status !== 202) {
        answer.className = "answer answer--refused";
        answer.textContent = data.error || `refused (${response.status})`;
        return;
      }
      const told = (data.events || []).map(said).join("; ");
      answer.className = "answer " + (data.accepted ? "answer--ok" : "answer--refused");
      answer.textContent = told || (data.queued ? "queued" : "done");
    } catch (err) {
      answer.className = "answer answer--refused";
      answer.textContent = `not sent: ${err}`;
    }
  }

  document.querySelectorAll("[data-command]").forEach((button) => {
    button.addEventListener("click", () => send("/api/command", { command: button.dataset.command }));
  });
  // Undo asks once: the first tap arms it ("Undo: sure?", or "Reopen the match?" once it is
  // over), the second sends it; "Keep it" or five seconds disarm it.
  const undo = $("undo");
  let undoTimer = 0;
  function disarmUndo() {
    clearTimeout(undoTimer);
    undo.dataset.armed = "no";
    undo.textContent = "Undo";
    undo.classList.remove("armed");
    $("undo-no").hidden = true;
  }
  const matchOver = () => current !== null && current.phase === "match over";
  undo.addEventListener("click", () => {
    if (undo.dataset.armed === "yes") {
      disarmUndo();
      // Asked once here already: a finished match is reopened without asking again.
      send("/api/command", { command: matchOver() ? "undo reopen" : "undo" });
      return;
    }
    undo.dataset.armed = "yes";
    undo.textContent = matchOver() ? "Reopen the match?" : "Undo: sure?";
    undo.classList.add("armed");
    $("undo-no").hidden = false;
    undoTimer = setTimeout(disarmUndo, 5000);
  });
  $("undo-no").addEventListener("click", disarmUndo);
  const flipButton = $("flip");
  const showFlip = () => flipButton.setAttribute("aria-pressed", flipped() ? "true" : "false");
  showFlip();
  flipButton.addEventListener("click", () => {
    localStorage.setItem(FLIP_KEY, flipped() ? "no" : "yes");
    showFlip();
    if (current) render(current);
  });
  $("teach-toggle").addEventListener("click", () => {
    send("/api/command", { command: current && current.teach ? "teach off" : "teach on" });
  });
  $("correct-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const play = $("correct-play").value.trim();
    if (play) send("/api/correct", { play });
  });
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    localStorage.setItem(TOKEN_KEY, $("token").value.trim());
    $("answer").textContent = "token kept on this device";
  });
  document.querySelectorAll("[data-copy]").forEach((button) => {
    button.addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText($(button.dataset.copy).textContent));
  });
  // Dice by tapping two faces (in the order rolled); the second tap sends them.
  for (let value = 1; value <= 6; value++) {
    const face = document.createElement("button");
    face.type = "button";
    face.className = "face";
    face.dataset.value = String(value);
    face.textContent = "⚀⚁⚂⚃⚄⚅"[value - 1];
    face.setAttribute("aria-label", `die ${value}`);
    face.addEventListener("click", () => {
      chosenDice.push(value);
      face.classList.add("face--chosen");
      if (chosenDice.length === 2) {
        send("/api/correct", { dice: chosenDice.join("") });
        chosenDice = [];
        document.querySelectorAll(".face--chosen").forEach((f) => f.classList.remove("face--chosen"));
      }
    });
    $("faces").append(face);
  }
  $("check-done").addEventListener("click", () => {
    const dice = $("check-done").dataset.dice;
    if (dice) send("/api/command", { command: `dice ${dice}` });
    else send("/api/command", { command: "done" });
  });
  const alertToggle = $("alert-toggle");
  alertToggle.checked = localStorage.getItem(ALERT_KEY) === "on";
  alertToggle.addEventListener("change", () => {
    localStorage.setItem(ALERT_KEY, alertToggle.checked ? "on" : "off");
    // Sound may only start from a tap: the audio is made ready now.
    if (alertToggle.checked && !audio) {
      try { audio = new (window.AudioContext || window.webkitAudioContext)(); } catch (err) { audio = null; }
    }
  });
  $("camera-panel").addEventListener("toggle", refreshCamera);
  connect();
  window.bgState = () => current;
})();
