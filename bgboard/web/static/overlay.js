// SPDX-License-Identifier: MIT
// The broadcast overlay: the live page's state (GET /api/events, server-sent events) and gnubg's
// chances (GET /api/chances, asked every CHANCES_MS) drawn over the table's video.
'use strict';

const CHANCES_MS = 250;
let state = null;

function percent(x) {
  return `${(100 * x).toFixed(1)}%`;
}

function text(selector, value, root = document) {
  const node = root.querySelector(selector);
  if (node.textContent !== value) node.textContent = value;
}

function drawState(s) {
  state = s;
  const players = s.players || ['Player 1', 'Player 2'];
  for (const player of [1, 2]) {
    const row = document.querySelector(`.row[data-player="${player}"]`);
    text('.name', players[player - 1], row);
    text('.score', String((s.score || [0, 0])[player - 1]), row);
    text('.pips', s.pips ? String(s.pips[player - 1]) : '', row);
    const cube = s.cube || { value: 1, owner: null };
    text('.cube', cube.owner === player ? String(cube.value) : '', row);
    row.classList.toggle('on-roll', s.on_roll === player);
  }
  const cube = s.cube || { value: 1, owner: null };
  text('#centre-cube', cube.owner == null ? String(cube.value === 1 ? 64 : cube.value) : '');
  let length = s.length ? `${s.length}-point match` : 'money game';
  if (s.crawford) length += ' · Crawford';
  text('#length', length);
  text('#dice', s.dice && s.dice.length === 2 ? `${s.dice[0]}-${s.dice[1]}` : '');
  const last = s.last_move;
  text('#last-move', last ? `${players[last.player - 1]}: ${last.play}` : '');
  document.getElementById('overlay').hidden = false;
}

function drawChances(c) {
  const box = document.getElementById('chances');
  if (!c || c.gnubgid == null || c.win == null) {
    // Between games, before the first evaluation, or without gnubg: no bar, and no error.
    box.hidden = true;
    return;
  }
  // The chances are for the player on roll (c.for); the bar shows player 1's from the left.
  const mine = c.for === 1;
  const p1 = {
    win: mine ? c.win : 1 - c.win,
    gammon: mine ? c.gammon : c.lose_gammon,
  };
  const p2 = {
    win: 1 - p1.win,
    gammon: mine ? c.lose_gammon : c.gammon,
  };
  for (const [name, side] of [['p1', p1], ['p2', p2]]) {
    const fill = box.querySelector(`.fill.${name}`);
    fill.style.width = `${100 * side.win}%`;
    const share = side.win > 0 ? Math.min(1, side.gammon / side.win) : 0;
    fill.querySelector('.gammon-part').style.width = `${100 * share}%`;
    const label = box.querySelector(`.side.${name}`);
    text('.win', percent(side.win), label);
    text('.gammon', `gammon ${percent(side.gammon)}`, label);
  }
  box.dataset.gnubgid = c.gnubgid;
  box.dataset.for = String(c.for);
  box.dataset.win = String(c.win);
  box.dataset.gammon = String(c.gammon);
  box.dataset.backgammon = String(c.backgammon);
  box.dataset.loseGammon = String(c.lose_gammon);
  box.dataset.loseBackgammon = String(c.lose_backgammon);
  box.hidden = false;
}

async function pollChances() {
  try {
    const answer = await fetch('/api/chances', { cache: 'no-store' });
    if (answer.ok) drawChances(await answer.json());
  } catch (err) {
    // The server is away for a moment: keep what is shown and ask again.
  }
  setTimeout(pollChances, CHANCES_MS);
}

function follow() {
  const stream = new EventSource('/api/events');
  stream.addEventListener('state', (e) => drawState(JSON.parse(e.data)));
}

fetch('/api/state', { cache: 'no-store' })
  .then((answer) => (answer.ok ? answer.json() : null))
  .then((s) => { if (s && !state) drawState(s); })
  .catch(() => {});
follow();
pollChances();
