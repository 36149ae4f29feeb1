// The browser table: log in with a token, pick a game, play it against the bots. Everything
// croupier-specific goes through the TypeScript SDK (clients/ts: the protocol, the reconnects
// and resumes, docs/protocol.md); this file is the page: what is drawn and what a click sends.
//
// Query parameters: token (fills the token field), gw (gateway WebSocket URLs, comma
// separated; default: ws(s)://<this host>/ws, the demo's server forwards it to a live gateway).
// Without a token parameter the page reads config.json beside it, if there is one ({"token",
// "gateways"}: the demo writes one, clients/web/serve.mjs --config).
import { Client, CroupierError, croupier } from "@croupier/client";

import { blackjackTotal, blackjackValue, cardElement } from "./cards.js";
import { has, num, Table } from "./table.js";

const E = croupier.Engine;
const GAMES = [
    { game: "doudizhu", label: "Dou Dizhu", engine: E.ENGINE_TRADITIONAL },
    { game: "holdem", label: "Texas Hold'em", engine: E.ENGINE_HOLDEM },
    { game: "blackjack", label: "Blackjack", engine: E.ENGINE_PERSISTENT },
    { game: "runfast", label: "Run Fast", engine: E.ENGINE_TRADITIONAL },
    { game: "bigtwo", label: "Big Two", engine: E.ENGINE_TRADITIONAL },
];
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
let leaving = false;         /* Leave asked for during a round: sent at its end */
let refreshing: Promise<void> | null = null;
const selected = new Set<number>(); /* shedding: the cards picked to play */

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
    const l = client.login;
    s.textContent = `player ${client.playerId}` +
        (l !== null && has(l, "chips") ? ` · wallet ${num(l.chips)}` : "") +
        ` · ${state} · ${client.url}`;
}

function show(section: "login" | "lobby" | "table"): void {
    for (const id of ["login", "lobby", "table"])
        $(id).hidden = id !== section;
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
    c.on("deal", (d) => { table?.onDeal(d); redraw(); });
    c.on("turn", (t) => {
        if (table === null)
            return;
        table.onTurn(t);
        if (table.myTurn() && table.engine !== E.ENGINE_PERSISTENT)
            void refresh(); /* the authoritative hand, play to beat and bets before we act */
        redraw();
    });
    c.on("play", (p) => { table?.onPlay(p); redraw(); });
    c.on("roundEnd", (e) => {
        if (table === null)
            return;
        table.onRoundEnd(e);
        const d = (e.deltas ?? []).find((x) => x.seat === table?.mySeat);
        const delta = num(d?.delta);
        const outcome = enumName(croupier.RoundOutcome, e.outcome, "OUTCOME_");
        const li = note("round", `Round ${outcome.toLowerCase()}` +
            (e.outcome === croupier.RoundOutcome.OUTCOME_COMPLETED
                ? (delta > 0 ? `: you won ${delta}` : delta < 0 ? `: you lost ${-delta}` : ": even")
                : ` (${enumName(croupier.VoidReason, e.voidReason, "VOID_")})`));
        li.dataset.round = e.roundId ?? "";
        li.dataset.outcome = outcome;
        redraw();
        if (leaving)
            void sendLeave();
        else if (table.engine === E.ENGINE_HOLDEM)
            void refresh(); /* the stacks after the settlement (the cards stay until the next hand) */
    });
    c.on("snapshot", (s) => {
        if (table === null)
            table = Table.fromSnapshot(s);
        else
            table.applySnapshot(s);
        show("table");
        redraw();
    });
    c.on("moved", (m) => {
        const to = m.to ?? {};
        note("moved", `The table moved (${enumName(croupier.ClosingReason, m.reason, "CLOSING_")}` +
            `${m.wholeTable ? ", whole table" : ""}): now desk ${to.deskId}, seat ${(to.seat ?? 0) + 1}`);
        if (table !== null && m.wholeTable) {
            table.deskId = num(to.deskId);
            table.mySeat = to.seat ?? table.mySeat;
        } else {
            table = Table.fromJoined(to);
        }
        show("table");
        redraw();
    });
    c.on("tableClosing", (t) => {
        note("closing", `The table is closing (${enumName(croupier.ClosingReason, t.reason, "CLOSING_")})` +
            (t.afterMs ? `; you will be moved within ${t.afterMs} ms` : "; join again"));
        if (!t.afterMs) {
            table = null;
            showLobby();
        }
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
        note("reconnected", `Connection resumed on ${r.url}` + (r.snapshot ? ": your seat is back" : ""));
        if (r.snapshot === null && table !== null) {
            table = null;
            showLobby();
        }
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
        if (e instanceof CroupierError && e.codeName === "NOT_SEATED") {
            table = null;
            showLobby();
        }
    }).finally(() => {
        refreshing = null;
        render();
    });
    return refreshing;
}

