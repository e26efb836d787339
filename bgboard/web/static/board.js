// SPDX-License-Identifier: MIT
// The board as SVG, drawn from the state the server sends (bgboard/web/hub.py: state_json).
//
// Player 1's numbering (seat 1 at the bottom): his home board, points 1-6, at the bottom right,
// 7-12 bottom left, 13-18 top left, 19-24 top right, as in gnubg's default layout. Every checker
// is one <circle class="bg-checker"> with data-point (1-24, "bar" or "off") and data-seat, so a
// test can count them; stacks taller than five are squeezed, and their count is written on top.
"use strict";

const BG = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const PW = 60; // a point's width
  const FRAME = 16;
  const BAR = 56;
  const TRAY = 64;
  const H = 560;
  const HALF = 6 * PW;
  const W = FRAME + HALF + BAR + HALF + FRAME + TRAY;
  const R = PW / 2 - 3;
  const TRI = H * 0.4;
  const BAR_X = FRAME + HALF;
  const TRAY_X = FRAME + HALF + BAR + HALF + FRAME;

  function el(name, attrs, parent, text) {
    const node = document.createElementNS(NS, name);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    if (text !== undefined) node.textContent = String(text);
    if (parent) parent.appendChild(node);
    return node;
  }

  // Column centre and whether the point is on the bottom row.
  function pointPlace(point) {
    const bottom = point <= 12;
    const index = bottom ? 12 - point : point - 13; // 0..11 from the left
    const x = FRAME + index * PW + (index >= 6 ? BAR : 0) + PW / 2;
    return { x, bottom };
  }

  // Where an arrow starts or ends: a point's middle, the mover's bar or his tray.
  function spot(where, seat) {
    if (where === "bar") return { x: BAR_X + BAR / 2, y: seat === 1 ? H / 2 - 60 : H / 2 + 60 };
    if (where === "off") return { x: TRAY_X + TRAY / 2, y: seat === 1 ? H - 90 : 90 };
    const { x, bottom } = pointPlace(where);
    return { x, y: bottom ? H - FRAME - TRI * 0.55 : FRAME + TRI * 0.55 };
  }

  function stack(group, x, yStart, direction, count, seat, place, room) {
    const step = count <= 1 ? 0 : Math.min(2 * R, (room - 2 * R) / (count - 1));
    for (let i = 0; i < count; i++) {
      const y = yStart + direction * (R + i * step);
      el("circle", {
        class: `bg-checker bg-checker--p${seat}`,
        cx: x, cy: y, r: R,
        "data-point": place, "data-seat": seat,
      }, group);
    }
    if (count > 5) {
      const y = yStart + direction * (R + (count - 1) * step);
      el("text", { class: `bg-count bg-count--p${seat}`, x, y: y + 6, "text-anchor": "middle" }, group, count);
    }
  }

  function pips(group, x, y, value, size) {
    const d = size / 4;
    const spots = {
      1: [[0, 0]], 2: [[-1, -1], [1, 1]], 3: [[-1, -1], [0, 0], [1, 1]],
      4: [[-1, -1], [1, -1], [-1, 1], [1, 1]], 5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]],
      6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]],
    }[value] || [];
    for (const [a, b] of spots) el("circle", { class: "bg-pip", cx: x + a * d, cy: y + b * d, r: size / 11 }, group);
  }

  // The state's board, dice, cube, arrows and marks drawn into a fresh <svg>.
  // opts.small: a thumbnail (no numbers, no dice); opts.arrows: draw the last move and the hint.
  function draw(state, opts) {
    opts = opts || {};
    const board = state.board;
    const bottom = board.bottom; // the player (1 or 2) at seat 1
    const seatOf = (player) => (player === bottom ? 1 : 2);
    const svg = el("svg", {
      xmlns: NS, viewBox: `0 0 ${W} ${H}`, class: "bg-board" + (opts.small ? " bg-board--small" : ""),
      role: "img", "data-gnubgid": state.gnubgid,
    });
    el("title", {}, svg, `${state.status} (${state.gnubgid})`);
    const defs = el("defs", {}, svg);
    for (const kind of ["last", "hint"]) {
      const marker = el("marker", {
        id: `bg-head-${kind}${opts.small ? "-s" : ""}`, viewBox: "0 0 10 10", refX: 8, refY: 5,
        markerWidth: 4, markerHeight: 4, orient: "auto-start-reverse",
      }, defs);
      el("path", { d: "M0,0 L10,5 L0,10 z", class: `bg-arrowhead bg-arrowhead--${kind}` }, marker);
    }
    el("rect", { class: "bg-frame", x: 0, y: 0, width: W, height: H, rx: 10 }, svg);
    el("rect", { class: "bg-field", x: FRAME, y: FRAME, width: HALF, height: H - 2 * FRAME }, svg);
    el("rect", { class: "bg-field", x: BAR_X + BAR, y: FRAME, width: HALF, height: H - 2 * FRAME }, svg);
    el("rect", { class: "bg-bar", x: BAR_X, y: 0, width: BAR, height: H }, svg);
    el("rect", { class: "bg-tray", x: TRAY_X, y: FRAME, width: TRAY - 6, height: H / 2 - FRAME - 6 }, svg);
    el("rect", { class: "bg-tray", x: TRAY_X, y: H / 2 + 6, width: TRAY - 6, height: H / 2 - FRAME - 6 }, svg);

    const marked = new Map();
    if (state.illegal) for (const m of state.illegal.marks) marked.set(String(m), "illegal");
    if (state.check && state.check.points) for (const p of state.check.points) if (!marked.has(String(p))) marked.set(String(p), "check");

    for (let point = 1; point <= 24; point++) {
      const { x, bottom: low } = pointPlace(point);
      const base = low ? H - FRAME : FRAME;
      const tip = low ? H - FRAME - TRI : FRAME + TRI;
      el("polygon", {
        class: `bg-point bg-point--${point % 2 ? "odd" : "even"}`,
        points: `${x - PW / 2},${base} ${x + PW / 2},${base} ${x},${tip}`, "data-point": point,
      }, svg);
      const mark = marked.get(String(point));
      if (mark) {
        el("rect", {
          class: `bg-mark bg-mark--${mark}`, x: x - PW / 2 + 2, y: low ? H / 2 + 8 : FRAME,
          width: PW - 4, height: H / 2 - FRAME - 8, rx: 6, "data-point": point,
        }, svg);
      }
      if (!opts.small) {
        el("text", { class: "bg-number", x, y: low ? H - 3 : 12, "text-anchor": "middle" }, svg, point);
      }
    }
    for (const where of ["bar", "off"]) {
      const mark = marked.get(where);
      if (mark && state.illegal) {
        const seat = state.illegal.seat;
        const s = spot(where, seat);
        el("circle", { class: `bg-mark bg-mark--${mark}`, cx: s.x, cy: s.y, r: R + 8, "data-point": where }, svg);
      }
    }

    const checkers = el("g", { class: "bg-checkers" }, svg);
    board.points.forEach((count, index) => {
      if (!count) return;
      const point = index + 1;
      const { x, bottom: low } = pointPlace(point);
      const seat = count > 0 ? 1 : 2;
      stack(checkers, x, low ? H - FRAME : FRAME, low ? -1 : 1, Math.abs(count), seat, point, H / 2 - FRAME - 10);
    });
    // The bar: seat 1's checkers in the upper half (towards where they enter), seat 2's below.
    if (board.bar[0]) stack(checkers, BAR_X + BAR / 2, H / 2 - 20, -1, board.bar[0], 1, "bar", H / 2 - 40);
    if (board.bar[1]) stack(checkers, BAR_X + BAR / 2, H / 2 + 20, 1, board.bar[1], 2, "bar", H / 2 - 40);
    // Borne off: thin slabs in the tray beside each home board (seat 1 bottom, seat 2 top).
    for (const seat of [1, 2]) {
      const n = board.off[seat - 1];
      for (let i = 0; i < n; i++) {
        const y = seat === 1 ? H - FRAME - 6 - (i + 1) * 15 : FRAME + 4 + i * 15;
        el("rect", {
          class: `bg-off-checker bg-checker--p${seat}`, x: TRAY_X + 4, y, width: TRAY - 14, height: 13, rx: 3,
          "data-point": "off", "data-seat": seat,
        }, checkers);
      }
    }

    // The cube: centred in the bar, or on its owner's side (value 1 centred shows 64, as a real cube).
    const cube = state.cube;
    const cubeY = cube.owner == null ? H / 2 : (seatOf(cube.owner) === 1 ? H - FRAME - 50 : FRAME + 50);
    const cubeX = cube.owner == null ? BAR_X + BAR / 2 : TRAY_X + TRAY / 2 - 3;
    const cg = el("g", { class: "bg-cube" + (state.doubled ? " bg-cube--offered" : ""), "data-value": cube.value, "data-owner": cube.owner ?? "" }, svg);
    el("rect", { x: cubeX - 22, y: cubeY - 22, width: 44, height: 44, rx: 6 }, cg);
    el("text", { x: cubeX, y: cubeY + 8, "text-anchor": "middle" }, cg, cube.value === 1 && cube.owner == null ? 64 : cube.value);

    // The dice, on the roller's right: seat 1's on the right half, seat 2's on the left.
    if (state.dice && state.dice.length === 2 && !opts.small) {
      const seat = state.on_roll ? seatOf(state.on_roll) : 1;
      const cx = seat === 1 ? BAR_X + BAR + HALF / 2 : FRAME + HALF / 2;
      const dg = el("g", { class: `bg-dice bg-dice--p${seat}` }, svg);
      state.dice.forEach((value, i) => {
        const x = cx + (i ? 34 : -34);
        const die = el("g", { class: "bg-die", "data-value": value }, dg);
        el("rect", { x: x - 24, y: H / 2 - 24, width: 48, height: 48, rx: 8 }, die);
        pips(die, x, H / 2, value, 48);
      });
    }

    // Whose turn: a marker on that player's side of the frame.
    if (state.turn && !opts.small) {
      const seat = seatOf(state.turn);
      el("polygon", {
        class: "bg-turn",
        points: seat === 1 ? `${W - 4},${H - 30} ${W - 20},${H - 22} ${W - 4},${H - 14}` : `${W - 4},14 ${W - 20},22 ${W - 4},30`,
        "data-seat": seat,
      }, svg);
    }

    if (opts.arrows !== false) {
      const drawArrows = (list, kind) => {
        const g = el("g", { class: `bg-arrows bg-arrows--${kind}` }, svg);
        for (const a of list) {
          const from = spot(a.from, a.seat);
          const to = spot(a.to, a.seat);
          // Bent a little, so two arrows between the same points stay apart.
          const mx = (from.x + to.x) / 2;
          const my = (from.y + to.y) / 2 + (from.x === to.x ? 0 : (a.seat === 1 ? -30 : 30));
          el("path", {
            class: `bg-arrow bg-arrow--${kind}`, d: `M${from.x},${from.y} Q${mx},${my} ${to.x},${to.y}`,
            "marker-end": `url(#bg-head-${kind}${opts.small ? "-s" : ""})`,
            "data-from": a.from, "data-to": a.to,
          }, g);
        }
      };
      if (state.last_move && state.last_move.arrows) drawArrows(state.last_move.arrows, "last");
      if (state.hint && state.hint.arrows) drawArrows(state.hint.arrows, "hint");
    }
    return svg;
  }

  return { draw, W, H };
})();
