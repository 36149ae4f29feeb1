// The browser table: log in with a token, pick a game, play it against the bots; or watch a table
// (src/watch.ts) and replay a round (src/replay.ts). Everything croupier-specific goes through the
// TypeScript SDK (clients/ts: the protocol, the reconnects and resumes, docs/protocol.md); this
// file is the page: what is drawn and what a click sends.
//
// Query parameters: token (fills the token field), gw (gateway WebSocket URLs, comma
// separated; default: ws(s)://<this host>/ws, the demo's server forwards it to a live gateway).
// Without a token parameter the page reads config.json beside it, if there is one ({"token",
// "gateways"}: the demo writes one, clients/web/serve.mjs --config).
import { Client, CroupierError, croupier } from "@croupier/client";
import type { TournamentSeatEvent } from "@croupier/client";

import { blackjackTotal, blackjackValue, cardElement, cardName, guandanWild } from "./cards.js";
import { has, num, Table } from "./table.js";
import { levelText as tourLevelText, ordinal, TournamentTab } from "./tournaments.js";
import { ReplayViewer } from "./replay.js";
import { WatchMode } from "./watch.js";
import * as niu from "./niuniu.js";
import { encodeAction, ZjhMove, type ZjhAction } from "./zjh.js";

const E = croupier.Engine;
/* The games the page plays; players: how many it takes to deal (docs/rules/<game>.md). */
const GAMES = [
    { game: "doudizhu", label: "Dou Dizhu", engine: E.ENGINE_TRADITIONAL, players: 3 },
    { game: "holdem", label: "Texas Hold'em", engine: E.ENGINE_HOLDEM, players: 2 },
    { game: "blackjack", label: "Blackjack", engine: E.ENGINE_PERSISTENT, players: 1 },
    { game: "zhajinhua", label: "Zha Jin Hua", engine: E.ENGINE_GAME, players: 2 },
    { game: "niuniu", label: "Niu Niu", engine: E.ENGINE_GAME, players: 2 },
    { game: "runfast", label: "Run Fast", engine: E.ENGINE_TRADITIONAL, players: 3 },
    { game: "bigtwo", label: "Big Two", engine: E.ENGINE_TRADITIONAL, players: 4 },
    { game: "guandan", label: "Guandan", engine: E.ENGINE_TRADITIONAL, players: 4 },
];
const fmt = (n: number): string => n.toLocaleString("en-US");
const PING_MS = 20000; /* below the gateway's idle timeout (docs/gateway.md, 60 s) */

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const el = (tag: string, cls = "", text = ""): HTMLElement => {
    const e = document.createElement(tag);
    if (cls)
        e.className = cls;
    if (text)
        e.textContent = text;
    return e;
};
const enumName = (en: Record<number, string>, v: number | null | undefined, strip = ""): string =>
    (en[v ?? 0] ?? String(v)).replace(strip, "");

let client: Client | null = null;
let table: Table | null = null;
let busy = false;            /* a move or a join is on its way */
let seated = false;          /* this page holds a seat: false once Leave went through */
let leaving = false;         /* Leave asked for during a round: sent at its end */
let refreshing: Promise<void> | null = null;
/* The tournament whose seat the page follows (SDK playTournament): its table is the table view,
 * its level the blinds in the title; status: what the banner says between tables. */
let tour: { id: number; name: string; level: string; status: string; table: number } | null = null;
/* shedding: the cards picked to play, by handKeys() (a two-deck game's twins are two cards) */
const selected = new Set<string>();

/* ---- notes, errors, status ------------------------------------------------------------- */

/** A line in the notes: kind is moved, reconnected, goaway, closing, refusal or info. */
function note(kind: string, text: string): HTMLElement {
    const li = el("li", `note ${kind}`);
    li.append(el("time", "", new Date().toLocaleTimeString()), " ", text);
    $("notes").prepend(li);
    return li;
}

function showError(text: string): void {
    const e = $("error");
    e.textContent = text;
    e.hidden = false;
}

function renderStatus(state: string): void {
    const s = $("status");
    s.dataset.state = state;
    if (client === null) {
        s.textContent = "not connected";
        return;
    }
    s.dataset.url = client.url;
    s.textContent = `player ${client.playerId} · ${state} · ${client.url}`;
    const l = client.login, w = $("wallet");
    w.hidden = l === null || !has(l, "chips");
    if (l !== null && has(l, "chips"))
        w.textContent = `Wallet ${fmt(num(l.chips))}`; /* read at each (re)login: chips at a table are not in it */
}

function show(section: "login" | "lobby" | "table" | "replay"): void {
    for (const id of ["login", "lobby", "table", "replay"])
        $(id).hidden = id !== section;
}

const tournaments = new TournamentTab({ client: () => client, note, el, playTournament: (id, name) => void playTournament(id, name) });
/* Watching a table or a player (src/watch.ts), the replay viewer (src/replay.ts). */
const watch = new WatchMode({ client: () => client, el, note, showError, gameLabel,
    enter: (t) => { table = t; seated = false; show("table"); render(); }, render: () => render(), lobby: () => showLobby() });
const replays = new ReplayViewer({ client: () => client, el, note, showError, gameLabel,
    showViewer: (on) => show(on ? "replay" : table !== null ? "table" : "lobby") });

/* The lobby's tabs: the games, the tournaments (src/tournaments.ts), watch & replay. */
function showTab(tab: "games" | "tournaments" | "watch"): void {
    for (const b of document.querySelectorAll<HTMLButtonElement>("#lobby-tabs button")) {
        b.setAttribute("aria-selected", String(b.dataset.tab === tab));
        $(`${b.dataset.tab}-pane`).hidden = b.dataset.tab !== tab;
    }
    if (tab === "tournaments")
        tournaments.open();
    if (tab === "watch")
        void watch.list();
}

/* ---- the SDK -------------------------------------------------------------------------- */

function gatewayUrls(text: string): string[] {
    return text.split(",").map((u) => u.trim()).filter((u) => u !== "");
}