async function act(action: croupier.IAction): Promise<void> {
    if (client === null || busy)
        return;
    busy = true;
    render();
    try {
        await client.act(action);
        selected.clear();
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
    const stake = Number($<HTMLInputElement>("stake").value) || 10;
    busy = true;
    try {
        const r = await client.join(engine, game, stake);
        if (r.joined)
            table = Table.fromJoined(r.joined);
        else if (r.snapshot)
            table = Table.fromSnapshot(r.snapshot);
        else
            throw new Error("the join was answered without a seat");
        note("info", `Seated at ${game}, desk ${table.deskId}, seat ${table.mySeat + 1}`);
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
    table = null;
    showLobby();
}

function showLobby(): void {
    leaving = false;
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

/* ---- drawing -------------------------------------------------------------------------- */

function cards(list: (number | null)[], cls = "cards"): HTMLElement {
    const box = el("div", cls);
    for (const c of list)
        box.append(cardElement(c));
    return box;
}

function button(move: string, label: string, enabled: boolean, onclick: () => void): HTMLButtonElement {
    const b = el("button", "action", label) as HTMLButtonElement;
    b.type = "button";
    b.dataset.move = move;
    b.disabled = !enabled || busy || refreshing !== null;
    b.onclick = onclick;
    return b;
}

function amountInput(value: number, min: number, max: number): HTMLInputElement {
    const i = el("input", "amount") as HTMLInputElement;
    i.type = "number";
    i.min = String(min);
    i.max = String(max);
    i.value = String(value);
    return i;
}

function render(): void {
    if (table === null)
        return;
    const t = table;
    const sec = $("table");
    sec.dataset.engine = enumName(E, t.engine);
    sec.dataset.round = t.roundId ?? "";
    sec.dataset.desk = String(t.deskId);
    const label = GAMES.find((g) => g.game === t.game)?.label ?? t.game;
    $("table-title").textContent = `${label} · stake ${t.stake} · desk ${t.deskId}`;
    renderSeats(t);
    const center = $("center"), mine = $("mine"), actions = $("actions");
    center.replaceChildren();
    mine.replaceChildren();
    actions.replaceChildren();
    if (t.engine === E.ENGINE_TRADITIONAL)
        renderShedding(t, center, mine, actions);
    else if (t.engine === E.ENGINE_HOLDEM)
        renderHoldem(t, center, mine, actions);
    else if (t.engine === E.ENGINE_PERSISTENT)
        renderBlackjack(t, center, mine, actions);
    actions.dataset.mine = String(t.myTurn());
    actions.dataset.ready = String(t.myTurn() && !busy && refreshing === null);
    $<HTMLButtonElement>("leave").disabled = leaving;
    $("leave").textContent = leaving ? "Leaving after this round" : "Leave table";
    renderResult(t);
    const plays = $("plays");
    plays.replaceChildren(...t.plays.slice(-12).reverse().map((p) => el("li", "", p)));
    tick();
}

function renderSeats(t: Table): void {
    const box = $("seats");
    box.replaceChildren();
    for (const n of t.seatNumbers()) {
        const d = el("div", "seat");
        d.dataset.seat = String(n);
        if (n === t.mySeat)
            d.classList.add("me");
        if (t.turn?.seat === n && t.result === null)
            d.classList.add("to-act");
        d.append(el("b", "", n === t.mySeat ? "You" : t.seatName(n)));
        const info: string[] = [];
        if (t.engine === E.ENGINE_TRADITIONAL) {
            if (t.declarer === n)
                info.push("landlord");
            if (t.cardsLeft.has(n))
                info.push(`${t.cardsLeft.get(n)} cards`);
        } else if (t.engine === E.ENGINE_HOLDEM) {
            const p = t.players.get(n);
            if (t.button === n)
                info.push("button");
            if (p !== undefined) {
                info.push(`stack ${p.stack}`);
                if (p.bet > 0)
                    info.push(`bet ${p.bet}`);
                if (p.folded)
                    info.push("folded");
                if (p.allIn)
                    info.push("all in");
            }
        } else if (t.engine === E.ENGINE_PERSISTENT && n !== t.mySeat) {
            for (const h of t.hands.filter((x) => x.seat === n))
                d.append(cards(h.cards, "cards small"));
        }
        if (info.length > 0)
            d.append(el("span", "info", info.join(" · ")));
        box.append(d);
    }
}

function renderShedding(t: Table, center: HTMLElement, mine: HTMLElement, actions: HTMLElement): void {
    const bidding = t.phase === croupier.SheddingPhase.SHEDDING_BIDDING;
    const leading = t.lastPlay.length === 0 || t.lastPlaySeat === t.mySeat;
    if (t.lastPlay.length > 0 && t.lastPlaySeat !== null) {
        center.append(el("div", "label", `To beat (${t.lastPlaySeat === t.mySeat ? "yours" : t.seatName(t.lastPlaySeat)}):`),
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
    for (const c of t.hand) {
        const ce = cardElement(c);
        ce.classList.add("pick");
        if (selected.has(c))
            ce.classList.add("selected");
        ce.onclick = () => {
            if (selected.has(c))
                selected.delete(c);
            else
                selected.add(c);
            render();
        };
        hand.append(ce);
    }
    mine.append(hand);
    const my = t.myTurn();
    if (bidding) {
        actions.append(button("bid-0", "No bid", my, () => void act({ shedding:
            { move: croupier.SheddingMove.SHEDDING_BID, bid: 0 } })));
        for (const b of [1, 2, 3])
            actions.append(button(`bid-${b}`, `Bid ${b}`, my && b > t.bid, () => void act({ shedding:
                { move: croupier.SheddingMove.SHEDDING_BID, bid: b } })));
        return;
    }
    actions.append(button("play", selected.size > 0 ? `Play ${selected.size}` : "Play", my && selected.size > 0,
        () => void act({ shedding: { move: croupier.SheddingMove.SHEDDING_PLAY,
                                     cards: Uint8Array.from(t.hand.filter((c) => selected.has(c))) } })));
    actions.append(button("pass", "Pass", my && !leading,
        () => void act({ shedding: { move: croupier.SheddingMove.SHEDDING_PASS } })));
}

function renderHoldem(t: Table, center: HTMLElement, mine: HTMLElement, actions: HTMLElement): void {
    center.append(el("div", "label", `Board · pot ${t.pot}`), cards(t.board, "cards board"));
    mine.append(el("div", "label", "Your cards"), cards(t.hole.length > 0 ? t.hole : [], "cards hole"));
    const my = t.myTurn();
    const turn = t.turn;
    const toCall = my && turn !== null ? turn.toCall ?? 0 : 0;
    const H = croupier.HoldemMove;
    actions.append(button("fold", "Fold", my && toCall > 0, () => void act({ holdem: { move: H.HOLDEM_FOLD } })));
    actions.append(button("check", "Check", my && toCall === 0, () => void act({ holdem: { move: H.HOLDEM_CHECK } })));
    actions.append(button("call", toCall > 0 ? `Call ${toCall}` : "Call", my && toCall > 0,
        () => void act({ holdem: { move: H.HOLDEM_CALL } })));
    const min = turn?.min ?? null, max = turn?.max ?? null;
    if (my && min !== null && max !== null && min <= max) {
        /* a bet opens the street, a raise answers one (docs/rules/holdem.md) */
        const opened = [...t.players.values()].some((p) => p.bet > 0);
        const input = amountInput(min, min, max);
        actions.append(input);
        actions.append(button(opened ? "raise" : "bet", opened ? "Raise to" : "Bet", true, () =>
            void act({ holdem: { move: opened ? H.HOLDEM_RAISE : H.HOLDEM_BET, amount: Number(input.value) } })));
    }
}

function renderBlackjack(t: Table, center: HTMLElement, mine: HTMLElement, actions: HTMLElement): void {
    const up = t.dealer.filter((c): c is number => c !== null);
    center.append(el("div", "label", `Dealer${up.length > 0 ? ` · ${blackjackTotal(up).total}` : ""}`),
                  cards(t.dealer, "cards dealer"));
    const own = t.hands.filter((h) => h.seat === t.mySeat);
    for (const h of own) {
        const v = blackjackTotal(h.cards);
        const box = el("div", "bj-hand");
        box.dataset.hand = String(h.hand);
        box.append(el("div", "label", `Hand ${h.hand + 1} · bet ${h.bet}${h.doubled ? " (doubled)" : ""}` +
            (h.cards.length > 0 ? ` · ${v.soft ? "soft " : ""}${v.total}` : "")), cards(h.cards));
        mine.append(box);
    }
    const turn = t.myTurn() ? t.turn : null;
    const B = croupier.BlackjackMove;
    if (turn !== null && turn.hand === null && turn.min !== null) {
        const max = turn.max ?? turn.min;
        const input = amountInput(turn.min, turn.min, max);
        actions.append(input, button("bet", "Bet", true, () =>
            void act({ blackjack: { move: B.BJ_BET, amount: Number(input.value) } })));
        return;
    }
    if (turn !== null && turn.hand === null && turn.toCall !== null) {
        actions.append(button("insure", `Insurance (${turn.toCall})`, true,
            () => void act({ blackjack: { move: B.BJ_INSURANCE, insure: true } })));
        actions.append(button("no-insurance", "No insurance", true,
            () => void act({ blackjack: { move: B.BJ_INSURANCE, insure: false } })));
        return;
    }
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
    if (r.outcome === croupier.RoundOutcome.OUTCOME_VOIDED) {
        box.append(el("h3", "", `Round voided (${enumName(croupier.VoidReason, r.voidReason, "VOID_")}): every stake refunded`));
    } else {
        box.append(el("h3", delta > 0 ? "won" : delta < 0 ? "lost" : "",
            delta > 0 ? `You won ${delta}` : delta < 0 ? `You lost ${-delta}` : "Round over: even"));
    }
    const list = el("ul");
    for (const d of r.deltas ?? []) {
        const li = el("li", "", `${d.seat === t.mySeat ? "You" : t.seatName(d.seat ?? 0)}: ` +
            `${num(d.delta) > 0 ? "+" : ""}${num(d.delta)}`);
        if (d.shownCards && d.shownCards.length > 0)
            li.append(cards(Array.from(d.shownCards), "cards small"));
        list.append(li);
    }
    box.append(list);
    if (num(r.rake) > 0)
        box.append(el("div", "label", `rake ${num(r.rake)}`));
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
setInterval(tick, 200);
window.addEventListener("error", (e) => showError(`Page error: ${e.message}`));
window.addEventListener("unhandledrejection", (e) => showError(`Page error: ${String(e.reason)}`));
