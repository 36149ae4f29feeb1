// The lobby's "Tournaments" tab (docs/protocol.md "Tournaments"): the list, one tournament's
// detail with Register / Unregister, redrawn on the SDK's tournamentEvent pushes (and on
// tournamentInfo after a reconnect). Everything goes through the SDK (clients/ts); the pure parts
// (texts, payouts, the refusals' sentences) are exported for test/units.test.ts.
import { Client, CroupierError, croupier } from "@croupier/client";

import { has, num } from "./table.js";

const S = croupier.TournamentStatus;
const ES = croupier.TournamentEntryState;
const K = croupier.TournamentEventKind;
const C = croupier.ErrorCode;

const fmt = (n: number): string => n.toLocaleString("en-US");

export function formatText(f: croupier.TournamentFormat | null | undefined): string {
    return f === croupier.TournamentFormat.TOUR_SNG ? "Sit & go"
        : f === croupier.TournamentFormat.TOUR_MTT ? "Multi-table"
            : f === croupier.TournamentFormat.TOUR_MATCH ? "Match hall" : "?";
}

/** A match's current stage: "打立出局 (stage 1 of 2) · base 12, out below 240";
 * "定局积分 (stage 2 of 2) · round 1, 2 deals a round"; "" when none is shown. */
export function stageText(m: croupier.IMatchStage | null | undefined): string {
    if (m === null || m === undefined)
        return "";
    const name = m.format === "rising" ? "打立出局" : m.format === "fixed" ? "定局积分" : "瑞士移位";
    let s = `${name} (stage ${num(m.stage) + 1} of ${num(m.stages)})`;
    if (m.format === "rising")
        s += ` · base ${fmt(num(m.baseScore))}, out below ${fmt(num(m.line))}`;
    else
        s += ` · round ${num(m.round)}` + (num(m.rounds) > 0 ? ` of ${num(m.rounds)}` : "") +
            `, ${num(m.dealsPerRound)} deal${num(m.dealsPerRound) === 1 ? "" : "s"} a round`;
    return s;
}

export function statusText(s: croupier.TournamentStatus | null | undefined): string {
    switch (s) {
    case S.TOUR_REGISTERING: return "Registering";
    case S.TOUR_RUNNING: return "Running";
    case S.TOUR_FINISHED: return "Finished";
    case S.TOUR_CANCELLED: return "Cancelled";
    default: return "?";
    }
}

export function entryText(s: croupier.TournamentEntryState | null | undefined): string {
    switch (s) {
    case ES.TOUR_ENTRY_REGISTERED: return "Registered";
    case ES.TOUR_ENTRY_PLAYING: return "Playing";
    case ES.TOUR_ENTRY_WAITING: return "Waiting for a seat";
    case ES.TOUR_ENTRY_BUSTED: return "Busted (placed at the end of this hand-for-hand round)";
    case ES.TOUR_ENTRY_OUT: return "Out";
    case ES.TOUR_ENTRY_CANCELLED: return "Cancelled (your share paid)";
    case ES.TOUR_ENTRY_REFUNDED: return "Refunded";
    case ES.TOUR_ENTRY_WON: return "Won";
    default: return "?";
    }
}

/** 1st, 2nd, 3rd, 4th ... 11th, 12th, 13th, 21st. */
export function ordinal(n: number): string {
    const t = n % 100;
    const s = t >= 11 && t <= 13 ? "th" : n % 10 === 1 ? "st" : n % 10 === 2 ? "nd" : n % 10 === 3 ? "rd" : "th";
    return `${n}${s}`;
}

/** A payout row: "1st: 600", "4th–6th: 50 each". */
export function payoutText(p: croupier.ITournamentPayout): string {
    const from = p.placeFrom ?? 0, to = p.placeTo ?? from;
    return from === to ? `${ordinal(from)}: ${fmt(num(p.amount))}`
        : `${ordinal(from)}–${ordinal(to)}: ${fmt(num(p.amount))} each`;
}

/** An item prize row: "1st: trophy:gold" (docs/tournaments.md "Items": the studio's string,
 * shown as it is). */
export function itemPrizeText(p: croupier.ITournamentItemPrize): string {
    return `${ordinal(p.place ?? 0)}: ${p.item ?? ""}`;
}

/** A duration as m:ss (h:mm:ss from an hour). */
export function clockText(ms: number): string {
    const s = Math.max(0, Math.ceil(ms / 1000));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    const two = (v: number) => String(v).padStart(2, "0");
    return h > 0 ? `${h}:${two(m)}:${two(r)}` : `${m}:${two(r)}`;
}