async function login(): Promise<void> {
    const token = $<HTMLInputElement>("token").value.trim();
    const urls = gatewayUrls($<HTMLInputElement>("gateways").value);
    $("error").hidden = true;
    if (token === "" || urls.length === 0) {
        showError("A token and at least one gateway URL are needed.");
        return;
    }
    const bad = urls.filter((u) => !/^wss?:\/\/[^\s/]+/.test(u));
    if (bad.length > 0) {
        showError(`Gateway URLs start with ws:// or wss:// (croupier-gate --ws-listen): not ${bad.join(", ")}`);
        return;
    }
    const c = new Client({ urls, token });
    wire(c);
    client = c;
    renderStatus("connecting");
    try {
        const r = await c.connect();
        renderStatus("open");
        note("info", `Logged in as player ${r.playerId} on ${c.url}`);
        setInterval(() => { if (client === c) c.ping().catch(() => {}); }, PING_MS);
        if (r.seated) {
            const s = await c.resume();
            table = Table.fromSnapshot(s);
            seated = true;
            show("table");
            render();
        } else {
            showLobby();
        }
    } catch (e) {
        client = null;
        renderStatus("closed");
        showError(`Login failed: ${e instanceof Error ? e.message : String(e)}`);
    }
}

function wire(c: Client): void {
    const redraw = () => render();
    c.on("deal", (d) => {
        table?.onDeal(d);
        /* Guandan's deal does not say its level (the order of the hand, the wild cards) nor
         * whether tribute comes first: the Snapshot does */
        if (table?.game === "guandan" && d.seat === table.mySeat)
            void refresh();
        redraw();
    });
    c.on("turn", (t) => {
        if (table === null)
            return;
        table.onTurn(t);
        if (table.myTurn() && table.engine !== E.ENGINE_PERSISTENT)
            void refresh(); /* the authoritative hand, play to beat and bets before we act */
        redraw();
    });
    c.on("play", (p) => { table?.onPlay(p); redraw(); });
    c.on("tournamentEvent", (ev) => {
        tournaments.onEvent(ev);
        if (tour !== null && num(ev.tournament) === tour.id &&
            ev.kind === croupier.TournamentEventKind.TOUR_EVENT_LEVEL_UP) {
            tour.level = ev.onBreak ? `break after level ${ev.levelNumber}`
                : `Level ${ev.levelNumber} · blinds ${fmt(num(ev.smallBlind))}/${fmt(num(ev.bigBlind))}` +
                  (num(ev.ante) > 0 ? `, ante ${fmt(num(ev.ante))}` : "");
            render();
        }
    });
    c.on("tournamentSeat", (ev) => onTournamentSeat(ev));
    c.on("tournamentInfo", (info) => tournaments.onInfo(info));
    c.on("gameEvent", (g) => {
        if (table === null || !g.body)
            return;
        try {
            table.onGameEvent(g.body);
        } catch (e) {
            showError(`The server sent a game event the page cannot read: ${e instanceof Error ? e.message : String(e)}`);
        }
        redraw();
    });
    c.on("roundEnd", (e) => {
        if (table === null)
            return;
        table.onRoundEnd(e);
        const d = (e.deltas ?? []).find((x) => x.seat === table?.mySeat);
        const delta = num(d?.delta);
        const outcome = enumName(croupier.RoundOutcome, e.outcome, "OUTCOME_");
        const li = note("round", `Round ${outcome.toLowerCase()}` + (table.spectator ? "" :
            e.outcome === croupier.RoundOutcome.OUTCOME_COMPLETED
                ? (delta > 0 ? `: you won ${delta}` : delta < 0 ? `: you lost ${-delta}` : ": even")
                : ` (${enumName(croupier.VoidReason, e.voidReason, "VOID_")})`));
        li.dataset.round = e.roundId ?? "";
        li.dataset.outcome = outcome;
        if (!table.spectator && e.roundId)
            li.append(" ", replays.roundButtons(e.roundId, table.game)); /* docs/replays.md */
        redraw();
        if (leaving)
            void sendLeave();
        else if (table.engine === E.ENGINE_HOLDEM && !table.spectator)
            void refresh(); /* the stacks after the settlement (the cards stay until the next hand) */
    });
    c.on("snapshot", (s) => {
        if (table === null)
            table = Table.fromSnapshot(s);
        else
            table.applySnapshot(s);
        seated = true;
        show("table");
        redraw();
    });
    c.on("watchSnapshot", (s) => watch.onSnapshot(s, table));
    c.on("watchEnded", (w) => watch.onEnded(w));
    c.on("moved", (m) => {
        if (watch.active())
            return; /* a spectator holds no seat: a followed player's next table comes as a Snapshot */
        const to = m.to ?? {};
        note("moved", `The table moved (${enumName(croupier.ClosingReason, m.reason, "CLOSING_")}` +
            `${m.wholeTable ? ", whole table" : ""}) to another server: you sit at seat ${(to.seat ?? 0) + 1}`);
        if (table !== null && m.wholeTable) {
            table.deskId = num(to.deskId);
            table.mySeat = to.seat ?? table.mySeat;
        } else {
            table = Table.fromJoined(to);
        }
        seated = true;
        show("table");
        redraw();
    });
    c.on("tableClosing", (t) => {
        if (watch.active())
            return;
        if (t.reason === croupier.ClosingReason.CLOSING_TOURNAMENT && tour !== null)
            return; /* the SDK follows the seat: "tournamentSeat" says where to */
        note("closing", `The table is closing (${enumName(croupier.ClosingReason, t.reason, "CLOSING_")})` +
            (t.afterMs ? `; you will be moved within ${t.afterMs} ms` : "; join again"));
        if (!t.afterMs)
            showLobby();
    });
    c.on("goAway", (g) => {
        note("goaway", `The gateway is going away (${enumName(croupier.GoAwayReason, g.reason, "GOAWAY_")}); ` +
            `reconnecting in ${g.reconnectDelayMs} ms`);
    });
    /* The SDK's keepalive (docs/protocol.md "Keepalive"): the gateway answered nothing, not
     * even a Ping, so the client left it for another. */
    c.on("gatewaySilent", (g) => {
        note("goaway", `The gateway ${g.url} stopped answering (silent ${g.silentMs} ms); ` +
            "moving to another");
    });
    c.on("disconnected", (d) => renderStatus(`reconnecting (closed ${d.code})`));
    c.on("reconnected", (r) => {
        renderStatus("open");
        watch.onReconnected();
        note("reconnected", `Connection resumed on ${r.url}` + (r.snapshot ? ": your seat is back"
            : watch.active() ? ": watching again" : ""));
        if (r.snapshot === null && table !== null && tour === null && !watch.active())
            showLobby(); /* a tournament seat is asked for again by the SDK */
    });
    c.on("closed", (r) => {
        renderStatus("closed");
        showError(`The session ended: ${r.reason}`);
    });
}

