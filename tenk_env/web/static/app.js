/* tenk serve: the browser front end (Play, Watch, Analyse).
 *
 * Plain JS, no framework, nothing fetched but the app's own /api. Every server string is
 * inserted with textContent (through el()), never as HTML.
 */
"use strict";

/* =================================================================== helpers */

const $ = (id) => document.getElementById(id);
const SVG_NS = "http://www.w3.org/2000/svg";

/** Build an element: el("div", {class: "x", onclick: f}, child, "text", ...). */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  appendAll(node, children);
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  appendAll(node, children);
  return node;
}

function setAttrs(node, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "text") node.textContent = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
}

function appendAll(node, children) {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

function clear(node) {
  node.replaceChildren();
  return node;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const fmtInt = (n) => (n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US"));
const faces = (dice) => (dice && dice.length ? dice.join(" ") : "nothing");
const keyOf = (keep) => [...keep].sort((a, b) => a - b).join(",");
const PLURALS = { die: "dice" };
const plural = (n, word) => `${n} ${n === 1 ? word : (PLURALS[word] || `${word}s`)}`;

/* =================================================================== API and errors */

class ApiError extends Error {}

async function api(method, path, body) {
  let res;
  try {
    res = await fetch(path, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError("Cannot reach the tenk server (is `tenk serve` still running?)");
  }
  let data = null;
  const text = await res.text();
  try {
    data = text ? JSON.parse(text) : null;
  } catch (e) {
    data = null;
  }
  if (!res.ok) {
    let msg = data && (data.error || data.detail);
    if (msg && typeof msg !== "string") msg = JSON.stringify(msg);
    const err = new ApiError(msg || `${method} ${path}: HTTP ${res.status} ${res.statusText}`);
    err.status = res.status;
    throw err;
  }
  return data;
}

/** A request that may wait for the server's solves: the server answers 202 with where they
 * stand (one solve runs at a time); asking again every 1.5 s keeps them wanted, and leaving the
 * page lets the server drop them. */
async function apiSolving(method, path, body) {
  for (;;) {
    const data = await api(method, path, body);
    if (!data || !data.pending) return data;
    $("busy").textContent = data.note + " …";
    await sleep(1500);
  }
}

function showError(err) {
  const msg = err instanceof Error ? err.message : String(err);
  if (!(err instanceof ApiError)) console.warn(err); // a bug of ours, not a server message
  $("error-text").textContent = msg;
  $("error").hidden = false;
}

function clearError() {
  $("error").hidden = true;
  $("error-text").textContent = "";
}

let busyCount = 0;
/** Run an async job with `button` disabled and a busy note shown; errors go to the banner. */
async function withBusy(button, note, job) {
  if (button) button.disabled = true;
  busyCount += 1;
  $("busy").textContent = note;
  $("busy").hidden = false;
  try {
    return await job();
  } catch (e) {
    showError(e);
    return undefined;
  } finally {
    busyCount -= 1;
    if (!busyCount) $("busy").hidden = true;
    if (button) button.disabled = false;
  }
}

/* =================================================================== value formatting */

/** How values of a feedback unit read: win probabilities or expected turn points. */
function fmtValue(v, unit) {
  if (v === null || v === undefined) return "–";
  return unit === "points" ? `${v.toFixed(1)} pts` : `${(v * 100).toFixed(1)}%`;
}

/** A regret as every tenk command prints it: percentage points of win probability ("pp", two
 * decimals); under turn-level advice, expected points of the turn ("turn pts"). */
function fmtRegret(r, unit) {
  if (r === null || r === undefined) return "–";
  return unit === "points" ? `${r.toFixed(1)} turn pts` : `${(r * 100).toFixed(2)} pp`;
}

const fmtPct = (v) => (v === null || v === undefined ? "–" : `${(v * 100).toFixed(1)}%`);

function moveName(m) {
  if (!m) return "?";
  if (m.piggyback !== undefined) return m.piggyback ? "take the dice" : "start fresh";
  return `keep ${faces(m.keep)}, ${m.end ? "bank" : "roll on"}`;
}

function movePast(m) {
  if (m.piggyback !== undefined) return m.piggyback ? "took the dice left" : "started fresh";
  return `kept ${faces(m.keep)} and ${m.end ? "banked" : "rolled on"}`;
}

function sameMove(a, b) {
  if (!a || !b) return false;
  if (a.piggyback !== undefined || b.piggyback !== undefined) return a.piggyback === b.piggyback;
  return keyOf(a.keep) === keyOf(b.keep) && Boolean(a.end) === Boolean(b.end);
}

/** One sentence on a decision: what was played, the best move, what was given away. */
function decisionSentence(d, who, unit) {
  const made = `${who} ${movePast(d.move)}: ${fmtValue(d.move.value, unit)}.`;
  if (sameMove(d.move, d.best) || !(d.regret > 0)) return `${made} That was the best move.`;
  return `${made} Best: ${moveName(d.best)}: ${fmtValue(d.best.value, unit)}. ` +
    `Given away: ${fmtRegret(d.regret, unit)}.`;
}

/* =================================================================== dice */

const PIPS = { 1: [5], 2: [3, 7], 3: [3, 5, 7], 4: [1, 3, 7, 9], 5: [1, 3, 5, 7, 9], 6: [1, 3, 4, 6, 7, 9] };

function die(face, extra) {
  const d = el("span", { class: `die ${extra || ""}`, role: "img", "aria-label": String(face), title: String(face) });
  for (const p of PIPS[face] || []) d.append(el("span", { class: `pip p${p}` }));
  return d;
}

function diceRow(dice, extra) {
  return el("span", { class: "dice" }, (dice || []).map((f) => die(f, extra)));
}

/* =================================================================== events */

const playerColors = ["#2563eb", "#dc2626", "#059669", "#a16207"];

function describeEvent(e, names) {
  const who = (p) => (names && names[p] !== undefined ? names[p] : `P${p + 1}`);
  const scores = (s) => s.map(fmtInt).join(", ");
  switch (e.type) {
    case "start": return `${e.rules.name} (${e.hash}), ${e.players} players`;
    case "order_roll": return "order roll: " + e.players.map((p, i) => `${who(p)} ${e.dice[i]}`).join(", ");
    case "turn": return `turn ${e.turn}: ${who(e.player)} (scores ${scores(e.scores)})`;
    case "roll": return `${who(e.player)} rolls ${faces(e.dice)}`;
    case "keep": return `${who(e.player)} keeps ${faces(e.dice)} for ${fmtInt(e.points)} ` +
      `(turn ${fmtInt(e.turn_total)}${e.hot_dice ? ", hot dice" : ""}) and ${e.end_turn ? "banks" : "rolls on"}`;
    case "bank": return `${who(e.player)} banks ${fmtInt(e.points)}: score ${fmtInt(e.score)}`;
    case "bust": return `${who(e.player)} busts, losing ${fmtInt(e.lost)}`;
    case "penalty": return `${who(e.player)} pays the bust penalty ${fmtInt(e.points)}: score ${fmtInt(e.score)}`;
    case "zilch": return `${who(e.player)} scores nothing on all dice: pay-out ${fmtInt(e.points)} ` +
      `(turn ${fmtInt(e.turn_total)}), must roll again`;
    case "stop": return `${who(e.player)} ends the turn unable to bank, losing ${fmtInt(e.lost)}`;
    case "overshoot": return `${who(e.player)} overshoots the target: ${fmtInt(e.lost)} forfeited` +
      (e.to !== null && e.to !== undefined ? ` to ${who(e.to)}` : "");
    case "instant_win": return `${who(e.player)} rolls six of a kind and wins at once`;
    case "lose_all": return `${who(e.player)} rolls four or more 2s and loses all ${fmtInt(e.lost)} banked points`;
    case "piggyback": return `${who(e.player)} ${e.take ? "takes over the dice left" : "starts fresh"}`;
    case "final_round": return `${who(e.player)} reached ${fmtInt(e.score)}: final round`;
    case "game_over": {
      const w = e.winners.map(who).join(" and ");
      return `game over: ${w} win${e.winners.length === 1 ? "s" : ""} (scores ${scores(e.scores)})`;
    }
    default: return null;
  }
}

/** The line under the board for an event: words only (the board comes from the server). */
function eventNote(e) {
  switch (e.type) {
    case "order_roll": return "order roll";
    case "keep": return e.hot_dice ? "hot dice" : "";
    case "bank": return `banked ${fmtInt(e.points)}`;
    case "bust": return "bust";
    case "penalty": return "penalty";
    case "zilch": return "zilch";
    case "stop": return "turn total forfeited";
    case "overshoot": return "overshoot";
    case "instant_win": return "six of a kind: instant win";
    case "lose_all": return "four 2s: loses all";
    case "final_round": return "final round";
    case "game_over": return "game over";
    default: return "";
  }
}

/**
 * What renderBoard draws after events[i] of a game or an analysis: the board the server sent
 * for that event (the Python engine's state then), so the page applies no rules itself.
 */
function boardAt(src, i, you) {
  const b = src.boards[i];
  return {
    names: src.names, you, target: src.rules && src.rules.target, scores: b.scores, onBoard: b.on_board,
    current: b.current, turn: b.turn, turnTotal: b.turn_total, dice: b.dice, kept: b.kept, rolled: b.rolled,
    rolls: b.rolls, note: eventNote(src.events[i]), winners: b.winners,
  };
}

/* =================================================================== board */

/**
 * Draw the table: a card per player (score, on-board mark, progress, turn marker), then the
 * turn total and the dice: the current roll and, apart, those set aside this turn.
 * b = {names, scores, onBoard, current, turnTotal, dice, kept, rolled, target, turn, rolls,
 *      note, winners, you}
 */
function renderBoard(root, b) {
  clear(root);
  const players = el("div", { class: "players" });
  b.names.forEach((name, p) => {
    const isWinner = b.winners && b.winners.includes(p);
    const card = el("div", {
      class: `player${p === b.current && !b.winners ? " current" : ""}${isWinner ? " winner" : ""}`,
      style: `--pc: ${playerColors[p % playerColors.length]}`,
    },
    el("div", { class: "pname" },
      el("span", { class: "turn-mark", "aria-hidden": "true", text: p === b.current && !b.winners ? "▶" : "" }),
      el("span", { class: "pn", text: name }),
      p === b.you ? el("span", { class: "you-tag", text: "you" }) : null,
      isWinner ? el("span", { class: "win-tag", text: "winner" }) : null),
    el("div", { class: "pscore", text: fmtInt(b.scores[p]) }),
    el("div", { class: "progress", "aria-hidden": "true" },
      el("span", { style: `width: ${Math.max(0, Math.min(100, (100 * b.scores[p]) / (b.target || 10000)))}%` })),
    el("div", { class: `onboard ${b.onBoard[p] ? "on" : "off"}`, text: b.onBoard[p] ? "● on the board" : "○ not on the board" }));
    if (p === b.current && !b.winners) card.setAttribute("aria-current", "true");
    players.append(card);
  });

  const who = b.names[b.current] !== undefined ? b.names[b.current] : "";
  const table = el("div", { class: "table" },
    el("div", { class: "turn-info" },
      el("span", { text: b.winners ? "Game over" : `Turn ${b.turn || "–"} · ${who} to play` }),
      b.rolls ? el("span", { class: "muted", text: ` · roll ${b.rolls}` }) : null,
      b.target ? el("span", { class: "muted", text: ` · target ${fmtInt(b.target)}` }) : null),
    el("div", { class: "turn-total" }, el("span", { class: "label", text: "turn total" }),
      el("span", { class: "value", text: fmtInt(b.turnTotal) })),
    el("div", { class: "dice-area" },
      el("div", { class: "rolled" }, el("span", { class: "label", text: b.rolled ? "roll" : "left" }),
        b.dice && b.dice.length ? diceRow(b.dice, b.rolled ? "" : "idle") : el("span", { class: "muted", text: "–" })),
      el("div", { class: "kept" }, el("span", { class: "label", text: "set aside" }),
        b.kept && b.kept.length ? diceRow(b.kept, "small") : el("span", { class: "muted", text: "–" }))),
    el("div", { class: "board-note", "aria-live": "polite", text: b.note || "" }));
  root.append(players, table);
}

/* =================================================================== decision panel */

/** A decision in full: the position, every move's value, the move made and the best. */
function renderDecision(d, names, unit, opts = {}) {
  const who = names[d.player] !== undefined ? names[d.player] : `P${d.player + 1}`;
  const pos = d.position || {};
  const box = el("div", { class: "decision" });
  box.append(el("div", { class: "decision-head" },
    el("strong", { text: opts.title || `Turn ${d.turn}: ${who} to choose` }),
    el("span", { class: "muted", text: ` · scores ${(pos.scores || []).map(fmtInt).join(" – ")}` +
      ` · turn total ${fmtInt(pos.turn_total)} · roll ${pos.rolls ?? "–"}` +
      `${pos.final_turn ? " · final turn" : ""}` })));
  if (pos.dice && pos.dice.length) box.append(el("div", { class: "decision-dice" }, diceRow(pos.dice)));
  box.append(el("p", { class: `sentence ${d.regret > 0.01 ? "costly" : ""}`, text: decisionSentence(d, who, unit) }));
  if (d.said) box.append(renderSaid(d.said));

  const moves = d.moves || [];
  if (moves.length) {
    let best = -Infinity;
    for (const m of moves) for (const v of [m.roll, m.end]) if (v !== null && v !== undefined) best = Math.max(best, v);
    const isBest = (v) => v !== null && v !== undefined && Math.abs(v - best) < 1e-9;
    const made = d.move || {};
    const cell = (m, end) => {
      const v = end ? m.end : m.roll;
      const mine = made.piggyback === undefined && keyOf(m.keep || []) === keyOf(made.keep || []) && Boolean(made.end) === end;
      return el("td", { class: `num${isBest(v) ? " best" : ""}${mine ? " made" : ""}`,
        title: mine ? "the move made" : (isBest(v) ? "the best move" : null) },
        fmtValue(v, unit), mine ? el("span", { class: "made-mark", text: " ◀" }) : null);
    };
    const table = el("table", { class: "moves" },
      el("thead", {}, el("tr", {}, el("th", { text: "keep" }), el("th", { class: "num", text: "points" }),
        el("th", { class: "num", text: "roll on" }), el("th", { class: "num", text: "bank" }))),
      el("tbody", {}, moves.map((m) => el("tr", {},
        el("td", {}, m.keep ? diceRow(m.keep, "tiny") : el("span", { text: m.label || "" })),
        el("td", { class: "num", text: fmtInt(m.points) }), cell(m, false), cell(m, true)))));
    box.append(el("div", { class: "table-wrap" }, table));
  }
  return box;
}

/** What an agent said of its decision (an llm: agent's answers): each answer, why a refused
 * one was refused, and whether the fallback agent played the move. */
function renderSaid(said) {
  const answers = said.answers || [];
  const problems = said.problems || [];
  const box = el("details", { class: "said" },
    el("summary", { text: said.fallback
      ? `What the model said: ${plural(answers.length, "answer")}, none usable; the fallback agent played`
      : `What the model said${answers.length > 1 ? ` (${plural(answers.length, "answer")}, the last one played)` : ""}` }));
  answers.forEach((a, i) => {
    box.append(el("pre", { class: "said-text", text: a === null ? "(no answer)" : a }));
    if (i < problems.length) box.append(el("p", { class: "muted", text: `refused: ${problems[i]}` }));
  });
  return box;
}

/* =================================================================== chart */

/**
 * Win-probability chart (inline SVG). 2 players: P1's W* over the decisions (w when P1 moves,
 * 1 - w when P2 does), 3-4 players: each mover's w as dots in their colour. Costly decisions
 * (regret > 0.01) are ringed; the current step is a vertical line; a click jumps there.
 */
function renderChart(root, a, currentIdx, onPick) {
  clear(root);
  const pts = a.chart || [];
  if (!pts.length) {
    root.append(el("p", { class: "note", text: "No win-probability chart: " +
      ((a.feedback && a.feedback.note) || "this analysis has no win probabilities") }));
    return;
  }
  const W = 800, H = 170, L = 38, R = 10, T = 10, B = 22;
  const n = pts.length;
  const x = (i) => L + (n === 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (n - 1));
  const y = (v) => T + (1 - v) * (H - T - B);
  const two = a.players === 2;
  const regretByEvent = new Map((a.decisions || []).map((d) => [d.event, d.regret]));
  const names = a.names || [];
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart-svg", role: "img",
    "aria-label": two ? `${names[0] || "P1"}'s win probability over the game` : "each mover's win probability" });

  if (two) { // an evaluation bar: P1's colour above the line, P2's below
    s.append(svg("rect", { x: L, y: T, width: W - L - R, height: H - T - B, fill: "#fde8e8" }));
  } else {
    s.append(svg("rect", { x: L, y: T, width: W - L - R, height: H - T - B, fill: "#f6f7f9" }));
  }
  const vals = pts.map((p) => (two ? (p.player === 0 ? p.w : 1 - p.w) : p.w));
  if (two) {
    const area = `M ${x(0)} ${y(0)} ` + vals.map((v, i) => `L ${x(i)} ${y(v)}`).join(" ") + ` L ${x(n - 1)} ${y(0)} Z`;
    s.append(svg("path", { d: area, fill: "#dbe6fd" }));
  }
  for (const g of [0, 0.25, 0.5, 0.75, 1]) {
    s.append(svg("line", { x1: L, x2: W - R, y1: y(g), y2: y(g), class: g === 0.5 ? "grid mid" : "grid" }));
    s.append(svg("text", { x: L - 5, y: y(g) + 4, class: "axis", "text-anchor": "end" }, `${g * 100}%`));
  }
  // turn boundaries as faint ticks on the x axis
  let lastTurn = null;
  pts.forEach((p, i) => {
    if (p.turn !== lastTurn) s.append(svg("line", { x1: x(i), x2: x(i), y1: H - B, y2: H - B + 4, class: "tick" }));
    lastTurn = p.turn;
  });
  s.append(svg("text", { x: W - R, y: H - 6, class: "axis", "text-anchor": "end" }, `decision (${n})`));
  if (two) {
    s.append(svg("path", { d: vals.map((v, i) => `${i ? "L" : "M"} ${x(i)} ${y(v)}`).join(" "), class: "line" }));
  }
  pts.forEach((p, i) => {
    const regret = regretByEvent.get(p.event);
    const costly = regret !== undefined && regret > 0.01;
    const c = playerColors[p.player % playerColors.length];
    const label = `decision ${i + 1}, turn ${p.turn}, ${names[p.player] || `P${p.player + 1}`} to move: ` +
      `W* ${fmtPct(p.w)}` + (regret !== undefined ? `, regret ${fmtRegret(regret, "win")}` : "");
    if (costly) s.append(svg("circle", { cx: x(i), cy: y(vals[i]), r: 5.5, class: "costly" }, svg("title", {}, label)));
    if (!two || costly || n <= 60) {
      s.append(svg("circle", { cx: x(i), cy: y(vals[i]), r: two ? 2 : 3, fill: c }, svg("title", {}, label)));
    }
  });
  if (currentIdx !== null && currentIdx >= 0) {
    s.append(svg("line", { x1: x(currentIdx), x2: x(currentIdx), y1: T, y2: H - B, class: "cursor" }));
    s.append(svg("circle", { cx: x(currentIdx), cy: y(vals[currentIdx]), r: 4.5, class: "cursor-dot" }));
  }
  s.addEventListener("click", (ev) => {
    const box = s.getBoundingClientRect();
    const px = ((ev.clientX - box.left) / box.width) * W;
    const i = n === 1 ? 0 : Math.round(((px - L) / (W - L - R)) * (n - 1));
    onPick(Math.max(0, Math.min(n - 1, i)));
  });
  root.append(s);
  const legend = el("div", { class: "legend" });
  if (two) {
    legend.append(el("span", { text: `${names[0] || "P1"}'s win probability (W* against perfect play)` }));
  } else {
    names.forEach((nm, p) => legend.append(el("span", { class: "key", style: `--pc: ${playerColors[p % 4]}`, text: nm })));
    legend.append(el("span", { text: "each mover's win probability" }));
  }
  legend.append(el("span", { class: "key costly-key", text: "costly (regret > 1 point)" }));
  root.append(legend);
}

/* =================================================================== log */

function logItem(e, names, index) {
  const text = describeEvent(e, names);
  if (text === null) return null;
  const p = e.player !== undefined ? e.player : null;
  return el("li", { class: `ev ev-${e.type}`, dataset: { index: String(index) },
    style: p !== null ? `--pc: ${playerColors[p % 4]}` : null }, text);
}

/* =================================================================== tabs */

const VIEWS = ["play", "watch", "analyse"];

function showView(name, focus) {
  if (!VIEWS.includes(name)) name = "play";
  for (const v of VIEWS) {
    const tab = $(`tab-${v}`);
    const on = v === name;
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    $(`view-${v}`).hidden = !on;
  }
  if (focus) $(`tab-${name}`).focus();
  if (location.hash !== `#${name}`) history.replaceState(null, "", `${location.pathname}${location.search}#${name}`);
  app.view = name;
}

function initTabs() {
  for (const v of VIEWS) $(`tab-${v}`).addEventListener("click", () => showView(v));
  document.querySelector(".tabs").addEventListener("keydown", (ev) => {
    const i = VIEWS.indexOf(app.view);
    if (ev.key === "ArrowRight") { showView(VIEWS[(i + 1) % 3], true); ev.preventDefault(); }
    if (ev.key === "ArrowLeft") { showView(VIEWS[(i + 2) % 3], true); ev.preventDefault(); }
  });
}

/* =================================================================== meta and forms */

const app = { view: "play", meta: null, pace: 700 };

function fillRules(select, desc, meta) {
  clear(select);
  const all = [];
  const gp = el("optgroup", { label: "presets" });
  for (const p of meta.presets || []) { gp.append(el("option", { value: p.name, text: p.name })); all.push(p); }
  select.append(gp);
  if ((meta.files || []).length) {
    const gf = el("optgroup", { label: "files" });
    for (const f of meta.files) { gf.append(el("option", { value: f.name, text: f.name, title: f.path })); all.push(f); }
    select.append(gf);
  }
  select.value = meta.default_rules || (all[0] && all[0].name) || "";
  const update = () => {
    const r = all.find((x) => x.name === select.value);
    desc.textContent = r ? (r.description || r.path || "") : "";
  };
  select.addEventListener("change", update);
  update();
}

/** Text inputs with the agent datalist, one per seat given, keeping what was typed. */
function agentInputs(container, labels, defaults, cls) {
  const before = [...container.querySelectorAll("input")].map((i) => i.value);
  clear(container);
  labels.forEach((label, i) => {
    container.append(el("label", {}, label,
      el("input", { type: "text", class: cls, list: "agent-list", spellcheck: "false",
        value: before[i] !== undefined ? before[i] : defaults[i % defaults.length], required: true })));
  });
}

async function loadMeta() {
  const meta = await api("GET", "/api/meta");
  app.meta = meta;
  const dl = clear($("agent-list"));
  for (const a of meta.agents || []) dl.append(el("option", { value: a }));
  fillRules($("play-rules"), $("play-rules-desc"), meta);
  fillRules($("watch-rules"), $("watch-rules-desc"), meta);
}

/* =================================================================== Play */

const play = {
  game: null,     // the latest GameState
  shown: 0,       // how many of its events the log and board show
  skip: false,    // show the rest of the current batch at once
  animating: false,
  acting: false,
  fbShown: 0,     // decisions whose feedback line was shown
  poll: null,
};

function playSeatOptions() {
  const n = Number($("play-players").value);
  const seat = $("play-seat");
  const old = Number(seat.value) || 1;
  clear(seat);
  for (let i = 1; i <= n; i++) seat.append(el("option", { value: String(i), text: String(i) }));
  seat.value = String(Math.min(old, n));
  playOpponentInputs();
}

function playOpponentInputs() {
  const n = Number($("play-players").value);
  const seat = Number($("play-seat").value);
  const labels = [];
  for (let i = 1; i <= n; i++) if (i !== seat) labels.push(`Seat ${i}`);
  agentInputs($("play-opponents"), labels, ["dicenow"], "opponent");
}

function initPlay() {
  $("play-players").addEventListener("change", playSeatOptions);
  $("play-seat").addEventListener("change", playOpponentInputs);
  playSeatOptions();
  $("play-form").addEventListener("submit", (ev) => { ev.preventDefault(); newGame(); });
  $("skip").addEventListener("click", () => { play.skip = true; });
  const sv = $("show-values");
  sv.checked = localStorage.getItem("tenk.showValues") === "1";
  sv.addEventListener("change", () => {
    localStorage.setItem("tenk.showValues", sv.checked ? "1" : "0");
    if (play.game && !play.animating) renderChoices(play.game);
  });
}

async function newGame() {
  const seedText = $("play-seed").value.trim();
  const body = {
    rules: $("play-rules").value,
    players: Number($("play-players").value),
    seat: Number($("play-seat").value),
    opponents: [...$("play-opponents").querySelectorAll("input")].map((i) => i.value.trim()),
    seed: seedText === "" ? null : Number(seedText),
  };
  const st = await withBusy($("new-game"), "Starting the game (the first game of a ruleset solves it)…",
    () => apiSolving("POST", "/api/games", body));
  if (!st) return;
  clearError();
  stopPolling();
  Object.assign(play, { game: st, shown: 0, skip: false, fbShown: 0 });
  clear($("play-log"));
  $("feedback").hidden = true;
  $("summary").hidden = true;
  $("position").hidden = true;
  $("play-intro").hidden = true;
  $("play-game").hidden = false;
  await showState(st);
}

/** Show a new GameState: its new events roll by roll at a readable pace, then the choices. */
async function showState(st) {
  const events = st.events || [];
  const board = $("play-board");
  const log = $("play-log");
  play.animating = true;
  play.skip = false;
  clear($("choices"));
  $("play-decide").hidden = true;
  const from = play.shown;
  let first = true;
  if (events.length - from > 1 && app.pace > 0) $("skip").hidden = false;
  for (let i = from; i < events.length; i++) {
    const e = events[i];
    const paced = (e.type === "roll" || e.type === "keep") && !first;
    if (paced && !play.skip && app.pace > 0) {
      $("play-status").textContent = `${st.names[e.player]} is playing…`;
      await sleep(e.player === st.seat ? app.pace / 2 : app.pace);
      if (play.game !== st) return; // a new game replaced this one meanwhile
    }
    if (e.type === "roll" || e.type === "keep") first = false;
    const item = logItem(e, st.names, i);
    if (item) { log.append(item); if (!play.skip) item.scrollIntoView({ block: "nearest" }); }
    if (!play.skip || i === events.length - 1) renderBoard(board, boardAt(st, i, st.seat));
  }
  if (log.lastElementChild) log.lastElementChild.scrollIntoView({ block: "nearest" });
  play.shown = events.length;
  $("skip").hidden = true;
  play.animating = false;
  renderPlayNow(st);
}

/** The board from the authoritative state, the feedback line, then choices or summary. */
function renderPlayNow(st) {
  renderBoard($("play-board"), boardAt(st, st.events.length - 1, st.seat));
  renderFeedback(st);
  if (st.phase === "over") {
    $("play-decide").hidden = true;
    $("play-status").textContent = "Game over.";
    renderSummary(st);
  } else {
    $("play-status").textContent = st.phase === "piggyback" ? "Your turn: take over the dice or start fresh?"
      : `Your turn: ${plural(st.dice.length, "die")} rolled, ${fmtInt(st.turn_total)} on the turn.`;
    renderChoices(st);
  }
  const mode = st.feedback && st.feedback.mode;
  if (mode === "solving") startPolling(st);
}

function renderFeedback(st) {
  const fb = $("feedback");
  const ds = st.decisions || [];
  const unit = (st.feedback && st.feedback.unit) || "win";
  if (ds.length > play.fbShown) {
    const d = ds[ds.length - 1];
    const total = ds.reduce((acc, x) => acc + (x.regret || 0), 0);
    clear(fb).append(el("span", { class: d.regret > 0.01 ? "costly" : "good", text: decisionSentence(d, "You", unit) }),
      el("span", { class: "muted", text: ` (so far: ${plural(ds.length, "decision")}, ${fmtRegret(total, unit)} given away)` }));
    fb.hidden = false;
    play.fbShown = ds.length;
  } else if (st.feedback && st.feedback.mode === "solving" && play.shown > 0 && ds.length < countHumanKeeps(st)) {
    clear(fb).append(el("span", { class: "muted", text: "Scoring your move: " + (st.feedback.note || "solving…") }));
    fb.hidden = false;
  }
}

function countHumanKeeps(st) {
  return (st.events || []).filter((e) => (e.type === "keep" || e.type === "piggyback") && e.player === st.seat).length;
}

function renderChoices(st) {
  const box = clear($("choices"));
  const decide = $("play-decide");
  decide.hidden = false;
  const fbk = st.feedback || {};
  const unit = fbk.unit || "win";
  const showVals = $("show-values").checked;
  const note = $("values-note");
  note.textContent = fbk.note ? `Feedback: ${fbk.note}` : "";

  if (st.phase === "piggyback") {
    const pg = st.piggy || {};
    box.append(el("div", { class: "keep-card piggy" },
      el("div", { class: "keep-head", text: `The last player banked and left ${plural(pg.dice, "die")} and ${fmtInt(pg.total)} points.` }),
      el("div", { class: "keep-moves" },
        moveButton({ label: `take over: roll ${plural(pg.dice, "die")} for ${fmtInt(pg.total)}`, text: "take the dice",
          data: { piggy: "true" }, body: { piggyback: true } }),
        moveButton({ label: "start a fresh turn", text: "start fresh", data: { piggy: "false" }, body: { piggyback: false } }))));
    numberShortcuts(box);
    return;
  }

  const values = new Map((st.values || []).map((v) => [keyOf(v.keep), v]));
  let best = -Infinity;
  for (const v of values.values()) for (const x of [v.roll, v.end]) if (x !== null && x !== undefined) best = Math.max(best, x);
  const groups = new Map();
  for (const m of st.legal || []) {
    const k = keyOf(m.keep);
    if (!groups.has(k)) groups.set(k, { keep: m.keep, points: m.points, moves: [] });
    groups.get(k).moves.push(m);
  }
  if (!groups.size) { box.append(el("p", { class: "muted", text: "No legal move (waiting for the server)." })); return; }
  for (const g of groups.values()) {
    const v = values.get(keyOf(g.keep));
    const n = st.dice_left - g.keep.length;
    const card = el("div", { class: "keep-card" },
      el("div", { class: "keep-head" }, diceRow(g.keep, "small"),
        el("span", { class: "keep-pts", text: `+${fmtInt(g.points)}` }),
        el("span", { class: "muted", text: `turn ${fmtInt(st.turn_total + g.points)} · ` +
          (n === 0 ? "hot dice" : `${plural(n, "die")} left`) })));
    const moves = el("div", { class: "keep-moves" });
    for (const m of g.moves) {
      const val = v ? (m.end ? v.end : v.roll) : null;
      const isBest = val !== null && val !== undefined && Math.abs(val - best) < 1e-9;
      moves.append(moveButton({
        label: m.label, text: actionText(m), data: { end: String(Boolean(m.end)), action: String(m.action) },
        body: m.action !== undefined ? { action: m.action } : { keep: m.keep, end: m.end },
        value: showVals && st.values ? fmtValue(val, unit) : null, best: showVals && isBest,
      }));
    }
    card.append(moves);
    box.append(card);
  }
  if (showVals && !st.values) {
    box.append(el("p", { class: "note", text: fbk.mode === "solving" ? "Values appear once the solver is done." : "No values for this game." }));
  }
  numberShortcuts(box);
}

/** "keep 1 (100) and roll on" -> "roll on"; the full label stays as the accessible name. */
function actionText(m) {
  const label = m.label || "";
  const i = label.lastIndexOf(" and ");
  if (i >= 0) return label.slice(i + 5);
  return m.end ? "bank" : "roll on";
}

function moveButton({ label, text, data, body, value, best }) {
  const b = el("button", { type: "button", class: `move${best ? " best" : ""}`, title: label, "aria-label": label + (value ? `, value ${value}` : ""), dataset: data },
    el("span", { class: "kbd" }), el("span", { class: "move-text", text }),
    value ? el("span", { class: "move-value", text: value }) : null);
  b.addEventListener("click", () => act(body, b));
  return b;
}

function numberShortcuts(box) {
  box.querySelectorAll("button.move").forEach((b, i) => {
    const k = b.querySelector(".kbd");
    if (i < 9) k.textContent = String(i + 1); else k.remove();
  });
}

async function act(body, button) {
  if (play.acting || play.animating || !play.game) return;
  play.acting = true;
  $("choices").querySelectorAll("button").forEach((b) => { b.disabled = true; });
  const st = await withBusy(null, "Opponents are playing…", () => api("POST", `/api/games/${play.game.id}/act`, body));
  play.acting = false;
  if (!st) { // the error is shown; the view stays as it was
    $("choices").querySelectorAll("button").forEach((b) => { b.disabled = false; });
    if (button) button.focus();
    return;
  }
  clearError();
  play.game = st;
  await showState(st);
  const firstMove = $("choices").querySelector("button.move");
  if (firstMove && document.activeElement === document.body) firstMove.focus({ preventScroll: true });
}

function startPolling(st) {
  if (play.poll) return;
  play.poll = setInterval(async () => {
    if (play.game !== st || play.animating || play.acting) { stopPolling(); return; }
    try {
      const fresh = await api("GET", `/api/games/${st.id}`);
      if (play.game !== st || play.animating || play.acting) return;
      if ((fresh.events || []).length !== (st.events || []).length) return; // wait for the next act
      if (!fresh.feedback || fresh.feedback.mode !== "solving") {
        stopPolling();
        play.game = fresh;
        renderPlayNow(fresh);
      }
    } catch (e) {
      stopPolling(); // no GET for one game: the feedback comes with the next move
    }
  }, 1500);
}

function stopPolling() {
  if (play.poll) clearInterval(play.poll);
  play.poll = null;
}

function renderSummary(st) {
  const box = clear($("summary"));
  const s = st.summary || {};
  const fbk = st.feedback || {};
  const unit = fbk.unit || "win";
  const winners = st.winners || [];
  const youWin = winners.includes(st.seat);
  const wnames = winners.map((p) => st.names[p]).join(" and ");
  box.append(el("h2", { id: "summary-title", text: youWin ? (winners.length > 1 ? "A shared win!" : "You win!") : `${wnames} win${winners.length === 1 ? "s" : ""}` }));
  box.append(el("p", { class: "final-scores", text: "Final scores: " + st.names.map((n, p) => `${n} ${fmtInt(st.scores[p])}`).join(" · ") }));
  const dl = el("dl", { class: "stats" });
  const stat = (k, v, id) => dl.append(el("div", {}, el("dt", { text: k }), el("dd", { id, text: v })));
  stat("Your decisions", fmtInt(s.decisions ?? (st.decisions || []).length));
  stat("Total regret", fmtRegret(s.regret, unit), "summary-regret");
  if (unit !== "points") {
    stat("Start value", fmtPct(s.start_value));
    stat("Implied win rate vs perfect play", fmtPct(s.implied_win), "summary-implied");
  }
  box.append(dl);
  if (fbk.note) box.append(el("p", { class: "note", text: fbk.note }));
  if (unit !== "points" && s.implied_win !== null && s.implied_win !== undefined) {
    box.append(el("p", { class: "note", text: "Implied win rate: your chance of winning at the start (" + fmtPct(s.start_value) +
      ") less what your moves gave away, i.e. the win rate your play would have against perfect opponents." }));
  }
  const costly = s.costliest || [];
  if (costly.length) {
    box.append(el("h3", { text: "Costliest moves" }));
    const list = el("ol", { class: "costliest" });
    costly.forEach((d) => {
      list.append(el("li", {}, el("button", { type: "button", class: "linkish", onclick: () => openPosition(st, d) },
        el("span", { class: "when", text: `Turn ${d.turn}` }), diceRow(d.position && d.position.dice, "tiny"),
        el("span", { text: `you ${movePast(d.move)} (${fmtValue(d.move.value, unit)}); best ${moveName(d.best)} (${fmtValue(d.best.value, unit)})` }),
        el("span", { class: "regret", text: `−${fmtRegret(d.regret, unit)}` }))));
    });
    box.append(list);
  } else if (s.decisions) {
    box.append(el("p", { text: "No costly move: every decision was the best." }));
  }
  const actions = el("div", { class: "actions" },
    el("a", { id: "save-record", class: "button", href: `/api/games/${encodeURIComponent(st.id)}/record`,
      download: `tenk-${st.rules ? st.rules.name : "game"}-${st.id}.jsonl`, text: "Save record" }),
    el("button", { type: "button", class: "primary", onclick: () => { $("new-game").focus(); newGame(); }, text: "Play again" }));
  box.append(actions);
  box.hidden = false;
}

function openPosition(st, d) {
  const box = clear($("position"));
  const unit = (st.feedback && st.feedback.unit) || "win";
  box.append(el("div", { class: "panel-head" }, el("h3", { text: `Your decision at turn ${d.turn}` }),
    el("button", { type: "button", class: "icon", "aria-label": "Close the position", text: "×", onclick: () => { box.hidden = true; } })));
  box.append(renderDecision(d, st.names, unit, { title: `Turn ${d.turn}` }));
  box.hidden = false;
  box.scrollIntoView({ block: "nearest", behavior: "smooth" });
}

/* =================================================================== viewer (Watch, Analyse) */

/**
 * A stepper over an Analysis: the board after each event, the decision of that moment with
 * every move's value, the chart, the log, the per-player regret table and the costliest moves.
 */
function makeViewer(root) {
  const v = { root, a: null, step: 0, timer: null, decByEvent: new Map(), chartIdx: [] };
  const ids = {};
  const part = (name, tag, attrs, ...kids) => (ids[name] = el(tag, attrs, ...kids));
  root.append(
    part("head", "div", { class: "viewer-head" }),
    part("chart", "div", { class: "chart", tabindex: "-1" }),
    el("div", { class: "stepper", role: "group", "aria-label": "Step through the game" },
      part("first", "button", { type: "button", title: "First (Home)", "aria-label": "First step", text: "⇤" }),
      part("prev", "button", { type: "button", class: "prev", title: "Previous (←)", "aria-label": "Previous step", text: "◀" }),
      part("play", "button", { type: "button", class: "play", title: "Play / pause (Space)", "aria-label": "Play", text: "▶ play" }),
      part("next", "button", { type: "button", class: "next", title: "Next (→)", "aria-label": "Next step", text: "▶" }),
      part("last", "button", { type: "button", title: "Last (End)", "aria-label": "Last step", text: "⇥" }),
      part("prevDec", "button", { type: "button", title: "Previous decision (Shift+←)", text: "◀ decision" }),
      part("nextDec", "button", { type: "button", title: "Next decision (Shift+→)", text: "decision ▶" }),
      part("slider", "input", { type: "range", class: "slider", min: "0", max: "0", value: "0", "aria-label": "Step" }),
      part("pos", "span", { class: "step-pos", "aria-live": "polite" })),
    el("div", { class: "viewer-body" },
      el("div", { class: "col-main" },
        part("board", "div", { class: "board" }),
        part("decision", "div", { class: "panel decision-panel" })),
      el("aside", { class: "col-side" }, el("h2", { text: "Log" }), part("log", "ol", { class: "log clickable" }))),
    part("summary", "div", { class: "panel viewer-summary" }));
  v.ids = ids;

  ids.first.addEventListener("click", () => v.go(0));
  ids.prev.addEventListener("click", () => v.go(v.step - 1));
  ids.next.addEventListener("click", () => v.go(v.step + 1));
  ids.last.addEventListener("click", () => v.go(v.a ? v.a.events.length - 1 : 0));
  ids.prevDec.addEventListener("click", () => v.jumpDecision(-1));
  ids.nextDec.addEventListener("click", () => v.jumpDecision(1));
  ids.play.addEventListener("click", () => v.toggle());
  ids.slider.addEventListener("input", () => v.go(Number(ids.slider.value), true));
  ids.log.addEventListener("click", (ev) => {
    const li = ev.target.closest("li[data-index]");
    if (li) v.go(Number(li.dataset.index));
  });

  v.load = (a, startStep) => {
    v.stop();
    v.a = a;
    v.decByEvent = new Map((a.decisions || []).map((d) => [d.event, d]));
    v.decEvents = (a.decisions || []).map((d) => d.event);
    v.chartEvents = (a.chart || []).map((c) => c.event);
    ids.slider.max = String(Math.max(0, a.events.length - 1));
    clear(ids.log);
    a.events.forEach((e, i) => { const li = logItem(e, a.names, i); if (li) ids.log.append(li); });
    renderViewerHead(v);
    renderViewerSummary(v);
    root.hidden = false;
    v.go(startStep === undefined ? 0 : startStep);
  };

  v.go = (step, fromSlider) => {
    if (!v.a) return;
    const n = v.a.events.length;
    v.step = Math.max(0, Math.min(n - 1, step));
    if (!fromSlider) ids.slider.value = String(v.step);
    renderViewerStep(v);
  };

  v.jumpDecision = (dir) => {
    const evs = v.decEvents || [];
    const target = dir > 0 ? evs.find((e) => e > v.step) : [...evs].reverse().find((e) => e < v.step);
    if (target !== undefined) v.go(target);
  };

  v.toggle = () => (v.timer ? v.stop() : v.start());
  v.start = () => {
    if (!v.a) return;
    if (v.step >= v.a.events.length - 1) v.go(0);
    ids.play.textContent = "❚❚ pause";
    ids.play.setAttribute("aria-label", "Pause");
    v.timer = setInterval(() => {
      if (v.step >= v.a.events.length - 1) { v.stop(); return; }
      v.go(v.step + 1);
    }, Math.max(60, app.pace));
  };
  v.stop = () => {
    if (v.timer) clearInterval(v.timer);
    v.timer = null;
    ids.play.textContent = "▶ play";
    ids.play.setAttribute("aria-label", "Play");
  };

  v.keydown = (ev) => {
    if (!v.a || root.hidden) return false;
    const k = ev.key;
    if (k === "ArrowRight") { ev.shiftKey ? v.jumpDecision(1) : v.go(v.step + 1); }
    else if (k === "ArrowLeft") { ev.shiftKey ? v.jumpDecision(-1) : v.go(v.step - 1); }
    else if (k === "Home") v.go(0);
    else if (k === "End") v.go(v.a.events.length - 1);
    else if (k === " ") v.toggle();
    else return false;
    return true;
  };
  return v;
}

function renderViewerHead(v) {
  const a = v.a;
  const r = a.rules || {};
  const head = clear(v.ids.head);
  const result = a.winners ? `won by ${a.winners.map((p) => a.names[p]).join(" and ")}` : "record ends before the game does";
  head.append(el("h2", {}, a.names.join(" vs ")),
    el("p", { class: "muted", text: `${r.name || "?"} (${r.hash || ""}) · target ${fmtInt(r.target)} · ` +
      `${plural((a.decisions || []).length, "decision")} · ${result}` }),
    a.feedback && a.feedback.note ? el("p", { class: "note", text: `Values: ${a.feedback.note}` }) : null);
}

function renderViewerSummary(v) {
  const a = v.a;
  const unit = (a.feedback && a.feedback.unit) || "win";
  const box = clear(v.ids.summary);
  const rows = a.summary || [];
  if (rows.length) {
    box.append(el("h3", { text: "Regret by player" }));
    box.append(el("div", { class: "table-wrap" }, el("table", { class: "regret-table" },
      el("thead", {}, el("tr", {}, el("th", { text: "player" }), el("th", { class: "num", text: "decisions" }),
        el("th", { class: "num", text: "total regret" }),
        unit !== "points" ? el("th", { class: "num", text: "start value" }) : null,
        unit !== "points" ? el("th", { class: "num", text: "implied win" }) : null)),
      el("tbody", {}, rows.map((s) => el("tr", {},
        el("td", {}, el("span", { class: "swatch", style: `--pc: ${playerColors[s.player % 4]}` }), a.names[s.player] ?? `P${s.player + 1}`),
        el("td", { class: "num", text: fmtInt(s.decisions) }),
        el("td", { class: "num", text: fmtRegret(s.regret, unit) }),
        unit !== "points" ? el("td", { class: "num", text: fmtPct(s.start_value) }) : null,
        unit !== "points" ? el("td", { class: "num", text: fmtPct(s.implied_win) }) : null))))));
  }
  const costly = (a.decisions || []).filter((d) => d.regret > 0).sort((x, y) => y.regret - x.regret).slice(0, 8);
  if (costly.length) {
    box.append(el("h3", { text: "Costliest moves" }));
    box.append(el("ol", { class: "costliest" }, costly.map((d) => el("li", {},
      el("button", { type: "button", class: "linkish", onclick: () => { v.go(d.event); v.ids.board.scrollIntoView({ block: "nearest" }); } },
        el("span", { class: "when", text: `Turn ${d.turn}` }),
        el("span", { class: "swatch", style: `--pc: ${playerColors[d.player % 4]}` }),
        el("span", { text: `${a.names[d.player]} ${movePast(d.move)}; best ${moveName(d.best)}` }),
        el("span", { class: "regret", text: `−${fmtRegret(d.regret, unit)}` }))))));
  } else if ((a.decisions || []).length) {
    box.append(el("p", { text: "No costly move: every decision was the best." }));
  }
}

function renderViewerStep(v) {
  const a = v.a;
  renderBoard(v.ids.board, boardAt(a, v.step, -1));
  const n = a.events.length;
  v.ids.pos.textContent = `step ${v.step + 1} / ${n}`;
  v.ids.prev.disabled = v.ids.first.disabled = v.step <= 0;
  v.ids.next.disabled = v.ids.last.disabled = v.step >= n - 1;

  // the decision of this moment: the one answering this roll, or the one this keep made
  const unit = (a.feedback && a.feedback.unit) || "win";
  let d = v.decByEvent.get(v.step);
  let made = false;
  if (!d && v.step > 0 && ["keep", "piggyback"].includes(a.events[v.step].type)) {
    for (let i = v.step - 1; i >= 0 && i >= v.step - 2; i--) { if (v.decByEvent.has(i)) { d = v.decByEvent.get(i); made = true; break; } }
  }
  const panel = clear(v.ids.decision);
  if (d) {
    panel.append(renderDecision(d, a.names, unit, made ? { title: `Turn ${d.turn}: ${a.names[d.player]} chose` } : {}));
  } else {
    panel.append(el("p", { class: "muted", text: "No decision at this step. Step to a roll (or use “decision ▶”) to see every move's value." }));
  }

  // the log: mark the current event
  v.ids.log.querySelectorAll("li.now").forEach((li) => li.classList.remove("now"));
  const li = v.ids.log.querySelector(`li[data-index="${v.step}"]`) ||
    [...v.ids.log.querySelectorAll("li")].reverse().find((x) => Number(x.dataset.index) <= v.step);
  if (li) {
    li.classList.add("now");
    const box = v.ids.log;
    if (li.offsetTop < box.scrollTop || li.offsetTop > box.scrollTop + box.clientHeight - 24) box.scrollTop = li.offsetTop - box.clientHeight / 2;
  }
  v.ids.log.querySelectorAll("li").forEach((x) => x.classList.toggle("future", Number(x.dataset.index) > v.step));

  // the chart: the last decision at or before this step
  let ci = -1;
  for (let i = 0; i < v.chartEvents.length; i++) { if (v.chartEvents[i] <= v.step) ci = i; else break; }
  renderChart(v.ids.chart, a, ci, (i) => v.go(v.chartEvents[i]));
}

/* =================================================================== Watch */

let watchViewer = null;

function watchAgentInputs() {
  const n = Number($("watch-players").value);
  const labels = [];
  for (let i = 1; i <= n; i++) labels.push(`P${i}`);
  agentInputs($("watch-agents"), labels, ["dicenow", "maxscore", "greedy", "hold:300"], "agent");
}

function initWatch() {
  watchViewer = makeViewer($("watch-viewer"));
  $("watch-players").addEventListener("change", watchAgentInputs);
  watchAgentInputs();
  $("watch-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const seedText = $("watch-seed").value.trim();
    const body = {
      rules: $("watch-rules").value,
      agents: [...$("watch-agents").querySelectorAll("input")].map((i) => i.value.trim()),
      seed: seedText === "" ? null : Number(seedText),
    };
    const a = await withBusy($("watch"), "The agents are playing; scoring every decision…",
      () => apiSolving("POST", "/api/watch", body));
    if (!a) return;
    clearError();
    $("watch-intro").hidden = true;
    watchViewer.load(a, 0);
  });
}

/* =================================================================== Analyse */

let analyseViewer = null;

function initAnalyse() {
  analyseViewer = makeViewer($("analyse-viewer"));
  $("record-file").addEventListener("change", async () => {
    const f = $("record-file").files[0];
    if (!f) return;
    try {
      $("record-text").value = await f.text();
    } catch (e) {
      showError(`Cannot read ${f.name}: ${e.message}`);
    }
  });
  $("analyse-form").addEventListener("submit", (ev) => { ev.preventDefault(); analyseText($("record-text").value); });
}

async function analyseText(text) {
  if (!text.trim()) { showError("Choose a record file or paste its JSON lines first."); return; }
  const a = await withBusy($("analyse"), "Analysing the record (solving the ruleset if it is new)…",
    () => apiSolving("POST", "/api/analyse", { record: text }));
  if (!a) return;
  clearError();
  $("analyse-intro").hidden = true;
  const ds = a.decisions || [];
  // a record that stops before the game does (a costliest-mistake record) opens at its last decision
  const start = !a.winners && ds.length ? ds[ds.length - 1].event : 0;
  analyseViewer.load(a, start);
}

async function openRecordFromUrl() {
  const id = new URLSearchParams(location.search).get("record");
  if (!id) return false;
  showView("analyse");
  const rec = await withBusy(null, "Loading the record…", () => api("GET", `/api/records/${encodeURIComponent(id)}`));
  if (!rec) return true;
  $("record-text").value = rec.record || "";
  if (rec.name) document.title = `${rec.name} · tenk`;
  await analyseText(rec.record || "");
  return true;
}

/* =================================================================== keys and start */

function onKey(ev) {
  if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const t = ev.target;
  if (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName))) {
    if (!(t.type === "range" || t.type === "checkbox")) return;
    if (t.type === "range" && ev.key !== " ") return; // the slider steps with the arrows itself
  }
  if (app.view === "play") {
    if (ev.key === "s" || ev.key === "S") { if (!$("skip").hidden) { play.skip = true; ev.preventDefault(); } return; }
    if (ev.key === "v" || ev.key === "V") { $("show-values").click(); ev.preventDefault(); return; }
    if (/^[1-9]$/.test(ev.key)) {
      const b = $("choices").querySelectorAll("button.move")[Number(ev.key) - 1];
      if (b && !b.disabled && !$("play-decide").hidden) { b.click(); ev.preventDefault(); }
    }
    return;
  }
  if (t && t.tagName === "BUTTON" && ev.key === " ") return; // Space presses the focused button
  const viewer = app.view === "watch" ? watchViewer : analyseViewer;
  if (viewer && viewer.keydown(ev)) ev.preventDefault();
}

async function main() {
  const pace = Number(new URLSearchParams(location.search).get("pace"));
  if (Number.isFinite(pace) && pace >= 0 && new URLSearchParams(location.search).has("pace")) app.pace = pace;
  $("error-close").addEventListener("click", clearError);
  initTabs();
  initPlay();
  initWatch();
  initAnalyse();
  document.addEventListener("keydown", onKey);
  showView(location.hash.slice(1) || "play");
  try {
    await loadMeta();
  } catch (e) {
    showError(e);
  }
  await openRecordFromUrl();
  document.body.dataset.ready = "1";
}

main();