/** The buy-in as the lobby writes it: "100 + 10" (buy-in into the pool + the house's fee). */
export function buyInText(t: { buyIn?: number | null; fee?: number | null }): string {
    return `${fmt(num(t.buyIn))} + ${fmt(num(t.fee))}`;
}

/** When it starts: the time play started or an MTT starts; a sit & go not started: when full. */
export function startText(t: croupier.ITournamentSummary | croupier.ITournamentInfo): string {
    if (has(t, "startAtUnixMs") && num(t.startAtUnixMs) > 0)
        return new Date(num(t.startAtUnixMs)).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" });
    return t.format === croupier.TournamentFormat.TOUR_SNG ? "When full" : "—";
}

/** The level in force: "Level 3 · 50/100, ante 10", "Break after level 4"; "" before the start. */
export function levelText(t: croupier.ITournamentInfo): string {
    if (!has(t, "levelNumber"))
        return "";
    if (t.onBreak)
        return `Break after level ${t.levelNumber}`;
    let s = `Level ${t.levelNumber} · blinds ${fmt(num(t.smallBlind))}/${fmt(num(t.bigBlind))}`;
    if (num(t.ante) > 0)
        s += t.bigBlindAnte ? `, big blind ante ${fmt(num(t.ante))}` : `, ante ${fmt(num(t.ante))}`;
    return s;
}

/** The sentence a refused tournament request shows (docs/protocol.md "Tournaments"). */
export function refusalText(e: unknown, what: "register" | "unregister" | "read",
                            t?: { buyIn?: number | null; fee?: number | null }): string {
    if (!(e instanceof CroupierError))
        return `${what === "read" ? "Could not read the tournament" : `Could not ${what}`}: ${e instanceof Error ? e.message : String(e)}`;
    switch (e.code) {
    case C.ALREADY_REGISTERED: return "You are already registered in this tournament (or your entry is still in play).";
    case C.NOT_REGISTERED: return "You are not registered in this tournament.";
    case C.TOURNAMENT_FULL: return "The tournament is full: every entry is taken.";
    case C.REGISTRATION_CLOSED:
        return what === "unregister" ? "Too late to unregister: the tournament has started."
            : "Registration is closed: the tournament has started.";
    case C.INSUFFICIENT_FUNDS:
        return `Your wallet does not cover the buy-in and fee${t ? ` (${buyInText(t)})` : ""}. Nothing was taken.`;
    case C.NO_REENTRY: return "No re-entry: this tournament has none, or you have used yours.";
    case C.TOURNAMENT_OVER: return "The tournament is over.";
    case C.NO_SUCH_TOURNAMENT: return "There is no such tournament.";
    case C.UNAVAILABLE: case C.DEADLINE_EXCEEDED:
        return "The tournament director did not answer in time. Try again: a request that went through is applied once.";
    default: return `Refused: ${e.message}`;
    }
}

/** A pushed event as a note: "Tournament Daily SNG: started with 9 players". */
export function eventText(ev: croupier.ITournamentEvent, name: string, me: number): string {
    const mine = num(ev.player) === me;
    switch (ev.kind) {
    case K.TOUR_EVENT_STARTED: return `${name} started with ${ev.playersLeft} players`;
    case K.TOUR_EVENT_LEVEL_UP:
        return ev.onBreak ? `${name}: break after level ${ev.levelNumber}`
            : `${name}: level ${ev.levelNumber}, blinds ${fmt(num(ev.smallBlind))}/${fmt(num(ev.bigBlind))}`;
    case K.TOUR_EVENT_HAND_FOR_HAND:
        return ev.handForHand ? `${name}: hand-for-hand (${ev.playersLeft} players left)` : `${name}: hand-for-hand is over`;
    case K.TOUR_EVENT_MOVED_TABLE:
        return `${name}: ${mine ? "you are" : `player ${num(ev.player)} is`} now at table ${ev.table}, seat ${(ev.seat ?? 0) + 1}`;
    case K.TOUR_EVENT_ELIMINATED:
        return `${name}: ${mine ? "you are" : `player ${num(ev.player)} is`} out in ${ordinal(ev.place ?? 0)} place` +
            (num(ev.prize) > 0 ? `, prize ${fmt(num(ev.prize))}` : "") + (ev.item ? `, item ${ev.item}` : "");
    case K.TOUR_EVENT_FINISHED:
        return `${name} is over: ${mine ? "you win" : `player ${num(ev.player)} wins`}` +
            (num(ev.prize) > 0 ? ` ${fmt(num(ev.prize))}` : "") + (ev.item ? ` and ${ev.item}` : "");
    case K.TOUR_EVENT_CANCELLED: return `${name} was cancelled${ev.detail ? ` (${ev.detail})` : ""}`;
    default: return `${name}: an event`;
    }
}

