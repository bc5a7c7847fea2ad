// The Activity's page inside Discord: sign the user in with the Embedded App SDK's authorize,
// trade the code at the web view's /activity/token, and prove who calls with the token after.
import * as sdk from "/static/discord-embedded-app-sdk.js";

const root = document.getElementById("activity");
const status = document.getElementById("activity-status");

// Discord's proxy serves the page at the root of the Activity's address, which its URL mapping
// sends to /activity/ here: the sign-in's routes are named relative to the page, so they are
// found the same way from inside Discord and from the web view's own address.
const here = location.pathname.endsWith("/") ? "" : `${location.pathname.split("/").pop()}/`;
const route = (name) => new URL(here + name, location.href).href;

function show(state, text) {
  root.dataset.state = state;
  status.textContent = text;
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
  window.krigActivity = { discord, token, user };
  show("signed-in", root.dataset.signedIn.replace("{name}", user.name));
}

signIn().catch((error) => {
  console.warn("Krigbot Activity:", error.message);
  show("failed", root.dataset.failed);
});