/* Resume: the seat's Snapshot, the state to draw and to act from. */
function refresh(): Promise<void> {
    if (client === null || refreshing !== null)
        return refreshing ?? Promise.resolve();
    const c = client;
    refreshing = c.resume().then((s) => {
        if (table === null)
            table = Table.fromSnapshot(s);
        else
            table.applySnapshot(s);
    }).catch((e: unknown) => {
        if (e instanceof CroupierError && (e.codeName === "NOT_SEATED" || e.codeName === "TABLE_CLOSED")) {
            if (tour === null)
                showLobby();
            else
                seated = false; /* between tournament tables: the SDK finds the next */
        }
    }).finally(() => {
        refreshing = null;
        render();
    });
    return refreshing;
}

async function act(action: croupier.IAction, then?: () => Promise<void>): Promise<void> {
    if (client === null || busy || !seated || table === null)
        return; /* nothing is sent without a seat: the buttons are disabled then, too */
    busy = true;
    render();
    try {
        await client.act(action);
        selected.clear();
        if (then !== undefined)
            await then();
    } catch (e) {
        if (!(e instanceof CroupierError))
            showError(`Move failed: ${e instanceof Error ? e.message : String(e)}`);
        else
            note("refusal", `Move refused: ${e.message}`);
        await refresh();
    } finally {
        busy = false;
        render();
    }
}