/** What the page lends the tab: its client, notes and element maker. */
export interface LobbyHost {
    client(): Client | null;
    /** "Take my seat": the page follows the person's seat in that tournament (the table view). */
    playTournament(id: number, name: string): void;
    note(kind: string, text: string): HTMLElement;
    el(tag: string, cls?: string, text?: string): HTMLElement;
}

const $ = (id: string) => document.getElementById(id) as HTMLElement;

/* The tab's state: the list last read, the tournament shown (0: the list), its info, when its
 * level ends (local clock), whether a request is on its way. */
export class TournamentTab {
    private list: croupier.ITournamentSummary[] = [];
    private shown = 0;
    private info: croupier.ITournamentInfo | null = null;
    private levelEndsAt = 0;
    private busy = false;
    private reading: Promise<void> | null = null;

    constructor(private readonly host: LobbyHost) {
        $("tour-back").onclick = () => this.showList();
        $("tour-refresh").onclick = () => void this.refreshList();
        $("tour-register").onclick = () => void this.register(true);
        $("tour-unregister").onclick = () => void this.register(false);
        $("tour-seat").onclick = () => {
            const id = this.shown;
            if (id !== 0)
                this.host.playTournament(id, this.info?.name ?? `Tournament ${id}`);
        };
    }

    /** The tab is opened: the list read again (and the tournament shown, if one is). */
    open(): void {
        void this.refreshList();
        if (this.shown !== 0)
            void this.refreshDetail();
    }

    visible(): boolean {
        return !$("tournaments-pane").hidden && !$("lobby").hidden;
    }

    /** A push: a note, and what the tab shows read again. */
    onEvent(ev: croupier.ITournamentEvent): void {
        const id = num(ev.tournament);
        const name = this.nameOf(id);
        const c = this.host.client();
        this.host.note("tournament", eventText(ev, name, c?.playerId ?? 0)).dataset.kind = K[ev.kind ?? 0] ?? "";
        if (!this.visible())
            return;
        void this.refreshList();
        if (id === this.shown)
            void this.refreshDetail();
    }

    /** A followed tournament's state after a reconnect. */
    onInfo(info: croupier.ITournamentInfo): void {
        if (num(info.id) === this.shown) {
            this.setInfo(info);
            this.renderDetail();
        }
    }

    private nameOf(id: number): string {
        if (this.info !== null && num(this.info.id) === id)
            return this.info.name ?? `Tournament ${id}`;
        return this.list.find((t) => num(t.id) === id)?.name ?? `Tournament ${id}`;
    }

    async refreshList(): Promise<void> {
        const c = this.host.client();
        if (c === null)
            return;
        try {
            const r = await c.listTournaments({ limit: 50 });
            this.list = r.tournaments;
            $("tour-list-error").hidden = true;
        } catch (e) {
            const box = $("tour-list-error");
            box.textContent = refusalText(e, "read");
            box.hidden = false;
        }
        this.renderList();
    }

    private renderList(): void {
        const body = $("tour-rows");
        body.replaceChildren();
        const el = this.host.el;
        for (const t of this.list) {
            const tr = el("tr", "tour-row");
            tr.dataset.id = String(num(t.id));
            tr.dataset.status = statusText(t.status).toLowerCase();
            tr.tabIndex = 0;
            const cell = (label: string, text: string, cls = "") => {
                const td = el("td", cls, text);
                td.dataset.label = label;
                tr.append(td);
            };
            cell("Name", t.name ?? "", "tour-name");
            cell("Format", formatText(t.format));
            cell("Status", statusText(t.status), "tour-status");
            cell("Buy-in", buyInText(t));
            cell("Entrants", `${num(t.entrants)}/${num(t.maxEntrants)}`);
            cell("Starts", startText(t));
            cell("Prize pool", fmt(num(t.prizePool)));
            tr.onclick = () => void this.showDetail(num(t.id));
            tr.onkeydown = (e) => { if (e.key === "Enter") void this.showDetail(num(t.id)); };
            body.append(tr);
        }
        $("tour-empty").hidden = this.list.length > 0;
        $("tour-table").hidden = this.list.length === 0;
    }

    private showList(): void {
        this.shown = 0;
        this.info = null;
        $("tour-detail").hidden = true;
        $("tour-list-box").hidden = false;
        void this.refreshList();
    }

