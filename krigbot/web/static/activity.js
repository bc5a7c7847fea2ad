// The Activity's page inside Discord: sign the user in with the Embedded App SDK's authorize,
// trade the code at the web view's /activity/token, then show the channel's running game with
// the live page's own table (replay.js), following it as it is played; its players flip here.
import * as sdk from "/static/discord-embedded-app-sdk.js";

const root = document.getElementById("activity");
const status = document.getElementById("activity-status");
const refusal = document.getElementById("activity-refusal");
const flipButton = document.getElementById("activity-flip");
const lookButton = document.getElementById("activity-look");
const choices = document.getElementById("activity-choices");
const tableArea = document.getElementById("activity-table");

// Discord's proxy serves the page at the root of the Activity's address, which its URL mapping
// sends to /activity/ here: the page's routes are named relative to the page, so they are
// found the same way from inside Discord and from the web view's own address.
const here = location.pathname.endsWith("/") ? "" : `${location.pathname.split("/").pop()}/`;
const route = (name) => new URL(here + name, location.href).href;

// How long the page waits before asking for the channel's game again: after a 503 (the
// server's process was away), and while the channel has no game (one may be started).
const AGAIN_MS = 5000;
// The game's round when the look shown was made: a round the stream tells later than the look
// but played before it (the stream may lag a moment) leaves the look as it is.
let lookRound = -1;

function show(state, text) {
  root.dataset.state = state;
  status.textContent = text;
}

function refuse(text) {
  refusal.textContent = text || "";
  refusal.hidden = !text;
}

// What a refused call says to the reader: the web view's own line where it gave one in the
// page's language (a refusal of the game's, or a wait for the process holding the server), else
// that something failed.
function told(answer, body) {
  const worded = answer.status === 400 || answer.status === 403 || answer.status === 503;
  return worded && body.error ? body.error : root.dataset.failed;
}

async function signIn() {
  const clientId = root.dataset.clientId;
  if (!clientId) throw new Error("the bot has not logged in yet");
  // Discord's client frames the page; a test page hands in the SDK's own mock instead.
  const discord = window.krigMakeSdk ? window.krigMakeSdk(sdk, clientId) : new sdk.DiscordSDK(clientId);
  await discord.ready();
  const { code } = await discord.commands.authorize({
    client_id: clientId,
    response_type: "code",
    state: "",
    prompt: "none",
    scope: ["identify"],
  });
  const traded = await fetch(route("token"), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ code }),
  });
  if (!traded.ok) throw new Error(`the code was refused (${traded.status})`);
  const { access_token: token } = await traded.json();
  await discord.commands.authenticate({ access_token: token });
  const me = await fetch(route("me"), { headers: { Authorization: `Bearer ${token}` } });
  if (!me.ok) throw new Error(`the token was refused (${me.status})`);
  const user = await me.json();
  const session = { discord, token, user, guild: discord.guildId, channel: discord.channelId };
  window.krigActivity = session;
  show("signed-in", root.dataset.signedIn.replace("{name}", user.name));
  return session;
}

// The channel's game as the web view shows it to this member.
async function ask(session) {
  const address = route(`channel/${session.channel}?guild=${session.guild}`);
  const answer = await fetch(address, { headers: { Authorization: `Bearer ${session.token}` } });
  const body = await answer.json().catch(() => ({}));
  return { answer, body };
}

// After a game's end its table stays; the next game started in the channel (a rematch) takes
// its place once it runs.
function awaitNext(session, ended) {
  setTimeout(async () => {
    const { answer, body } = await ask(session).catch(() => ({ answer: null, body: {} }));
    if (answer && answer.ok && body.game && body.game !== ended) load(session);
    else awaitNext(session, ended);
  }, AGAIN_MS);
}

// The channel's game on the page: its table, followed live.
async function load(session) {
  const { answer, body } = await ask(session);
  tableArea.replaceChildren();
  flipButton.hidden = lookButton.hidden = choices.hidden = true;
  if (!answer.ok) {
    show("refused", told(answer, body));
    // 503: the process running the server did not answer (stopping, or being taken over by
    // another): the page asks again itself a moment later.
    if (answer.status === 503) setTimeout(() => load(session), AGAIN_MS);
    return;
  }
  if (!body.game) {
    show("no-game", body.note);
    // Someone may start one in the channel (/krig start): the table shows up by itself.
    setTimeout(() => load(session), AGAIN_MS);
    return;
  }
  tableArea.innerHTML = body.html;
  let over = false;
  const ended = () => {
    flipButton.hidden = true;
    lookButton.hidden = true;
    choices.hidden = true;
    show("ended", root.dataset.ended);
    if (!over) awaitNext(session, body.game);
    over = true;
  };
  window.krigReplay(tableArea.querySelector("#replay"), body.data, route(body.live), {
    round: (played) => {
      refuse(""); // a refusal told of the table before this round
      // A look made before this round is out of date: the next Look shows the new card.
      if (!(played && played.n <= lookRound)) choices.hidden = true;
    },
    end: ended,
    lost: () => load(session),
  });
  show(body.player ? "playing" : "watching", root.dataset[body.player ? "playing" : "watching"]);
  flipButton.hidden = !body.player;
  lookButton.hidden = !(body.player && body.choices);
}

// A move of the player's (flip, look, choose): posted with the channel it is made in; the
// answer's body, or null where it was refused (the page says why).
async function move(session, name, extra = {}) {
  refuse("");
  const buttons = document.querySelectorAll(".activity-moves button, #activity-options button");
  buttons.forEach((button) => (button.disabled = true));
  try {
    const answer = await fetch(route(name), {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ guild: session.guild, channel: session.channel, ...extra }),
    });
    const body = await answer.json().catch(() => ({}));
    if (answer.ok) return body;
    refuse(told(answer, body));
    return null;
  } finally {
    buttons.forEach((button) => (button.disabled = false));
  }
}

// Text with Discord's **bold**, as elements (never as markup).
function lines(target, text) {
  target.replaceChildren();
  text.split("\n").forEach((line, index) => {
    if (index) target.appendChild(document.createElement("br"));
    line.split("**").forEach((part, bold) => {
      if (!part) return;
      if (bold % 2) {
        const strong = document.createElement("b");
        strong.textContent = part;
        target.appendChild(strong);
      } else target.appendChild(document.createTextNode(part));
    });
  });
}

// A Steal War player's own card and the moves open to them, shown to them alone.
function showLook(session, look) {
  lookRound = look.round ?? -1;
  lines(document.getElementById("activity-done"), look.done || "");
  lines(document.getElementById("activity-look-text"), look.text || "");
  const options = document.getElementById("activity-options");
  options.replaceChildren(
    ...look.options.map((option) => {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = option.label;
      button.dataset.choice = option.move.choice;
      button.addEventListener("click", async () => {
        const after = await move(session, "choose", { move: option.move });
        if (after) showLook(session, after);
      });
      return button;
    }),
  );
  choices.hidden = !(look.done || look.text || look.options.length);
}

signIn()
  .then(async (session) => {
    flipButton.addEventListener("click", () => move(session, "flip"));
    lookButton.addEventListener("click", async () => {
      const look = await move(session, "look");
      if (look) showLook(session, look);
    });
    await load(session);
  })
  .catch((error) => {
    console.warn("Krigbot Activity:", error.message);
    show("failed", root.dataset.failed);
  });