async function join(engine: croupier.Engine, game: string): Promise<void> {
    if (client === null || busy)
        return;
    const text = $<HTMLInputElement>("stake").value.trim();
    const stake = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(stake) || stake < 1) {
        showError(`The stake must be a whole number of chips, 1 or more (not "${text}").`);
        return;
    }
    $("error").hidden = true;
    busy = true;
    try {
        const r = await client.join(engine, game, stake);
        if (r.joined)
            table = Table.fromJoined(r.joined);
        else if (r.snapshot)
            table = Table.fromSnapshot(r.snapshot);
        else
            throw new Error("the join was answered without a seat");
        seated = true;
        note("info", `Seated at ${gameLabel(game)}, seat ${table.mySeat + 1}`);
        show("table");
    } catch (e) {
        showError(`Join failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
        busy = false;
        render();
    }
}

/* Leave: at once between rounds; during one, once it has ended (after a Leave the gateway
 * forgets the seat, so the page could not act in the rest of the round; docs/gateway.md). */
async function leave(): Promise<void> {
    if (client === null || table === null || leaving)
        return;
    if (tour !== null) {
        note("info", "A tournament seat is kept until you are out: your turns are played for you (check, else fold) while you are away");
        return;
    }
    if (table.roundId !== null && table.result === null) {
        leaving = true;
        note("info", "You leave the table at the end of this round");
        render();
        return;
    }
    await sendLeave();
}

async function sendLeave(): Promise<void> {
    if (client === null)
        return;
    try {
        await client.leave();
    } catch (e) {
        if (!(e instanceof CroupierError) || e.codeName !== "NOT_SEATED") {
            showError(`Leave failed: ${e instanceof Error ? e.message : String(e)}`);
            return;
        }
    }
    note("info", "You left the table");
    showLobby();
}

function gameLabel(game: string): string {
    return GAMES.find((g) => g.game === game)?.label ?? game;
}

/* The lobby: the table is gone (left, closed or lost): nothing of it stays clickable. */
function showLobby(): void {
    leaving = false;
    $("tour-banner").hidden = true;
    seated = false;
    table = null;
    selected.clear();
    for (const id of ["seats", "my-seat", "center", "mine", "actions", "plays"])
        $(id).replaceChildren();
    tick();
    show("lobby");
    const box = $("games");
    box.replaceChildren();
    for (const g of GAMES) {
        const b = el("button", "game", g.label) as HTMLButtonElement;
        b.type = "button";
        b.dataset.game = g.game;
        b.onclick = () => void join(g.engine, g.game);
        box.append(b);
    }
    client?.listTables().then((ads) => {
        for (const b of box.querySelectorAll<HTMLButtonElement>("button.game")) {
            const n = ads.filter((a) => a.game === b.dataset.game).length;
            if (n > 0)
                b.append(el("small", "", ` ${n} open table${n > 1 ? "s" : ""}`));
        }
    }).catch(() => {});
}

/* ---- tournament seats (docs/protocol.md "Tournaments", the SDK's playTournament) ---------- */

/* "Take my seat": the SDK asks for the seat until it has one, then follows the person from
 * table to table; each step is a "tournamentSeat" event (onTournamentSeat). */
async function playTournament(id: number, name: string): Promise<void> {
    if (client === null)
        return;
    if (tour !== null && tour.id === id && table !== null) {
        show("table");
        render();
        return;
    }
    $("error").hidden = true;
    tour = { id, name, level: "", status: "Finding your table…", table: 0 };
    note("info", `${name}: finding your table`);
    try {
        await client.playTournament(id);
    } catch (e) {
        if (tour?.id !== id)
            return;
        /* the finished and stopped events say why in the notes */
        if (!(e instanceof CroupierError) || (e.codeName !== "TOURNAMENT_OVER" && e.codeName !== "NOT_REGISTERED"))
            showError(`${name}: no seat: ${e instanceof Error ? e.message : String(e)}`);
    }
}

function onTournamentSeat(ev: TournamentSeatEvent): void {
    if (tour === null || ev.tournament !== tour.id)
        return;
    const name = tour.name;
    switch (ev.kind) {
    case "waiting":
        tour.status = `Waiting for a seat (${ev.detail})`;
        note("tournament", `${name}: waiting for a seat`);
        break;
    case "seated":
        table = Table.fromSnapshot(ev.snapshot);
        seated = true;
        tour.status = "";
        show("table");
        /* the level in force and the tournament's number of the table (never the desk id) */
        void tournaments.infoOf(tour.id).then((info) => {
            if (tour === null || tour.id !== ev.tournament)
                return;
            if (info !== null) {
                tour.level = tourLevelText(info);
                tour.table = info.you?.state === croupier.TournamentEntryState.TOUR_ENTRY_PLAYING ? num(info.you.table) : 0;
            }
            note("tournament", `${name}: seated` + (tour.table > 0 ? ` at table ${tour.table}` : "") +
                `, seat ${(ev.snapshot.yourSeat ?? 0) + 1}`).dataset.kind = "seated";
            render();
        });
        break;
    case "left":
        seated = false;
        tour.table = 0;
        tour.status = `${ev.detail || "You left your table"} · finding your next table…`;
        note("closing", `${name}: ${ev.detail || "you left your table"}`).dataset.kind = "left";
        break;
    case "out":
        seated = false;
        tour.table = 0;
        tour.status = ev.detail || "You are out of the match: your place comes with its end";
        note("tournament", `${name}: ${tour.status}`).dataset.kind = "out";
        break;
    case "finished": {
        const text = ev.won ? `You won ${name}` + (ev.prize > 0 ? `: prize ${fmt(ev.prize)}` : "")
            : ev.place > 0 ? `You finished ${ordinal(ev.place)} in ${name}` + (ev.prize > 0 ? `: prize ${fmt(ev.prize)}` : ", no prize")
                : `${name} is over for you (${ev.reason})`;
        note("tournament", text).dataset.kind = "finished";
        tour = null;
        showLobby();
        showTab("tournaments");
        void tournaments.showResult(ev.tournament, text, "ok");
        return;
    }
    case "stopped":
        note("refusal", `${name}: no longer following your seat: ${ev.error.message}`);
        tour = null;
        if (table === null || !seated)
            showLobby();
        return;
    }
    render();
}

/* Between tournament tables the table view says so (the detail of the TableClosing). */
function renderTourBanner(): void {
    const b = $("tour-banner");
    b.hidden = tour === null || tour.status === "";
    b.textContent = tour?.status ?? "";
    b.dataset.state = seated ? "seated" : "between";
}

/* ---- drawing -------------------------------------------------------------------------- */

function cards(list: (number | null)[], cls = "cards"): HTMLElement {
    const box = el("div", cls);
    for (const c of list)
        box.append(cardElement(c));
    return box;
}

/* Whether the page may send a move now: seated, no move or refresh on its way. */
function canSend(): boolean {
    return client !== null && seated && table !== null && !busy && refreshing === null;
}

function button(move: string, label: string, enabled: boolean, onclick: () => void): HTMLButtonElement {
    const b = el("button", "action", label) as HTMLButtonElement;
    b.type = "button";
    b.dataset.move = move;
    b.disabled = !enabled || !canSend();
    b.onclick = onclick;
    return b;
}

function amountInput(value: number, min: number, max: number, label: string): HTMLInputElement {
    const i = el("input", "amount") as HTMLInputElement;
    i.type = "number";
    i.min = String(min);
    i.max = String(max);
    i.value = String(value);
    i.title = `${label}: ${min} to ${max}`;
    i.setAttribute("aria-label", i.title);
    return i;
}

/* An amount typed by the person, checked against the bounds the server gave; null (and a note)
 * when it is out of them. */
function amountOf(input: HTMLInputElement, min: number, max: number): number | null {
    const v = Number(input.value);
    if (!Number.isSafeInteger(v) || v < min || v > max) {
        note("info", `The amount must be a whole number from ${min} to ${max}`);
        return null;
    }
    return v;
}

function render(): void {
    if (table === null)
        return;
    const t = table;
    const sec = $("table");
    sec.dataset.engine = enumName(E, t.engine);
    sec.dataset.game = t.game;
    sec.dataset.round = t.roundId ?? "";
    sec.dataset.spectator = String(t.spectator);
    $("table-title").textContent = t.spectator ? `Watching · ${gameLabel(t.game)} · stake ${fmt(t.stake)}`
        : tour !== null
        ? `${tour.name} · ${gameLabel(t.game)}` + (tour.table > 0 ? ` · table ${tour.table}` : "") +
          (tour.level ? ` · ${tour.level}` : "")
        : `${gameLabel(t.game)} · stake ${fmt(t.stake)}`;
    renderSeats(t);
    const center = $("center"), mine = $("mine"), actions = $("actions");
    center.replaceChildren();
    mine.replaceChildren();
    actions.replaceChildren();
    delete actions.dataset.leading;
    delete actions.dataset.tribute;
    const waiting = waitingText(t);
    if (waiting !== null) {
        const w = el("div", "waiting", waiting);
        w.id = "waiting";
        center.append(w);
    }
    if (t.engine === E.ENGINE_TRADITIONAL)
        renderShedding(t, center, mine, actions);
    else if (t.engine === E.ENGINE_HOLDEM)
        renderHoldem(t, center, mine, actions);
    else if (t.engine === E.ENGINE_PERSISTENT)
        renderBlackjack(t, center, mine, actions);
    else if (t.game === "zhajinhua")
        renderZjh(t, center, mine, actions);
    else if (t.game === "niuniu")
        renderNiu(t, center, mine, actions);
    else
        center.append(el("div", "label", `This page does not play ${t.game}: leave the table`));
    if (t.spectator)
        actions.replaceChildren(); /* a spectator has no move (docs/spectators.md) */
    actions.dataset.mine = String(t.myTurn());
    actions.dataset.ready = String(t.myTurn() && canSend());
    $<HTMLButtonElement>("leave").disabled = leaving || !seated || tour !== null;
    $("leave").hidden = t.spectator;
    watch.banner();
    $("leave").textContent = tour !== null ? "Tournament seat: kept until you are out"
        : leaving ? "Leaving after this round" : "Leave table";
    renderTourBanner();
    renderResult(t);
    const plays = $("plays");
    plays.replaceChildren(...t.plays.slice(-12).reverse().map((p) =>
        el("li", "", `${p.seat === t.mySeat ? "You" : t.seatName(p.seat)}: ${p.text}`)));
    tick();
}

/* How many players the game needs to deal. */
function needed(t: Table): number {
    return GAMES.find((g) => g.game === t.game)?.players ?? 2;
}

/* "Waiting for players (1/2 seated)" before a game can deal, "Waiting for the next round"
 * between rounds; null while a round is played. */
function waitingText(t: Table): string | null {
    if (t.roundId !== null && t.result === null)
        return null;
    if (t.engine === E.ENGINE_PERSISTENT && t.myTurn())
        return null; /* blackjack's betting window: the bet is the next move */
    const need = needed(t);
    const n = t.seatedCount(), of = Math.max(t.seatCount, need);
    if (t.result === null && n < need)
        return `Waiting for players (${n}/${of} seated)`;
    return "Waiting for the next round";
}

/* The roles of a seat: landlord, the dealer button, the blinds (heads-up the button posts the
 * small blind, docs/rules/holdem.md). */
function roles(t: Table, n: number): string[] {
    const r: string[] = [];
    if (t.engine === E.ENGINE_TRADITIONAL && t.declarer === n)
        r.push(t.game === "doudizhu" ? "Landlord" : "Declarer");
    if (t.engine === E.ENGINE_HOLDEM && t.button !== null) {
        const order = [...t.players.keys()].sort((a, b) => a - b);
        const i = order.indexOf(t.button);
        if (t.button === n)
            r.push("Dealer");
        if (i >= 0 && order.length >= 2) {
            const sb = order.length === 2 ? order[i] : order[(i + 1) % order.length];
            const bb = order[(order.indexOf(sb) + 1) % order.length];
            if (sb === n)
                r.push("Small blind");
            if (bb === n)
                r.push("Big blind");
        }
    }
    if (t.game === "zhajinhua" && t.zjh?.dealerSeat === n)
        r.push("Dealer");
    if (t.game === "niuniu" && t.banker === n)
        r.push("Banker");
    if (t.game === "guandan" && !t.spectator && n !== t.mySeat && n % 2 === t.mySeat % 2)
        r.push("Partner");
    return r;
}

function seatBox(t: Table, n: number): HTMLElement {
    const d = el("div", "seat");
    d.dataset.seat = String(n);
    const me = n === t.mySeat;
    if (me)
        d.classList.add("me");
    const toAct = t.turn?.seat === n && t.result === null;
    if (toAct)
        d.classList.add("to-act");
    const info = t.seats.get(n);
    if (info === undefined && !me)
        d.classList.add("empty");
    d.append(el("div", "seat-name", me ? "You" : t.seatName(n)));
    const line: string[] = [];
    if (t.engine === E.ENGINE_HOLDEM && t.players.has(n)) {
        const p = t.players.get(n)!;
        line.push(`stack ${fmt(p.stack)}`);
        if (p.bet > 0)
            line.push(`bet ${fmt(p.bet)}`);
    } else if (t.game === "zhajinhua" && t.zjhSeat(n) !== null) {
        const z = t.zjhSeat(n)!;
        line.push(`stack ${fmt(z.stack)}`);
        if (z.putIn > 0)
            line.push(`in ${fmt(z.putIn)}`);
    } else if (info !== undefined && info.chips > 0) {
        line.push(`chips ${fmt(info.chips)}`);
    }
    if (t.game === "niuniu")
        line.push(...niuSeatLine(t, n));
    if (t.engine === E.ENGINE_TRADITIONAL && t.cardsLeft.has(n))
        line.push(`${t.cardsLeft.get(n)} cards`);
    if (line.length > 0)
        d.append(el("div", "seat-chips", line.join(" · ")));
    const badges = el("div", "seat-badges");
    for (const r of roles(t, n))
        badges.append(el("span", `badge role-${r.toLowerCase().replace(/\s+/g, "-")}`, r));
    const p = t.players.get(n), z = t.zjhSeat(n);
    if (p?.folded || z?.folded)
        badges.append(el("span", "badge out", "Folded"));
    if (p?.allIn || z?.allIn)
        badges.append(el("span", "badge", "All in"));
    if (z?.looked)
        badges.append(el("span", "badge", "Looked"));
    if (toAct)
        badges.append(el("span", "badge turn", "To act"));
    if (badges.childElementCount > 0)
        d.append(badges);
    const last = t.lastMove.get(n);
    if (last !== undefined)
        d.append(el("div", "seat-move", last));
    if (t.spectator && t.engine === E.ENGINE_HOLDEM && p !== undefined && !p.folded && t.roundId !== null && t.result === null)
        d.append(cards([null, null], "cards small")); /* a spectator sees each hand as a count (docs/spectators.md) */
    if (!me && t.engine === E.ENGINE_PERSISTENT)
        for (const h of t.hands.filter((x) => x.seat === n))
            d.append(cards(h.cards, "cards small"));
    if (!me && t.game === "niuniu" && t.niuSeat(n) !== null) {
        const shown = t.niuShown.get(n);
        d.append(cards(shown !== undefined ? shown.cards : t.result === null ? [null, null, null, null] : [],
                       "cards small"));
    }
    if (!me && t.game === "zhajinhua" && z !== null) {
        const shown = t.zjhShown.get(n);
        if (shown !== undefined)
            d.append(cards(shown, "cards small"));
        else if (!z.folded && t.result === null)
            d.append(cards([null, null, null], "cards small"));
    }
    return d;
}

function renderSeats(t: Table): void {
    /* the empty seats too, but at blackjack (many seats, each playing the house alone) */
    const all = new Set([...t.seatNumbers(), ...(t.engine === E.ENGINE_PERSISTENT ? [] : t.emptySeats)]);
    if (t.engine !== E.ENGINE_PERSISTENT && t.roundId === null && t.result === null) {
        /* waiting for players: the seats the game needs, empty ones included (a Joined may
         * list the taken seats only) */
        for (let n = 0; all.size < needed(t); n++)
            if (!all.has(n)) {
                all.add(n);
                t.emptySeats.add(n);
            }
    }
    const others = [...all].filter((n) => n !== t.mySeat).sort((a, b) => a - b);
    $("seats").replaceChildren(...others.map((n) => seatBox(t, n)));
    $("my-seat").replaceChildren(...(t.spectator ? [] : [seatBox(t, t.mySeat)]));
}

/* The hand's cards with a key each: "code:k" for the k-th copy of a code. */
function handKeys(hand: number[]): { code: number; key: string }[] {
    const seen = new Map<number, number>();
    return hand.map((code) => {
        const k = seen.get(code) ?? 0;
        seen.set(code, k + 1);
        return { code, key: `${code}:${k}` };
    });
}

const LEVEL_TEXT: Record<number, string> = { 11: "J", 12: "Q", 13: "K", 14: "A" };
const levelText = (r: number) => LEVEL_TEXT[r] ?? String(r);

function renderShedding(t: Table, center: HTMLElement, mine: HTMLElement, actions: HTMLElement): void {
    const bidding = t.phase === croupier.SheddingPhase.SHEDDING_BIDDING;
    const tribute = t.phase === croupier.SheddingPhase.SHEDDING_TRIBUTE;
    const leading = t.lastPlay.length === 0 || t.lastPlaySeat === t.mySeat;
    if (t.game === "guandan" && t.level > 0) {
        const mine = t.teamLevels[t.mySeat % 2], theirs = t.teamLevels[(t.mySeat + 1) % 2];
        center.append(el("div", "label", `Level ${levelText(t.level)} (wild: ${cardName(t.level << 2 | 2)})` +
            (mine === undefined || theirs === undefined ? "" : t.spectator ? ` · seats 1 and 3 ${levelText(t.teamLevels[0])}, seats 2 and 4 ${levelText(t.teamLevels[1])}`
                : ` · your team ${levelText(mine)}, theirs ${levelText(theirs)}`)));
    }
    if (tribute && t.roundId !== null && t.result === null) {
        const who = t.turn === null ? "" : t.turn.seat === t.mySeat ? "You" : t.seatName(t.turn.seat);
        const to = t.tributeTo === null ? "" : ` to ${t.tributeTo === t.mySeat ? "you" : t.seatName(t.tributeTo)}`;
        center.append(el("div", "label", t.tributeReturn
            ? `Return tribute: ${who} gives back a card of rank 10 or lower${to}`
            : `Tribute: ${who} gives the strongest card (not a wild heart)${to}`));
    } else if (t.lastPlay.length > 0 && t.lastPlaySeat !== null) {
        const whose = t.lastPlaySeat === t.mySeat ? "yours" : t.seatName(t.lastPlaySeat);
        center.append(el("div", "label", t.result !== null ? `Last play (${whose}):` : `To beat (${whose}):`),
                      cards(t.lastPlay, "cards last-play"));
    } else if (t.roundId !== null && !bidding && t.result === null) {
        center.append(el("div", "label", leading && t.myTurn() ? "You lead: play any combination" : "A new trick"));
    }
    if (t.kitty.length > 0)
        center.append(el("div", "label", "Bottom cards:"), cards(t.kitty, "cards kitty"));
    if (t.bid > 0)
        center.append(el("div", "label", `Bid ${t.bid}` + (t.multiplier > 1 ? ` · ×${t.multiplier}` : "")));
    const hand = el("div", "cards hand");
    hand.id = "hand";
    const keyed = handKeys(t.hand);
    for (const k of [...selected])
        if (!keyed.some((x) => x.key === k))
            selected.delete(k); /* played, given or no longer held */
    for (const { code, key } of keyed) {
        const ce = cardElement(code);
        ce.classList.add("pick");
        ce.dataset.key = key;
        if (t.game === "guandan" && guandanWild(code, t.level))
            ce.classList.add("wild");
        if (selected.has(key))
            ce.classList.add("selected");
        /* a card is a toggle button: a click, or Enter / Space when focused */
        ce.setAttribute("role", "button");
        ce.setAttribute("tabindex", "0");
        ce.setAttribute("aria-pressed", String(selected.has(key)));
        const toggle = () => {
            if (selected.has(key))
                selected.delete(key);
            else
                selected.add(key);
            render();
            document.querySelector<SVGElement>(`#hand svg.card[data-key="${key}"]`)?.focus();
        };
        ce.onclick = toggle;
        ce.onkeydown = (e) => {
            if (e.key === "Enter" || e.key === " ") {
                e.preventDefault();
                toggle();
            }
        };
        hand.append(ce);
    }
    if (t.hand.length > 0)
        mine.append(hand);
    if (t.roundId === null || t.result !== null)
        return; /* between rounds: nothing to do but wait */
    const my = t.myTurn();
    const picked = () => Uint8Array.from(keyed.filter((x) => selected.has(x.key)).map((x) => x.code));
    if (bidding) {
        actions.append(button("bid-0", "No bid", my, () => void act({ shedding:
            { move: croupier.SheddingMove.SHEDDING_BID, bid: 0 } })));
        for (const b of [1, 2, 3])
            actions.append(button(`bid-${b}`, `Bid ${b}`, my && b > t.bid, () => void act({ shedding:
                { move: croupier.SheddingMove.SHEDDING_BID, bid: b } })));
        return;
    }
    if (tribute) {
        /* the card given travels as a play of one card (docs/protocol.md, SHEDDING_TRIBUTE) */
        actions.dataset.tribute = my ? (t.tributeReturn ? "return" : "pay") : "";
        actions.append(button("give", t.tributeReturn ? "Return this card" : "Give this card", my && selected.size === 1,
            () => void act({ shedding: { move: croupier.SheddingMove.SHEDDING_PLAY, cards: picked() } })));
        return;
    }
    actions.dataset.leading = String(my && leading);
    actions.append(button("play", selected.size > 0 ? `Play ${selected.size}` : "Play", my && selected.size > 0,
        () => void act({ shedding: { move: croupier.SheddingMove.SHEDDING_PLAY, cards: picked() } })));
    actions.append(button("pass", "Pass", my && !leading,
        () => void act({ shedding: { move: croupier.SheddingMove.SHEDDING_PASS } })));
}