    async showDetail(id: number): Promise<void> {
        this.shown = id;
        this.info = null;
        this.message("", "");
        $("tour-list-box").hidden = true;
        $("tour-detail").hidden = false;
        $("tour-info").replaceChildren(this.host.el("p", "hint", "Reading the tournament…"));
        this.renderButtons();
        await this.refreshDetail();
    }

    /* One GetTournament at a time; a push arriving meanwhile reads once more after it. */
    refreshDetail(): Promise<void> {
        if (this.reading !== null)
            return this.reading.then(() => this.refreshDetail());
        this.reading = this.readDetail().finally(() => (this.reading = null));
        return this.reading;
    }

    private async readDetail(): Promise<void> {
        const c = this.host.client(), id = this.shown;
        if (c === null || id === 0)
            return;
        try {
            const info = await c.getTournament(id);
            if (id !== this.shown)
                return;
            this.setInfo(info);
        } catch (e) {
            if (id === this.shown)
                this.message(refusalText(e, "read"), "error");
        }
        this.renderDetail();
    }

    private setInfo(info: croupier.ITournamentInfo): void {
        this.info = info;
        this.levelEndsAt = has(info, "levelEndsInMs") ? Date.now() + num(info.levelEndsInMs) : 0;
    }

    private message(text: string, kind: "" | "ok" | "error", code = ""): void {
        const m = $("tour-message");
        m.textContent = text;
        m.className = kind;
        m.dataset.code = code;
        m.hidden = text === "";
    }

    private async register(on: boolean): Promise<void> {
        const c = this.host.client(), id = this.shown, t = this.info;
        if (c === null || id === 0 || this.busy)
            return;
        this.busy = true;
        this.renderButtons();
        const name = t?.name ?? `Tournament ${id}`;
        try {
            if (on)
                await c.registerTournament(id);
            else
                await c.unregisterTournament(id);
            const text = on ? `You are registered in ${name}: ${t ? buyInText(t) : "the buy-in"} taken from your wallet.`
                : `You are no longer registered in ${name}: buy-in and fee back in your wallet.`;
            this.message(text, "ok");
            this.host.note("info", text);
        } catch (e) {
            const text = refusalText(e, on ? "register" : "unregister", t ?? undefined);
            this.message(text, "error", e instanceof CroupierError ? e.codeName : "");
            this.host.note("refusal", `${on ? "Registration" : "Unregistration"} refused (${name}): ${text}`);
        } finally {
            this.busy = false;
        }
        await this.refreshDetail();
    }

    private renderButtons(): void {
        const t = this.info;
        const reg = $("tour-register") as HTMLButtonElement, unreg = $("tour-unregister") as HTMLButtonElement;
        const you = t?.you ?? null;
        const inPlay = you !== null && [ES.TOUR_ENTRY_REGISTERED, ES.TOUR_ENTRY_PLAYING, ES.TOUR_ENTRY_WAITING,
                                        ES.TOUR_ENTRY_BUSTED].includes(you.state ?? 0);
        /* Register (or re-enter) while registration is open and no entry of yours is in play. */
        reg.disabled = this.busy || t === null || !t.registrationOpen || inPlay;
        reg.textContent = you !== null && you.state === ES.TOUR_ENTRY_OUT ? "Re-enter" : "Register";
        unreg.disabled = this.busy || t === null || t.status !== S.TOUR_REGISTERING ||
            you?.state !== ES.TOUR_ENTRY_REGISTERED;
        /* Take my seat while the entry is in play at a table or waiting for one */
        ($("tour-seat") as HTMLButtonElement).disabled = this.busy || t === null ||
            t.status !== S.TOUR_RUNNING || you === null ||
            (you.state !== ES.TOUR_ENTRY_PLAYING && you.state !== ES.TOUR_ENTRY_WAITING);
    }

