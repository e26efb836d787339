// SPDX-License-Identifier: MIT
// The board as SVG, drawn from the state the server sends (bgboard/web/hub.py: state_json).
//
// Player 1's numbering (seat 1 at the bottom): his home board, points 1-6, at the bottom right,
// 7-12 bottom left, 13-18 top left, 19-24 top right, as in gnubg's default layout. Every checker
// is one <circle class="bg-checker"> with data-point (1-24, "bar" or "off") and data-seat, so a
// test can count them; stacks taller than five are squeezed, and their count is written on top.
// The cube has its own place, the doubling track left of the board; opts.flip draws the board
// from seat 2's side.
"use strict";

const BG = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const PW = 60; // a point's width
  const CUBE_W = 60; // the doubling track, left of the board: the cube's own place
  const FRAME = 16; // the frame's sides
  const FY = 36; // the frame's top and bottom, where the point numbers are written
  const BAR = 56;
  const TRAY = 64;
  const H = 600;
  const HALF = 6 * PW;
  const W = CUBE_W + FRAME + HALF + BAR + HALF + FRAME + TRAY;
  const R = PW / 2 - 3;
  const TRI = (H / 2 - FY) * 0.86;
  const LEFT = CUBE_W + FRAME; // the left field's edge
  const BAR_X = LEFT + HALF;
  const TRAY_X = BAR_X + BAR + HALF + FRAME;
  const CUBE = 44;

  function el(name, attrs, parent, text) {
    const node = document.createElementNS(NS, name);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    if (text !== undefined) node.textContent = String(text);
    if (parent) parent.appendChild(node);
    return node;
  }

  // The state's board, dice, cube, arrows and marks drawn into a fresh <svg>.
  // opts.small: a thumbnail (no numbers, no dice); opts.numbers: the point numbers all the same
  // (a small board to compare with the big one); opts.arrows: draw the last move and the hint;
  // opts.flip: seen from seat 2 (his home board bottom right, numbered from his side).
  // An illegal move shown (state.illegal) hides the last move's arrows: its own are drawn red.
  function draw(state, opts) {
    opts = opts || {};
    const flip = Boolean(opts.flip);
    const board = state.board;
    const bottom = board.bottom; // the player (1 or 2) at seat 1
    const seatOf = (player) => (player === bottom ? 1 : 2);
    // Whether a seat is drawn at the bottom of the picture.
    const low = (seat) => (seat === 1) !== flip;

    // Column centre, whether the point is on the bottom row, and its number as seen from the bottom.
    function pointPlace(point) {
      const shown = flip ? 25 - point : point;
      const atBottom = shown <= 12;
      const index = atBottom ? 12 - shown : shown - 13; // 0..11 from the left
      const x = LEFT + index * PW + (index >= 6 ? BAR : 0) + PW / 2;
      return { x, bottom: atBottom, shown };
    }

    // Where an arrow starts or ends: a point's middle, the mover's bar or his tray.
    function spot(where, seat) {
      if (where === "bar") return { x: BAR_X + BAR / 2, y: low(seat) ? H / 2 - 60 : H / 2 + 60 };
      if (where === "off") return { x: TRAY_X + (TRAY - 6) / 2, y: low(seat) ? H - 110 : 110 };
      const { x, bottom: atBottom } = pointPlace(where);
      return { x, y: atBottom ? H - FY - TRI * 0.55 : FY + TRI * 0.55 };
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
        el("text", { class: `bg-count bg-count--p${seat}`, x, y: y + 8, "text-anchor": "middle" }, group, count);
      }
    }

    const svg = el("svg", {
      xmlns: NS, viewBox: `0 0 ${W} ${H}`, class: "bg-board" + (opts.small ? " bg-board--small" : "") + (opts.numbers ? " bg-board--numbered" : "") + (flip ? " bg-board--flipped" : ""),
      role: "img", "data-gnubgid": state.gnubgid, "data-flipped": flip ? "yes" : "no",
    });
    el("title", {}, svg, `${state.status} (${state.gnubgid})`);
    const defs = el("defs", {}, svg);
    for (const kind of ["last", "hint", "illegal"]) {
      const marker = el("marker", {
        id: `bg-head-${kind}${opts.small ? "-s" : ""}`, viewBox: "0 0 10 10", refX: 8, refY: 5,
        markerWidth: 4, markerHeight: 4, orient: "auto-start-reverse",
      }, defs);
      el("path", { d: "M0,0 L10,5 L0,10 z", class: `bg-arrowhead bg-arrowhead--${kind}` }, marker);
    }
    el("rect", { class: "bg-frame", x: CUBE_W, y: 0, width: W - CUBE_W, height: H, rx: 10 }, svg);
    el("rect", { class: "bg-cube-track", x: 0, y: 0, width: CUBE_W - 4, height: H, rx: 8 }, svg);
    el("rect", { class: "bg-field", x: LEFT, y: FY, width: HALF, height: H - 2 * FY }, svg);
    el("rect", { class: "bg-field", x: BAR_X + BAR, y: FY, width: HALF, height: H - 2 * FY }, svg);
    el("rect", { class: "bg-bar", x: BAR_X, y: 0, width: BAR, height: H }, svg);
    el("rect", { class: "bg-tray", x: TRAY_X, y: FY, width: TRAY - 6, height: H / 2 - FY - 6 }, svg);
    el("rect", { class: "bg-tray", x: TRAY_X, y: H / 2 + 6, width: TRAY - 6, height: H / 2 - FY - 6 }, svg);

    const marked = new Map();
    if (state.illegal) for (const m of state.illegal.marks) marked.set(String(m), "illegal");
    if (state.check && state.check.points) for (const p of state.check.points) if (!marked.has(String(p))) marked.set(String(p), "check");

    for (let point = 1; point <= 24; point++) {
      const { x, bottom: atBottom, shown } = pointPlace(point);
      const base = atBottom ? H - FY : FY;
      const tip = atBottom ? H - FY - TRI : FY + TRI;
      el("polygon", {
        class: `bg-point bg-point--${shown % 2 ? "odd" : "even"}`,
        points: `${x - PW / 2},${base} ${x + PW / 2},${base} ${x},${tip}`, "data-point": point,
      }, svg);
      const mark = marked.get(String(point));
      if (mark) {
        el("rect", {
          class: `bg-mark bg-mark--${mark}`, x: x - PW / 2 + 2, y: atBottom ? H / 2 + 8 : FY,
          width: PW - 4, height: H / 2 - FY - 8, rx: 6, "data-point": point,
        }, svg);
      }
      if (!opts.small || opts.numbers) {
        el("text", {
          class: "bg-number" + (mark ? ` bg-number--${mark}` : ""), x, y: atBottom ? H - 9 : FY - 9, "text-anchor": "middle", "data-point": point,
        }, svg, shown);
      }
    }
    for (const where of ["bar", "off"]) {
      const mark = marked.get(where);
      if (mark && state.illegal) {
        const s = spot(where, state.illegal.seat);
        el("circle", { class: `bg-mark bg-mark--${mark}`, cx: s.x, cy: s.y, r: R + 8, "data-point": where }, svg);
      }
    }

    const checkers = el("g", { class: "bg-checkers" }, svg);
    board.points.forEach((count, index) => {
      if (!count) return;
      const point = index + 1;
      const { x, bottom: atBottom } = pointPlace(point);
      const seat = count > 0 ? 1 : 2;
      stack(checkers, x, atBottom ? H - FY : FY, atBottom ? -1 : 1, Math.abs(count), seat, point, H / 2 - FY - 10);
    });
    // The bar: the bottom player's checkers in the upper half (towards where they enter), the other's below.
    for (const seat of [1, 2]) {
      const n = board.bar[seat - 1];
      if (!n) continue;
      if (low(seat)) stack(checkers, BAR_X + BAR / 2, H / 2 - 20, -1, n, seat, "bar", H / 2 - 40);
      else stack(checkers, BAR_X + BAR / 2, H / 2 + 20, 1, n, seat, "bar", H / 2 - 40);
    }
    // Borne off: thin slabs in the tray beside each home board, from the frame inwards, and
    // their count nearer the middle.
    for (const seat of [1, 2]) {
      const n = board.off[seat - 1];
      const atBottom = low(seat);
      for (let i = 0; i < n; i++) {
        const y = atBottom ? H - FY - 4 - (i + 1) * 13 : FY + 4 + i * 13;
        el("rect", {
          class: `bg-off-checker bg-checker--p${seat}`, x: TRAY_X + 4, y, width: TRAY - 14, height: 11, rx: 3,
          "data-point": "off", "data-seat": seat,
        }, checkers);
      }
      if (n && !opts.small) {
        el("text", {
          class: "bg-off-count", x: TRAY_X + (TRAY - 6) / 2, y: atBottom ? H / 2 + 36 : H / 2 - 18,
          "text-anchor": "middle", "data-seat": seat,
        }, svg, n);
      }
    }

    // The cube, on the doubling track left of the board: centred (a centred 1 shows 64, as a
    // real cube), or at its owner's end.
    const cube = state.cube;
    const cubeX = (CUBE_W - 4) / 2;
    const cubeY = cube.owner == null ? H / 2 : (low(seatOf(cube.owner)) ? H - FY - CUBE / 2 : FY + CUBE / 2);
    const cg = el("g", {
      class: "bg-cube" + (state.doubled ? " bg-cube--offered" : ""), "data-value": cube.value, "data-owner": cube.owner ?? "",
    }, svg);
    el("rect", { x: cubeX - CUBE / 2, y: cubeY - CUBE / 2, width: CUBE, height: CUBE, rx: 6 }, cg);
    el("text", { x: cubeX, y: cubeY + 8, "text-anchor": "middle" }, cg, cube.value === 1 && cube.owner == null ? 64 : cube.value);

    // The dice, on the roller's right: the bottom player's on the right half, the other's on the left.
    if (state.dice && state.dice.length === 2 && !opts.small) {
      const seat = state.on_roll ? seatOf(state.on_roll) : 1;
      const cx = low(seat) ? BAR_X + BAR + HALF / 2 : LEFT + HALF / 2;
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
        points: low(seat) ? `${W - 4},${H - 30} ${W - 20},${H - 18} ${W - 4},${H - 6}` : `${W - 4},6 ${W - 20},18 ${W - 4},30`,
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
          const my = (from.y + to.y) / 2 + (from.x === to.x ? 0 : (low(a.seat) ? -30 : 30));
          el("path", {
            class: `bg-arrow bg-arrow--${kind}`, d: `M${from.x},${from.y} Q${mx},${my} ${to.x},${to.y}`,
            "marker-end": `url(#bg-head-${kind}${opts.small ? "-s" : ""})`,
            "data-from": a.from, "data-to": a.to,
          }, g);
        }
      };
      if (state.last_move && state.last_move.arrows && !state.illegal) drawArrows(state.last_move.arrows, "last");
      if (state.hint && state.hint.arrows) drawArrows(state.hint.arrows, "hint");
      if (state.illegal && state.illegal.arrows) drawArrows(state.illegal.arrows, "illegal");
    }
    return svg;
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

  return { draw, W, H };
})();