function renderHoldem(t: Table, center: HTMLElement, mine: HTMLElement, actions: HTMLElement): void {
    if (t.roundId !== null || t.board.length > 0 || t.pot > 0)
        center.append(el("div", "label", t.spectator ? "Board" : `Board · pot ${fmt(t.pot)}`), /* a spectator's pot: unknown after its Snapshot */
                      cards(t.board, "cards board"));
    if (t.hole.length > 0)
        mine.append(el("div", "label", "Your cards"), cards(t.hole, "cards hole"));
    if (t.roundId === null || t.result !== null)
        return;
    const my = t.myTurn();
    const turn = t.turn;
    const toCall = my && turn !== null ? turn.toCall ?? 0 : 0;
    const H = croupier.HoldemMove;
    actions.append(button("fold", "Fold", my && toCall > 0, () => void act({ holdem: { move: H.HOLDEM_FOLD } })));
    actions.append(button("check", "Check", my && toCall === 0, () => void act({ holdem: { move: H.HOLDEM_CHECK } })));
    actions.append(button("call", toCall > 0 ? `Call ${fmt(toCall)}` : "Call", my && toCall > 0,
        () => void act({ holdem: { move: H.HOLDEM_CALL } })));
    const min = turn?.min ?? null, max = turn?.max ?? null;
    if (my && min !== null && max !== null && min <= max) {
        /* a bet opens the street, a raise answers one (docs/rules/holdem.md) */
        const opened = [...t.players.values()].some((p) => p.bet > 0);
        const input = amountInput(min, min, max, opened ? "Raise to" : "Bet");
        actions.append(input);
        actions.append(button(opened ? "raise" : "bet", opened ? "Raise to" : "Bet", true, () => {
            const v = amountOf(input, min, max);
            if (v !== null)
                void act({ holdem: { move: opened ? H.HOLDEM_RAISE : H.HOLDEM_BET, amount: v } });
        }));
    }
}