    private renderDetail(): void {
        this.renderButtons();
        const t = this.info;
        if (t === null)
            return;
        const el = this.host.el;
        const box = $("tour-info");
        box.replaceChildren();
        const head = el("h3", "", t.name ?? "");
        head.id = "tour-title";
        box.append(head);
        const dl = el("dl", "tour-facts");
        const fact = (key: string, label: string, value: string) => {
            const d = el("div", "fact");
            d.dataset.fact = key;
            d.append(el("dt", "", label), el("dd", "", value));
            dl.append(d);
        };
        fact("format", "Format", formatText(t.format) +
            (t.format === croupier.TournamentFormat.TOUR_MATCH && t.game ? ` · ${t.game}` : ""));
        fact("status", "Status", statusText(t.status) + (t.registrationOpen ? " · registration open" : ""));
        fact("buy-in", "Buy-in", buyInText(t));
        fact("entrants", "Entrants", `${num(t.entries)}/${num(t.maxEntrants)}` +
            (num(t.minEntrants) > 0 ? ` (at least ${num(t.minEntrants)})` : ""));
        fact("start", t.status === S.TOUR_REGISTERING ? "Starts" : "Started", startText(t));
        fact("pool", "Prize pool", fmt(num(t.prizePool)));
        if (t.format === croupier.TournamentFormat.TOUR_MATCH) {
            if (t.match)
                fact("stage", "Stage", stageText(t.match));
        } else {
            fact("stack", "Starting stack", fmt(num(t.startingStack)));
        }
        if (has(t, "levelNumber")) {
            fact("level", "Level", levelText(t));
            fact("next-level", "Next level in", this.levelEndsAt > 0 ? clockText(this.levelEndsAt - Date.now()) : "last level");
        }
        if (t.status === S.TOUR_RUNNING || t.status === S.TOUR_FINISHED) {
            fact("players-left", "Players left", fmt(num(t.playersLeft)));
            if (has(t, "averageStack"))
                fact("average", "Average stack", fmt(num(t.averageStack)));
        }
        if (num(t.lateRegistrationLevels) > 0)
            fact("late", "Late registration", `until the end of level ${t.lateRegistrationLevels}`);
        if (t.detail)
            fact("detail", "Cancelled", t.detail);
        box.append(dl);

        const you = el("div", "tour-you");
        you.id = "tour-you";
        if (t.you) {
            const y = t.you;
            let s = `Your entry: ${entryText(y.state)}`;
            if (has(y, "score"))
                s += ` · score ${fmt(num(y.score))}` +
                    (has(y, "matchPoints") ? ` · ${num(y.matchPoints)} match points` : "");
            else if (has(y, "stack") && (y.state === ES.TOUR_ENTRY_PLAYING || y.state === ES.TOUR_ENTRY_WAITING))
                s += ` · stack ${fmt(num(y.stack))}`;
            if (has(y, "table") && y.state === ES.TOUR_ENTRY_PLAYING)
                s += ` · table ${y.table}, seat ${(y.seat ?? 0) + 1}`;
            if (num(y.place) > 0)
                s += ` · ${ordinal(num(y.place))} place`;
            if (num(y.prize) > 0)
                s += ` · ${y.state === ES.TOUR_ENTRY_REFUNDED ? "refund" : "prize"} ${fmt(num(y.prize))}`;
            if (y.item)
                s += ` · item ${y.item}`;
            if (num(y.entries) > 1)
                s += ` · ${y.entries} entries`;
            you.textContent = s;
            you.dataset.state = entryText(y.state).split(" ")[0].toLowerCase();
        } else {
            you.textContent = "You have no entry in this tournament.";
            you.dataset.state = "none";
        }
        box.append(you);

        const pays = t.payouts ?? [];
        if (pays.length > 0) {
            box.append(el("h4", "", "Payouts"));
            const ol = el("ul", "tour-payouts");
            for (const p of pays)
                ol.append(el("li", "", payoutText(p)));
            box.append(ol);
        }
        const items = t.itemPrizes ?? [];
        if (items.length > 0) {
            box.append(el("h4", "", "Item prizes"));
            const ul = el("ul", "tour-items");
            for (const p of items)
                ul.append(el("li", "", itemPrizeText(p)));
            box.append(ul);
        }
    }

    /** The tournament shown with a message: where the page comes back to when the person's
     * tournament is over (his place and prize). */
    async showResult(id: number, text: string, kind: "ok" | "error"): Promise<void> {
        await this.showDetail(id);
        this.message(text, kind);
    }

    /** A tournament's state read for the table view (the level, the person's table number);
     * null when it cannot be read now. */
    async infoOf(id: number): Promise<croupier.ITournamentInfo | null> {
        const c = this.host.client();
        if (c === null)
            return null;
        try {
            return await c.getTournament(id);
        } catch {
            return null;
        }
    }

    /** The countdown to the next level, from the tick of the page. */
    tick(): void {
        if (this.info === null || this.levelEndsAt === 0 || $("tour-detail").hidden)
            return;
        const left = this.levelEndsAt - Date.now();
        const dd = document.querySelector("#tour-info [data-fact=\"next-level\"] dd");
        if (dd !== null)
            dd.textContent = clockText(left);
        if (left < -2000 && this.reading === null) {
            this.levelEndsAt = 0; /* read once: the level in force now (the push may be on its way) */
            void this.refreshDetail();
        }
    }
}
