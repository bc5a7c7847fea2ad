// Krigbot's replay in the browser: the rounds the server rebuilt from the game's seed and rules,
// shown card by card. Plain JavaScript, no build step; the data is a JSON block in the page.
"use strict";

// `start` draws a table (the markup of templates/table.html under `root`) from its data, and
// follows the game's stream at `streamHref` while it runs. The game's page starts it with the
// JSON block in the page; the Activity's page (activity.js) with what its web view answered.
// `hooks.round(played)` and `hooks.end(end)` hear the stream's rounds and end, and
// `hooks.lost()` a stream the web view no longer serves (its link ran out).
function startReplay(root, data, streamHref, hooks = {}) {
  const rounds = data.rounds;
  let total = rounds.length;
  const cards = root.dataset.cards;
  const deckSize = data.deal.reduce((a, b) => a + b, 0) || 1;
  const seats = Array.from(root.querySelectorAll(".seat"));
  const caption = document.getElementById("caption");
  const where = document.getElementById("where");
  const scrub = document.getElementById("scrub");
  const chart = document.getElementById("chart");
  const result = document.getElementById("result");
  let running = root.dataset.running === "true";
  let atEnd = running ? "latest" : "ended"; // a game under way: its latest round so far
  const playButton = document.getElementById("play");
  const speedSelect = document.getElementById("speed");
  const buttons = {
    first: document.getElementById("first"),
    prev: document.getElementById("prev"),
    next: document.getElementById("next"),
    war: document.getElementById("war"),
    last: document.getElementById("last"),
  };
  const reduced = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  const SVG = "http://www.w3.org/2000/svg";

  let position = 0; // 0: the cards are dealt; n: round n is on the table
  let playing = false;
  let timer = null;
  let flips = [];
  let cursor = null;
  let lines = [];

  seats.forEach((seat, index) => {
    seat.querySelectorAll(".dot, .fill").forEach((el) => {
      el.style.background = data.colours[index];
    });
  });

  function speed() {
    return Number(speedSelect.value) || 1;
  }

  function countsAt(n) {
    return n === 0 ? data.deal : rounds[n - 1].counts;
  }

  function card(code, up, small) {
    const outer = document.createElement("div");
    outer.className = "c" + (small ? " small" : "");
    if (code) outer.dataset.code = code;
    const inner = document.createElement("div");
    inner.className = "c-in";
    const back = document.createElement("img");
    back.src = cards + "back.png";
    back.alt = "";
    back.className = "back";
    inner.appendChild(back);
    if (code) {
      const face = document.createElement("img");
      face.src = cards + code + ".png";
      face.alt = code;
      face.className = "face";
      inner.appendChild(face);
    }
    outer.appendChild(inner);
    if (up) outer.classList.add("up");
    return outer;
  }

  function clearFlips() {
    flips.forEach(clearTimeout);
    flips = [];
  }

  function later(ms, work) {
    flips.push(setTimeout(work, ms));
  }

  // The table after round n: each seat's battle card, then per war step its face-down pile
  // and the card turned up. With `animate`, the cards turn over one beat after another.
  function drawTable(n, animate) {
    clearFlips();
    const played = n === 0 ? null : rounds[n - 1];
    const beat = 380 / speed();
    seats.forEach((seat) => {
      seat.querySelector("[data-play]").replaceChildren();
      seat.classList.remove("winner");
    });
    if (!played) {
      drawDeal();
      return 0;
    }
    const turned = [];
    played.battle.forEach(([seatIndex, code]) => {
      const el = card(code, !animate, false);
      el.dataset.role = "battle";
      seats[seatIndex].querySelector("[data-play]").appendChild(el);
      turned.push([el, 0]);
    });
    played.steps.forEach((step, stepIndex) => {
      step.fighters.forEach((seatIndex, i) => {
        const area = seats[seatIndex].querySelector("[data-play]");
        const pile = document.createElement("div");
        pile.className = "pile";
        pile.dataset.step = String(stepIndex + 1);
        for (let k = 0; k < step.down[i]; k++) pile.appendChild(card(null, false, true));
        if (step.up[i]) {
          const up = card(step.up[i], !animate, true);
          up.dataset.role = "war";
          pile.appendChild(up);
          turned.push([up, stepIndex + 1]);
        }
        if (animate) {
          pile.hidden = true;
          later(beat * (stepIndex + 1) * 1.6, () => {
            pile.hidden = false;
          });
        }
        area.appendChild(pile);
      });
    });
    const end = beat * (played.steps.length * 1.6 + 1);
    if (animate) {
      turned.forEach(([el, step]) => {
        later(step === 0 ? 30 : beat * (step * 1.6 + 0.6), () => el.classList.add("up"));
      });
      later(end, () => markWinner(played));
    } else {
      markWinner(played);
    }
    return end;
  }

  // Before the first round: each player's dealt pile, face down, as thick as their share.
  function drawDeal() {
    seats.forEach((seat, index) => {
      const count = data.deal[index];
      if (!count) return;
      const pile = document.createElement("div");
      pile.className = "pile deck";
      pile.dataset.role = "deal";
      const shown = Math.max(1, Math.min(5, Math.round((5 * count) / deckSize) + 1));
      for (let k = 0; k < shown; k++) pile.appendChild(card(null, false, false));
      seat.querySelector("[data-play]").appendChild(pile);
    });
  }

  function markWinner(played) {
    if (played.winner !== null) seats[played.winner].classList.add("winner");
  }

  function drawCounts(n) {
    const counts = countsAt(n);
    seats.forEach((seat, index) => {
      seat.querySelector("[data-count]").textContent = String(counts[index]);
      seat.querySelector(".fill").style.width = (100 * counts[index]) / deckSize + "%";
      seat.classList.toggle("out", n > 0 && counts[index] === 0);
    });
  }

  function drawCaption(n) {
    caption.replaceChildren();
    const lines = n === 0 ? [] : rounds[n - 1].text.map((text) => [text, lineClass(text)]);
    if (n === total && total > 0 && data.result.length) lines.push([data.result[0], "take"]);
    lines.forEach(([text, kind]) => {
      const p = document.createElement("p");
      p.textContent = text;
      if (kind) p.className = kind;
      caption.appendChild(p);
    });
  }

  function lineClass(text) {
    if (text.startsWith("⚔")) return "war-line";
    if (text.startsWith("➜")) return "take";
    return "";
  }

  function show(n, animate) {
    position = Math.max(0, Math.min(total, n));
    const end = drawTable(position, animate && !reduced);
    drawCounts(position);
    drawCaption(position);
    const played = position === 0 ? null : rounds[position - 1];
    where.textContent =
      position === 0
        ? where.dataset.dealt || where.textContent
        : data.labels.round + " " + position + " / " + total + (played.steps.length ? " · ⚔ " + data.labels.war : "");
    where.dataset.round = String(position);
    scrub.value = String(position);
    if (cursor) {
      const x = total ? (1000 * position) / total : 0;
      cursor.setAttribute("x1", x);
      cursor.setAttribute("x2", x);
    }
    // The chart and the result tell how the game ends: only as far as the replay has come.
    lines.forEach(([line, members]) => line.setAttribute("points", chartPoints(members, position)));
    if (result) result.hidden = position !== total || running;
    buttons.first.disabled = buttons.prev.disabled = position === 0;
    buttons.next.disabled = buttons.last.disabled = position === total;
    buttons.war.disabled = nextWar() === null;
    root.dataset.round = String(position);
    root.dataset.state = position === total ? atEnd : playing ? "playing" : "paused";
    return end;
  }

  function nextWar() {
    const found = data.wars.find((number) => number > position);
    return found === undefined ? null : found;
  }

  function setPlaying(on) {
    playing = on && position < total;
    clearTimeout(timer);
    timer = null;
    playButton.textContent = (playing ? "⏸ " : "▶ ") + playButton.dataset[playing ? "pauseLabel" : "playLabel"];
    playButton.setAttribute("aria-pressed", String(playing));
    root.dataset.state = position === total ? atEnd : playing ? "playing" : "paused";
    if (playing) tick();
  }

  function tick() {
    const end = show(position + 1, true);
    if (position >= total) {
      setPlaying(false);
      return;
    }
    timer = setTimeout(tick, Math.max(end, 500 / speed()) + 350 / speed());
  }

  function go(n) {
    setPlaying(false);
    show(n, n === position + 1);
  }

  const CHART_H = 200;
  const chartX = (n) => (total ? (1000 * n) / total : 0);
  const chartY = (count) => CHART_H - 8 - (count / deckSize) * (CHART_H - 16);

  function chartPoints(members, upTo) {
    const points = [];
    for (let n = 0; n <= upTo; n++) {
      const counts = countsAt(n);
      const held = members.reduce((sum, seat) => sum + counts[seat], 0);
      points.push(chartX(n).toFixed(1) + "," + chartY(held).toFixed(1));
    }
    return points.join(" ");
  }

  function drawChart() {
    chart.replaceChildren();
    lines = [];
    const h = CHART_H;
    const y = chartY;
    const x = chartX;
    const middle = document.createElementNS(SVG, "line");
    middle.setAttribute("x1", 0);
    middle.setAttribute("x2", 1000);
    middle.setAttribute("class", "mid");
    middle.setAttribute("stroke", "rgba(255,255,255,0.18)");
    middle.setAttribute("stroke-dasharray", "6 6");
    middle.setAttribute("vector-effect", "non-scaling-stroke");
    chart.appendChild(middle);
    data.wars.forEach((number) => {
      const mark = document.createElementNS(SVG, "line");
      mark.setAttribute("x1", x(number));
      mark.setAttribute("x2", x(number));
      mark.setAttribute("y1", h - 14);
      mark.setAttribute("y2", h);
      mark.setAttribute("stroke", "#e0485c");
      mark.setAttribute("stroke-width", "1.5");
      mark.setAttribute("vector-effect", "non-scaling-stroke");
      chart.appendChild(mark);
    });
    // One line per seat, or per team in team games (partners share their cards' fate).
    const share = deckSize / data.teams.length;
    middle.setAttribute("y1", y(share));
    middle.setAttribute("y2", y(share));
    data.teams.forEach((members) => {
      const line = document.createElementNS(SVG, "polyline");
      lines.push([line, members]);
      line.setAttribute("fill", "none");
      line.setAttribute("stroke", data.colours[members[0]]);
      line.setAttribute("stroke-width", "2");
      line.setAttribute("stroke-linejoin", "round");
      line.setAttribute("vector-effect", "non-scaling-stroke");
      chart.appendChild(line);
    });
    cursor = document.createElementNS(SVG, "line");
    cursor.setAttribute("y1", 0);
    cursor.setAttribute("y2", h);
    cursor.setAttribute("stroke", "#f6c440");
    cursor.setAttribute("stroke-width", "2");
    cursor.setAttribute("vector-effect", "non-scaling-stroke");
    chart.appendChild(cursor);
  }

  where.dataset.dealt = where.textContent;
  drawChart();
  playButton.addEventListener("click", () => setPlaying(!playing));
  buttons.first.addEventListener("click", () => go(0));
  buttons.prev.addEventListener("click", () => go(position - 1));
  buttons.next.addEventListener("click", () => go(position + 1));
  buttons.last.addEventListener("click", () => go(total));
  buttons.war.addEventListener("click", () => {
    const war = nextWar();
    if (war !== null) go(war);
  });
  scrub.addEventListener("input", () => go(Number(scrub.value)));
  document.addEventListener("keydown", (event) => {
    // The speed list and the scrubber handle their own keys.
    const own = event.target instanceof HTMLSelectElement || event.target instanceof HTMLInputElement;
    if (own || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "ArrowRight") go(position + 1);
    else if (event.key === "ArrowLeft") go(position - 1);
    else if (event.key === " " && !(event.target instanceof HTMLButtonElement)) {
      event.preventDefault();
      setPlaying(!playing);
    }
  });
  // A game under way opens on its latest round; an ended one on the deal, its end unspoilt.
  show(running ? total : 0, false);
  setPlaying(false);

  // A game under way follows its rounds as they are played (Server-Sent Events). A viewer on
  // the latest round sees each new one played out; one looking back stays where they are.
  if (running && streamHref && window.EventSource) {
    const address = new URL(streamHref, document.baseURI);
    address.searchParams.set("after", String(total));
    const events = new EventSource(address.href);
    events.addEventListener("error", () => {
      if (events.readyState === EventSource.CLOSED && hooks.lost) hooks.lost();
    });
    events.addEventListener("round", (event) => {
      const played = JSON.parse(event.data);
      if (played.n !== total + 1) return; // the stream resumes after the last one had
      const following = position === total && !playing;
      rounds.push(played);
      total += 1;
      if (played.steps.length) data.wars.push(played.n);
      scrub.max = String(total);
      drawChart();
      if (following) show(total, true);
      else if (!playing) show(position, false);
      if (hooks.round) hooks.round(played);
    });
    events.addEventListener("end", (event) => {
      events.close();
      const end = JSON.parse(event.data);
      data.final = end.final;
      data.result = end.result;
      data.summary = end.summary;
      if (result) {
        const title = document.createElement("h2");
        title.textContent = end.title;
        result.replaceChildren(title);
        end.result.concat(end.summary).forEach((text, index) => {
          const p = document.createElement("p");
          p.textContent = text;
          if (index === 0 && end.result.length) p.className = "headline";
          else if (index >= end.result.length) p.className = "muted";
          result.appendChild(p);
        });
      }
      const note = document.getElementById("running");
      if (note) note.hidden = true;
      running = false;
      atEnd = "ended";
      root.dataset.running = "false";
      if (position === total && !playing) {
        drawCaption(total);
        if (result) result.hidden = false;
        root.dataset.state = atEnd;
      }
      if (hooks.end) hooks.end(end);
    });
  }
}

window.krigReplay = startReplay;

(function () {
  const root = document.getElementById("replay");
  const source = document.getElementById("game-data");
  if (!root || !source) return;
  const stream = document.querySelector('link[rel="alternate"][type="text/event-stream"]');
  startReplay(root, JSON.parse(source.textContent), stream && stream.getAttribute("href"));
})();