function renderBlackjack(t: Table, center: HTMLElement, mine: HTMLElement, actions: HTMLElement): void {
    const up = t.dealer.filter((c): c is number => c !== null);
    if (t.dealer.length > 0)
        center.append(el("div", "label", `Dealer${up.length > 0 ? ` · ${blackjackTotal(up).total}` : ""}`),
                      cards(t.dealer, "cards dealer"));
    const own = t.hands.filter((h) => h.seat === t.mySeat);
    for (const h of own) {
        const v = blackjackTotal(h.cards);
        const box = el("div", "bj-hand");
        box.dataset.hand = String(h.hand);
        box.append(el("div", "label", `Hand ${h.hand + 1} · bet ${fmt(h.bet)}${h.doubled ? " (doubled)" : ""}` +
            (h.cards.length > 0 ? ` · ${v.soft ? "soft " : ""}${v.total}` : "")), cards(h.cards));
        mine.append(box);
    }
    const turn = t.myTurn() ? t.turn : null;
    const B = croupier.BlackjackMove;
    if (turn !== null && turn.hand === null && turn.min !== null) {
        const min = turn.min, max = turn.max ?? turn.min;
        const input = amountInput(min, min, max, "Bet");
        actions.append(el("span", "label", "Place your bet"), input, button("bet", "Bet", true, () => {
            const v = amountOf(input, min, max);
            if (v !== null)
                void act({ blackjack: { move: B.BJ_BET, amount: v } });
        }));
        return;
    }
    if (turn !== null && turn.hand === null && turn.toCall !== null) {
        actions.append(button("insure", `Insurance (${fmt(turn.toCall)})`, true,
            () => void act({ blackjack: { move: B.BJ_INSURANCE, insure: true } })));
        actions.append(button("no-insurance", "No insurance", true,
            () => void act({ blackjack: { move: B.BJ_INSURANCE, insure: false } })));
        return;
    }
    if (t.roundId === null || t.result !== null || own.length === 0)
        return; /* no hand of ours in play: nothing to do */
    const hand = turn !== null ? own.find((h) => h.hand === turn.hand) : undefined;
    const my = turn !== null && turn.hand !== null;
    const two = hand !== undefined && hand.cards.length === 2;
    const pair = two && blackjackValue(hand.cards[0]) === blackjackValue(hand.cards[1]);
    const idx = turn?.hand ?? 0;
    const move = (m: croupier.BlackjackMove) => () => void act({ blackjack: { move: m, hand: idx } });
    actions.append(button("hit", "Hit", my, move(B.BJ_HIT)), button("stand", "Stand", my, move(B.BJ_STAND)),
        button("double", "Double", my && two, move(B.BJ_DOUBLE)),
        button("split", "Split", my && pair, move(B.BJ_SPLIT)),
        button("surrender", "Surrender", my && two && own.length === 1, move(B.BJ_SURRENDER)));
}

