// SPDX-License-Identifier: MIT
// The calibration view: the camera's frame with the playing field's four corners as handles to
// drag (mouse, touch or arrow keys), the field's outline and the bar's line drawn through them,
// and Confirm, which posts the corners with the table's token (bgboard/web/calibration_view.py).
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const NS = "http://www.w3.org/2000/svg";
  const TOKEN_KEY = "bgboard-token";
  const LABELS = ["13", "24", "1", "12"];
  // Sizes on screen (CSS pixels), whatever the frame's size: a fingertip's handle, a readable label.
  const HANDLE_R = 13;
  const HIT_R = 24;
  const LABEL_OFF = 30;
  // Around the corners, this share of the field's size is shown too when the view is zoomed.
  const MARGIN = 0.16;

  let shot = null; // GET /api/calibration's answer
  let corners = []; // [[x, y] x4] in frame pixels, the contract's order
  let crop = null; // [x, y, w, h] of the frame shown; null: the whole frame
  let drag = null; // {index, pointer, dx, dy}
  let busy = false;
  let where = null; // [x0, y0, x1, y1]: where a refusal says the trouble is, marked on the frame

  // The token arrives in the QR code's link after "#" (never sent to the server); keep it.
  const fromLink = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromLink) {
    localStorage.setItem(TOKEN_KEY, fromLink);
    history.replaceState(null, "", location.pathname + location.search);
  }
  $("token").value = localStorage.getItem(TOKEN_KEY) || "";

  function el(name, attrs, parent, text) {
    const node = document.createElementNS(NS, name);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    if (text !== undefined) node.textContent = String(text);
    if (parent) parent.appendChild(node);
    return node;
  }

  // The projective map of the unit square onto the four corners (0,0 at the 13-point's corner,
  // 1,0 the 24-point's, 1,1 the 1-point's): where the bar's middle lies in a frame seen at a slant.
  function squareTo(p) {
    const [[x0, y0], [x1, y1], [x2, y2], [x3, y3]] = p;
    const sx = x0 - x1 + x2 - x3, sy = y0 - y1 + y2 - y3;
    let g = 0, h = 0;
    if (sx !== 0 || sy !== 0) {
      const dx1 = x1 - x2, dx2 = x3 - x2, dy1 = y1 - y2, dy2 = y3 - y2;
      const den = dx1 * dy2 - dx2 * dy1;
      if (den !== 0) {
        g = (sx * dy2 - dx2 * sy) / den;
        h = (dx1 * sy - sx * dy1) / den;
      }
    }
    const a = x1 - x0 + g * x1, b = x3 - x0 + h * x3, d = y1 - y0 + g * y1, e = y3 - y0 + h * y3;
    return (u, v) => {
      const w = g * u + h * v + 1;
      return [(a * u + b * v + x0) / w, (d * u + e * v + y0) / w];
    };
  }

  // Clockwise on screen (y down) and convex: every turn the same way round.
  function wellFormed(p) {
    for (let i = 0; i < 4; i++) {
      const [a, b, c] = [p[i], p[(i + 1) % 4], p[(i + 2) % 4]];
      if ((b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]) <= 0) return false;
    }
    return true;
  }

  // The part of the frame round the corners, so that a phone shows the board, not the table.
  function cropAround(p) {
    const { width: W, height: H } = shot.image;
    const xs = p.map((c) => c[0]), ys = p.map((c) => c[1]);
    const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const mx = MARGIN * (x1 - x0), my = MARGIN * (y1 - y0);
    const left = Math.max(0, x0 - mx), top = Math.max(0, y0 - my);
    return [left, top, Math.min(W, x1 + mx) - left, Math.min(H, y1 + my) - top];
  }

  function shown() {
    return crop || [0, 0, shot.image.width, shot.image.height];
  }

  // The view as large as the column allows, and no taller than the window leaves room for; never
  // wider than the column (the column's width is the page's, not the photo's: style.css). The
  // height follows from the viewBox, so the photo keeps its shape even where CSS narrows it.
  function fit() {
    const [x, y, w, h] = shown();
    const svg = $("overlay");
    svg.setAttribute("viewBox", `${x} ${y} ${w} ${h}`);
    const room = $("view").parentElement.clientWidth;
    const tall = window.innerWidth >= 900 ? window.innerHeight - 250 : window.innerHeight * 0.72;
    const width = Math.min(room, Math.max(200, tall * (w / h)));
    svg.style.width = `${Math.floor(width)}px`;
  }

  // Frame pixels per CSS pixel, as the frame is shown now.
  function scale() {
    const width = $("overlay").getBoundingClientRect().width;
    return width > 0 ? shown()[2] / width : 1;
  }

  function draw() {
    if (!shot) return;
    fit();
    const { width: W, height: H, url } = shot.image;
    const [vx, vy, vw, vh] = shown();
    const k = scale();
    const svg = $("overlay");
    svg.replaceChildren();
    el("image", { href: url, x: 0, y: 0, width: W, height: H, preserveAspectRatio: "none" }, svg);
    const ok = wellFormed(corners);
    const outline = corners.map((c) => c.join(",")).join(" ");
    const field = el("g", { class: "cal-field" + (ok ? "" : " cal-field--bad") }, svg);
    el("polygon", { class: "cal-outline-under", points: outline, "stroke-width": 5 * k }, field);
    el("polygon", { id: "outline", class: "cal-outline", points: outline, "stroke-width": 2.5 * k }, field);
    if (ok) {
      const map = squareTo(corners);
      const [top, bottom] = [map(0.5, 0), map(0.5, 1)];
      const bar = { x1: top[0], y1: top[1], x2: bottom[0], y2: bottom[1] };
      el("line", { class: "cal-outline-under", ...bar, "stroke-width": 5 * k }, field);
      el("line", { id: "bar-line", class: "cal-bar", ...bar, "stroke-width": 2.5 * k, "stroke-dasharray": `${8 * k} ${6 * k}` }, field);
      const [hx, hy] = map(0.76, 0.9);
      el("text", { class: "cal-home", x: hx, y: hy, "font-size": 11 * k, "stroke-width": 3 * k, "text-anchor": "middle" }, field, "player 1's home board");
    }
    showFound(ok);
    if (where) {
      const [x0, y0, x1, y1] = where;
      const pad = 6 * k;
      el("rect", {
        id: "trouble", class: "cal-trouble", x: x0 - pad, y: y0 - pad, width: x1 - x0 + 2 * pad, height: y1 - y0 + 2 * pad,
        "stroke-width": 3 * k, "stroke-dasharray": `${6 * k} ${4 * k}`, rx: 4 * k,
      }, svg);
    }

    const cx = corners.reduce((s, c) => s + c[0], 0) / 4;
    const cy = corners.reduce((s, c) => s + c[1], 0) / 4;
    corners.forEach(([x, y], index) => {
      const g = el("g", {
        class: "cal-handle", tabindex: 0, role: "button", "data-index": index, "data-label": LABELS[index],
        "data-x": x.toFixed(1), "data-y": y.toFixed(1),
        "aria-label": `the corner ${shot.labels[index]}, at ${Math.round(x)},${Math.round(y)}: drag it, or use the arrow keys`,
      }, svg);
      el("circle", { class: "cal-hit", cx: x, cy: y, r: HIT_R * k }, g);
      el("circle", { class: "cal-ring", cx: x, cy: y, r: HANDLE_R * k, "stroke-width": 3 * k }, g);
      const arm = 6 * k;
      el("path", { class: "cal-cross", d: `M${x - arm},${y}H${x + arm}M${x},${y - arm}V${y + arm}`, "stroke-width": 1.5 * k }, g);
      // The label beside the handle, away from the field's middle, kept inside the view.
      let ux = x - cx, uy = y - cy;
      const n = Math.hypot(ux, uy) || 1;
      ux /= n; uy /= n;
      const r = 12 * k;
      const lx = Math.min(Math.max(x + ux * LABEL_OFF * k, vx + r + 2 * k), vx + vw - r - 2 * k);
      const ly = Math.min(Math.max(y + uy * LABEL_OFF * k, vy + r + 2 * k), vy + vh - r - 2 * k);
      el("circle", { class: "cal-label-disc", cx: lx, cy: ly, r, "stroke-width": 1.5 * k }, g);
      el("text", { class: "cal-label", x: lx, y: ly + 4.5 * k, "font-size": 13 * k, "text-anchor": "middle" }, g, LABELS[index]);
      g.addEventListener("pointerdown", (e) => grab(e, index));
      // A finger on a handle drags it rather than scrolling the page.
      g.addEventListener("touchstart", (e) => e.preventDefault(), { passive: false });
      g.addEventListener("keydown", (e) => nudge(e, index));
      g.addEventListener("blur", () => { if (!drag) $("loupe").hidden = true; });
    });
    if (drag) loupe(drag.index);
  }

  // The frame point under the pointer.
  function at(e) {
    const svg = $("overlay");
    const point = new DOMPoint(e.clientX, e.clientY).matrixTransform(svg.getScreenCTM().inverse());
    return [point.x, point.y];
  }

  // Inside the part of the frame shown: a handle is never lost off the view's edge.
  function clamp([x, y]) {
    const [vx, vy, vw, vh] = shown();
    return [Math.min(Math.max(x, vx), vx + vw - 1), Math.min(Math.max(y, vy), vy + vh - 1)];
  }

  function grab(e, index) {
    if (e.button !== undefined && e.button > 0) return;
    e.preventDefault();
    const [px, py] = at(e);
    // Held where it was grabbed: the handle does not jump under the finger.
    drag = { index, pointer: e.pointerId, dx: corners[index][0] - px, dy: corners[index][1] - py };
    $("overlay").setPointerCapture(e.pointerId);
    $("view").classList.add("cal-view--dragging");
    loupe(index);
  }

  function move(e) {
    if (!drag || e.pointerId !== drag.pointer) return;
    e.preventDefault();
    const [px, py] = at(e);
    corners[drag.index] = clamp([px + drag.dx, py + drag.dy]);
    draw();
  }

  function release(e) {
    if (!drag || e.pointerId !== drag.pointer) return;
    const index = drag.index;
    drag = null;
    $("view").classList.remove("cal-view--dragging");
    $("loupe").hidden = true;
    const handle = $("overlay").querySelector(`.cal-handle[data-index="${index}"]`);
    if (handle) handle.focus({ preventScroll: true });
    $("loupe").hidden = true;
  }

  function nudge(e, index) {
    const steps = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
    if (!steps) return;
    e.preventDefault();
    const by = e.shiftKey ? 10 : 1;
    corners[index] = clamp([corners[index][0] + steps[0] * by, corners[index][1] + steps[1] * by]);
    draw();
    $("overlay").querySelector(`.cal-handle[data-index="${index}"]`).focus({ preventScroll: true });
    loupe(index);
  }

  // The frame round a handle, magnified, in the view's far top corner: a finger hides the corner.
  function loupe(index) {
    const box = $("loupe");
    const { width: W, height: H, url } = shot.image;
    const zoom = Math.max(1, 3 / scale()); // CSS pixels per frame pixel
    const [x, y] = corners[index];
    box.style.backgroundImage = `url("${url}")`;
    box.style.backgroundSize = `${W * zoom}px ${H * zoom}px`;
    box.hidden = false;
    // The background is laid inside the border: centre on the inner box.
    const half = box.clientWidth / 2;
    box.style.backgroundPosition = `${half - x * zoom}px ${half - y * zoom}px`;
    const [vx, , vw] = shown();
    box.classList.toggle("cal-loupe--left", x > vx + vw / 2);
  }

  function showFound(ok) {
    const found = $("found");
    found.classList.toggle("cal-found--bad", !ok);
    if (!ok) found.textContent = "The outline folds: each handle goes to the corner its number names, in order round the field.";
    else if (shot.how) {
      const how = shot.how === "markers" ? "from the corner markers" : "on the board";
      found.textContent = `Corners found ${how}: check that the outline runs along the field's edge and the dashed line down the middle of the bar, then confirm.`;
    } else {
      found.textContent = "No corners were found: drag the four handles onto the playing field's corners (the outline along its edge,"
        + " the dashed line down the middle of the bar), then Zoom to the field to place them exactly."
        + ` (${shot.why})`;
    }
  }

  function showState() {
    $("cal-state").textContent = shot.calibrated
      ? "The board is calibrated. Calibrate it again when the board, the camera or the light has changed."
      : "The board is not calibrated yet: nothing is read or recorded until you confirm its corners.";
    $("cal-state").dataset.calibrated = shot.calibrated ? "yes" : "no";
  }

  // Who player 1 is, in words a person at the table understands: by name when the players have
  // names, else by the home board (the "Player 1" of a match nobody named says nothing).
  function whoIsPlayer1(p) {
    const home = "home board (points 1 to 6) lies beside handle 1";
    const turn = "side of the board is at the top of the picture, press Turn round.";
    if (p.named) return `Player 1 is ${p.player1}: ${p.player1}'s ${home}. If ${p.player1}'s ${turn}`;
    const alias = p.player1 === "Player 1" ? "" : ` (${p.player1} on the live page)`;
    return `Player 1${alias} is the player whose ${home}, as drawn in step 2. If player 1's ${turn}`;
  }

  function showPosition() {
    const p = shot.position;
    $("position-words").textContent = p.start ? "The starting position (no game is under way)." : `The match's position: ${p.words}.`;
    $("player1").textContent = whoIsPlayer1(p);
    const state = {
      board: { ...p.board, bottom: 1 }, cube: { value: 1, owner: null }, dice: [], turn: null,
      gnubgid: p.id, status: p.words, last_move: null, hint: null, illegal: null, check: null,
    };
    $("position-board").replaceChildren(BG.draw(state, { small: true, arrows: false }));
  }

  function showButtons() {
    $("reset").textContent = shot.how ? "Corners as found" : "Corners back";
    showZoom();
  }

  function showZoom() {
    const button = $("zoom");
    button.textContent = crop ? "Whole photo" : "Zoom to the field";
    button.setAttribute("aria-pressed", crop ? "false" : "true");
  }

  async function load(keepCorners) {
    $("answer").textContent = "";
    where = null;
    let response;
    try {
      response = await fetch("/api/calibration", { cache: "no-store" });
    } catch (err) {
      $("cal-state").textContent = `The table cannot be reached: ${err}`;
      return;
    }
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      $("cal-state").textContent = data.error || `The calibration view is not available (${response.status}).`;
      return;
    }
    const placed = keepCorners && corners.length === 4 ? corners : null;
    shot = data;
    // A new photo keeps the handles a person placed, unless the corners were found on it.
    corners = placed && !shot.how ? placed : shot.corners.map((c) => [...c]);
    // Zoomed to the field when its corners were found; the whole frame to place them by hand.
    crop = shot.how ? cropAround(corners) : null;
    showState();
    showPosition();
    showButtons();
    const picture = new Image();
    picture.onload = () => {
      $("view").hidden = false;
      $("view").dataset.frame = `${picture.naturalWidth}x${picture.naturalHeight}`;
      draw();
    };
    picture.onerror = () => { $("found").textContent = "The camera's frame could not be loaded: take a new photo."; };
    picture.src = shot.image.url;
  }

  async function confirm() {
    if (!shot || busy) return;
    const answer = $("answer");
    const token = $("token").value.trim();
    if (token) localStorage.setItem(TOKEN_KEY, token);
    busy = true;
    $("confirm").disabled = true;
    answer.className = "answer";
    answer.textContent = "Calibrating: the photo is read back with the new profile…";
    try {
      const response = await fetch("/api/calibration", {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
        body: JSON.stringify({ corners: corners.map(([x, y]) => [Math.round(x * 10) / 10, Math.round(y * 10) / 10]), frame: shot.frame }),
      });
      const data = await response.json().catch(() => ({}));
      answer.className = "answer answer--refused";
      if (response.status === 401) {
        answer.textContent = "Refused: enter the table's token (printed on the console when bgboard started), then confirm again.";
        $("token").focus();
      } else if (response.status === 422) {
        // The refusal names where, in frame pixels: marked on the frame, where a person can see it.
        const near = /near (\d+),(\d+)-(\d+),(\d+)/.exec(data.error || "");
        where = near ? near.slice(1).map(Number) : null;
        const marked = where ? " The place is marked in red on the photo." : "";
        answer.textContent = `Refused: ${data.error}.${marked} Nothing was written: move the handles or clear the board (then take a new photo), and confirm again.`;
        draw();
      } else if (!response.ok) {
        answer.textContent = data.error || `refused (${response.status})`;
      } else {
        answer.className = "answer answer--ok";
        answer.replaceChildren(`Calibrated: ${data.text.replace(/^calibrated: /, "")}. The table reads the board with it now.`);
        const back = document.createElement("a");
        back.href = "/";
        back.className = "cal-back";
        back.textContent = "Back to the live page";
        answer.append(back);
        where = null;
        draw();
        shot.calibrated = true;
        showState();
      }
    } catch (err) {
      answer.textContent = `not sent: ${err}`;
    } finally {
      busy = false;
      $("confirm").disabled = false;
    }
  }

  $("overlay").addEventListener("pointermove", move);
  $("overlay").addEventListener("pointerup", release);
  $("overlay").addEventListener("pointercancel", release);
  $("turn").addEventListener("click", () => {
    // The board seen from the other seat: the 13-point's corner where the 1-point's was.
    corners = [corners[2], corners[3], corners[0], corners[1]];
    draw();
  });
  $("reset").addEventListener("click", () => {
    if (!shot) return;
    corners = shot.corners.map((c) => [...c]);
    if (crop) crop = cropAround(corners);
    draw();
  });
  $("zoom").addEventListener("click", () => {
    if (!shot) return;
    crop = crop ? null : cropAround(corners);
    showZoom();
    draw();
  });
  $("again").addEventListener("click", () => load(true));
  $("confirm-form").addEventListener("submit", (e) => { e.preventDefault(); confirm(); });
  window.addEventListener("resize", () => draw());
  // The column's width changes without the window's too (a scroll bar comes or goes, the phone
  // turns): the photo is fitted to it again.
  let column = 0;
  new ResizeObserver(([entry]) => {
    const width = Math.round(entry.contentRect.width);
    if (width !== column) {
      column = width;
      draw();
    }
  }).observe($("view").parentElement);
  load(false);
  window.bgCalibration = () => ({ corners: corners.map((c) => [...c]), shot, crop });
})();
