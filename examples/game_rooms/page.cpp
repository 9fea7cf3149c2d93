// SPDX-License-Identifier: Apache-2.0
#include "page.hpp"

namespace game {

// `?room=room-3&name=ann` picks the room and the name. The elements with
// ids `status`, `tick`, `players` and `names` are what the browser test
// reads back from Chromium's --dump-dom. `&hold=1` is for that test:
// headless Chromium dumps the page at its load event, and a frame still
// loading holds that event back, so the page loads a hidden frame from
// GET /hold (answered after 5 s) and removes it once its first snapshot is
// drawn: the dump follows that snapshot. Not --virtual-time-budget with a
// pending fetch: under load Chromium then kept the WebSocket's messages
// from the page until the fetch ended (the dump showed the welcome only).
const std::string& page_html() {
  static const std::string html = R"page(<!doctype html>
<html><head><meta charset="utf-8"><title>keylane game rooms</title>
<style>body{font:14px sans-serif;margin:1em}canvas{border:1px solid #444}</style>
</head><body>
<h1>Room <span id="room"></span></h1>
<p>Status: <span id="status">connecting</span> &middot; tick <span id="tick">0</span>
&middot; players <span id="players">0</span></p>
<canvas id="view" width="640" height="400"></canvas>
<ul id="names"></ul>
<p>Arrow keys move. Walk into the blue portal to go to the next room.</p>
<script>
"use strict";
const q = new URLSearchParams(location.search);
const room = q.get("room") || "room-0";
const name = q.get("name") || ("web" + Math.floor(Math.random() * 10000));
document.getElementById("room").textContent = room;
let hold = null;
if (q.get("hold")) {
  hold = document.createElement("iframe");
  hold.style.display = "none";
  hold.src = "/hold";
  document.body.appendChild(hold);
}
const cell = 20;
let map = null, me = "", seq = 0, dir = [0, 0];
const ws = new WebSocket("ws://" + location.host + "/");
const status = (s) => document.getElementById("status").textContent = s;
ws.onopen = () => { status("joining"); ws.send("join " + room + " " + name); };
ws.onclose = () => status("closed");
ws.onmessage = (ev) => {
  const lines = ev.data.split("\n");
  const head = lines[0].split(" ");
  if (head[0] === "welcome") {
    me = head[1]; // ids pass 2^53: compared as text
    document.getElementById("room").textContent = head[2];
    map = head[5].split("/");
    status("in " + head[2]);
  } else if (head[0] === "snap") {
    draw(head[2], lines.slice(1));
  } else if (head[0] === "err") {
    status(lines[0]);
  }
};
function draw(tick, lines) {
  const c = document.getElementById("view").getContext("2d");
  c.fillStyle = "#fff"; c.fillRect(0, 0, 640, 400);
  if (map) for (let y = 0; y < map.length; ++y) for (let x = 0; x < map[y].length; ++x) {
    const t = map[y][x];
    if (t === "#") { c.fillStyle = "#555"; c.fillRect(x * cell, y * cell, cell, cell); }
    if (t === "P") { c.fillStyle = "#39f"; c.fillRect(x * cell, y * cell, cell, cell); }
  }
  const names = [];
  for (const l of lines) {
    const w = l.split(" ");
    if (w[0] === "o") {
      c.fillStyle = "#fc0";
      c.beginPath(); c.arc(w[1] * cell + 10, w[2] * cell + 10, 6, 0, 7); c.fill();
    } else if (w[0] === "p") {
      c.fillStyle = w[1] === me ? "#e33" : "#3a3";
      c.fillRect(w[2] * cell + 3, w[3] * cell + 3, cell - 6, cell - 6);
      names.push(w[6] + " " + w[4]);
    }
  }
  document.getElementById("tick").textContent = tick;
  document.getElementById("players").textContent = names.length;
  const ul = document.getElementById("names");
  ul.replaceChildren(...names.map((n) => {
    const li = document.createElement("li"); li.textContent = n; return li;
  }));
  if (hold) { hold.remove(); hold = null; } // this frame is in the DOM: let the dump happen
}
const keys = {ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1]};
function steer(d) {
  if (d[0] === dir[0] && d[1] === dir[1]) return;
  dir = d;
  if (ws.readyState === 1) ws.send("input " + (++seq) + " " + d[0] + " " + d[1]);
}
document.addEventListener("keydown", (e) => { if (keys[e.key]) { steer(keys[e.key]); e.preventDefault(); } });
document.addEventListener("keyup", (e) => { if (keys[e.key]) steer([0, 0]); });
</script></body></html>
)page";
  return html;
}

} // namespace game