/* Zha Jin Hua (docs/rules/zhajinhua.md): three cards face down; look at them (once, any time,
 * then every cost doubles), call, raise the unit, compare with a live seat from the second
 * betting round, or fold. */
function renderZjh(t: Table, center: HTMLElement, mine: HTMLElement, actions: HTMLElement): void {
    const z = t.zjh;
    if (z === null)
        return;
    center.append(el("div", "label", `Pot ${fmt(z.pot)} · unit ${fmt(z.unit)}` +
        (z.bettingRound > 0 ? ` · betting round ${z.bettingRound}${z.maxRounds > 0 ? ` of ${z.maxRounds}` : ""}` : "")));
    const me = t.zjhSeat(t.mySeat);
    if (me === null)
        return; /* not dealt in: the next hand */
    const own = z.ownCards.length > 0 ? z.ownCards : t.zjhShown.get(t.mySeat) ?? [];
    mine.append(el("div", "label", own.length > 0 ? "Your cards" : "Your cards (not looked at: you play blind, each bet costs half)"),
                cards(own.length > 0 ? own : [null, null, null], "cards zjh-own"));
    if (t.roundId === null || t.result !== null || me.folded)
        return;
    const send = (a: ZjhAction, then?: () => Promise<void>) => void act({ game: { body: encodeAction(a) } }, then);
    const my = t.myTurn();
    const turn = my ? t.turn : null;
    const cost = turn?.toCall ?? z.toCall ?? 0;
    actions.append(button("look", "Look", !me.looked && z.ownCards.length === 0,
        () => send({ move: ZjhMove.LOOK }, refresh)));
    actions.append(button("call", cost > 0 ? `Call ${fmt(cost)}` : "Call", my, () => send({ move: ZjhMove.CALL })));
    const min = turn?.min ?? null, max = turn?.max ?? null;
    if (my && min !== null && max !== null && min <= max) {
        const input = amountInput(min, min, max, "Raise the unit to");
        actions.append(input, button("raise", "Raise to", true, () => {
            const v = amountOf(input, min, max);
            if (v !== null)
                send({ move: ZjhMove.RAISE, unit: v });
        }));
    }
    const canCompare = my && z.canCompare && z.bettingRound >= 2;
    for (const s of z.seats)
        if (s.seat !== t.mySeat && !s.folded)
            actions.append(button(`compare-${s.seat}`, `Compare with ${t.seatName(s.seat)}`, canCompare,
                () => send({ move: ZjhMove.COMPARE, target: s.seat })));
    actions.append(button("fold", "Fold", my, () => send({ move: ZjhMove.FOLD })));
}

/* Niu Niu: a seat's bid, bet and shown category. */
function niuSeatLine(t: Table, n: number): string[] {
    const z = t.niuSeat(n);
    const out: string[] = [];
    if (z === null)
        return out;
    if (z.bet !== null)
        out.push(`bet ${z.bet}`);
    else if (z.bid !== null && t.banker === null)
        out.push(z.bid > 0 ? `bid ×${z.bid}` : "no bid");
    const shown = t.niuShown.get(n);
    if (shown !== undefined && shown.category !== "")
        out.push(niu.categoryText(shown.category));
    return out;
}

/* Niu Niu (docs/rules/niuniu.md): four cards dealt, bid for the banker (×0..max), the punters bet
 * against the banker, the fifth card, show; each punter settles with the banker (the transfers in
 * the round's result). Every window is everyone's at once: the page's seat decides once. */
function renderNiu(t: Table, center: HTMLElement, mine: HTMLElement, actions: HTMLElement): void {
    const st = t.niu;
    if (st === null)
        return;
    const phase = t.result !== null ? "Round over" : st.phase === niu.NiuPhase.BIDDING ? "Bid for the banker"
        : st.phase === niu.NiuPhase.BETTING ? "Punters bet" : st.phase === niu.NiuPhase.SHOWING ? "Show" : "";
    const banker = t.banker === null ? "" : ` · banker ${t.banker === t.mySeat ? "you" : t.seatName(t.banker)}` +
        (st.mult !== null && st.mult > 1 ? ` at ×${st.mult}` : "");
    const c = el("div", "label niu-phase", `${phase}${banker}`);
    c.dataset.phase = String(st.phase ?? 0);
    center.append(c);
    const me = t.niuSeat(t.mySeat);
    if (me === null)
        return; /* not dealt in: the next round */
    const shown = t.niuShown.get(t.mySeat);
    const own = shown?.cards ?? st.ownCards;
    mine.append(el("div", "label", shown !== undefined && shown.category !== ""
        ? `Your hand: ${niu.categoryText(shown.category)}` : "Your cards"),
                cards(own.length > 0 ? own : [null, null, null, null], "cards niu-own"));
    if (t.roundId === null || t.result !== null)
        return;
    const turn = t.myTurn() ? t.turn : null;
    const choices = niu.choices(st, t.mySeat, t.banker, t.myTurn(), turn?.min ?? null, turn?.max ?? null);
    for (const a of choices) {
        const id = a.move === niu.NiuMove.BID ? `bid-${a.amount}` : a.move === niu.NiuMove.BET ? `bet-${a.amount}` : "show";
        const text = a.move === niu.NiuMove.BID ? (a.amount ? `Bid ×${a.amount}` : "No bid")
            : a.move === niu.NiuMove.BET ? `Bet ${a.amount}` : "Show";
        actions.append(button(id, text, true, () => void act({ game: { body: niu.encodeAction(a) } })));
    }
}

function renderResult(t: Table): void {
    const box = $("result");
    const r = t.result;
    box.hidden = r === null;
    if (r === null)
        return;
    box.replaceChildren();
    box.dataset.round = r.roundId ?? "";
    box.dataset.outcome = enumName(croupier.RoundOutcome, r.outcome, "OUTCOME_");
    const delta = num((r.deltas ?? []).find((d) => d.seat === t.mySeat)?.delta);
    if (t.spectator) {
        box.append(el("h3", "", r.outcome === croupier.RoundOutcome.OUTCOME_VOIDED
            ? `Round voided (${enumName(croupier.VoidReason, r.voidReason, "VOID_")}): every stake refunded` : "Round over"));
    } else if (r.outcome === croupier.RoundOutcome.OUTCOME_VOIDED) {
        box.append(el("h3", "", `Round voided (${enumName(croupier.VoidReason, r.voidReason, "VOID_")}): every stake refunded`));
    } else {
        box.append(el("h3", delta > 0 ? "won" : delta < 0 ? "lost" : "",
            delta > 0 ? `You won ${fmt(delta)}` : delta < 0 ? `You lost ${fmt(-delta)}` : "Round over: even"));
    }
    const list = el("ul");
    for (const d of r.deltas ?? []) {
        const li = el("li", "", `${d.seat === t.mySeat ? "You" : t.seatName(d.seat ?? 0)}: ` +
            `${num(d.delta) > 0 ? "+" : ""}${fmt(num(d.delta))}`);
        if (d.shownCards && d.shownCards.length > 0)
            li.append(cards(Array.from(d.shownCards), "cards small"));
        list.append(li);
    }
    box.append(list);
    const tr = t.transfers();
    if (tr.length > 0) {
        /* a round settled pairwise (a banker game): who paid whom, the rake to the house */
        const name = (s: number) => (s === t.mySeat ? "You" : t.seatName(s));
        const tl = el("ul", "transfers");
        tl.id = "transfers";
        tl.append(...niu.transferLines(tr, name).map((line) => el("li", "", line)));
        box.append(el("div", "label", "Settled with the banker"), tl);
    }
    if (num(r.rake) > 0)
        box.append(el("div", "label", `rake ${fmt(num(r.rake))}`));
}

/* The turn timer, redrawn a few times a second. */
function tick(): void {
    const tm = $("timer");
    const t = table;
    if (t === null || t.turn === null || t.result !== null) {
        tm.textContent = "";
        tm.dataset.seat = "";
        return;
    }
    const left = Math.max(0, t.turn.deadline - Date.now());
    const who = t.turn.seat === t.mySeat ? "Your turn" : `${t.seatName(t.turn.seat)} to act`;
    tm.textContent = `${who} · ${(left / 1000).toFixed(1)} s`;
    tm.dataset.seat = String(t.turn.seat);
    tm.style.setProperty("--left", String(t.turn.totalMs > 0 ? left / t.turn.totalMs : 0));
}

/* ---- start ---------------------------------------------------------------------------- */

const params = new URLSearchParams(location.search);
$<HTMLInputElement>("token").value = params.get("token") ?? "";
$<HTMLInputElement>("gateways").value = params.get("gw") ??
    `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
if (!params.has("token")) {
    fetch("config.json").then((r) => (r.ok ? r.json() : null)).then((c: unknown) => {
        const cfg = (c ?? {}) as { token?: unknown; gateways?: unknown };
        if (typeof cfg.token === "string" && $<HTMLInputElement>("token").value === "")
            $<HTMLInputElement>("token").value = cfg.token;
        if (Array.isArray(cfg.gateways) && !params.has("gw"))
            $<HTMLInputElement>("gateways").value = cfg.gateways.join(",");
    }).catch(() => {});
}
$("login-button").onclick = () => void login();
$("leave").onclick = () => void leave();
$("tab-games").onclick = () => showTab("games");
$("tab-tournaments").onclick = () => showTab("tournaments");
$("tab-watch").onclick = () => showTab("watch");
setInterval(() => { tick(); tournaments.tick(); }, 200);
window.addEventListener("error", (e) => showError(`Page error: ${e.message}`));
window.addEventListener("unhandledrejection", (e) => showError(`Page error: ${String(e.reason)}`));
