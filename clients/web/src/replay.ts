// The replay viewer (docs/replays.md): a finished round's `Replay`, opened by share code or, for
// a player, by a round he played ("Replay" and "Share" in the round's note), stepped through event by event: forward, back, auto-play, start and end. What a step
// shows is computed from the events alone (replayState, pure, tested in test/units.test.ts):
// the cards the replay gives face up, the others as backs (their count), each seat's last
// action, the table's cards (the board, the dealer's, the bottom), and at the end the results.
import { Client, CroupierError, croupier, decodeCard } from "@croupier/client";

import { cardElement, cardsText } from "./cards.js";
import { has, num } from "./table.js";

const K = croupier.ReplayEventKind;
const fmt = (n: number): string => n.toLocaleString("en-US");

export interface ReplaySeatState {
    seat: number;
    name: string;          /* "You", "Player 91001", "Bot 2" */
    stack: number;         /* chips at the round's start */
    cards: number[];       /* the cards it holds that the replay shows face up */
    hidden: number;        /* the cards it holds that the viewer may not see */
    played: number[];      /* the cards of its last play (the shedding games) */
    action: string;        /* its last action, as text */
    delta: number | null;  /* the round's result, once the replay is at its end */
}

export interface ReplayState {
    step: number;          /* events applied, 0..total */
    total: number;
    seats: ReplaySeatState[];
    table: number[];       /* the table's cards (seat absent): the board, the dealer's, the bottom */
    tableHidden: number;
    text: string;          /* the last event applied, in words ("" at the start) */
    log: string[];         /* every event applied, in words, oldest first */
    ended: boolean;
    result: string[];      /* at the end: the outcome, then a line per seat, the rake */
}

/* The kit's card text ("3d", "Th", "Xb", docs/hand-history.md) to card codes, from the SDK's own
 * decoder (its `short`). */
let SHORT: Map<string, number> | null = null;
function shortCode(s: string): number | null {
    if (SHORT === null) {
        SHORT = new Map();
        for (let c = 0; c < 64; c++) {
            try {
                SHORT.set(decodeCard(c).short, c);
            } catch {
                /* no card */
            }
        }
    }
    return SHORT.get(s) ?? null;
}

/** An action of the record ("play 3d4d", "bid", "landlord XbXr2s") as its verb and its cards;
 * cards null when the text carries none (or is not cards). */
export function parseAction(action: string): { verb: string; cards: number[] | null } {
    const sp = action.indexOf(" ");
    if (sp < 0)
        return { verb: action, cards: null };
    const verb = action.slice(0, sp), rest = action.slice(sp + 1).replace(/\s+/g, "");
    if (rest.length === 0 || rest.length % 2 !== 0)
        return { verb: action, cards: null };
    const cards: number[] = [];
    for (let i = 0; i < rest.length; i += 2) {
        const c = shortCode(rest.slice(i, i + 2));
        if (c === null)
            return { verb: action, cards: null };
        cards.push(c);
    }
    return { verb, cards };
}

export function seatName(r: croupier.IReplay, seat: number): string {
    if (has(r, "yourSeat") && r.yourSeat === seat)
        return "You";
    const s = (r.seats ?? []).find((x) => x.seat === seat);
    if (s === undefined)
        return `Seat ${seat + 1}`;
    return s.bot ? `Bot ${seat + 1}` : `Player ${num(s.playerId)}`;
}

/** The table's cards in words: the board (hold'em), the dealer's (blackjack), the bottom (the
 * shedding games). */
export function tableLabel(game: string): string {
    return game === "holdem" ? "Board" : game === "blackjack" ? "Dealer" : "Table";
}

/* One action in words: "Player 91001: call 10", "Bot 2: play 3♦ 4♦", "Table: level 5". */
function actionText(r: croupier.IReplay, e: croupier.IReplayEvent, who: string): string {
    const action = e.action ?? "";
    const amount = num(e.amount);
    const { verb, cards } = parseAction(action);
    if (cards !== null) {
        if (verb === "give")
            return `${who}: gives ${cardsText(cards)} to ${seatName(r, amount)}`;
        if (verb === "landlord")
            return `${who}: takes the bottom cards ${cardsText(cards)}`;
        return `${who}: ${verb} ${cardsText(cards)}`;
    }
    if (verb === "bid")
        return `${who}: ${amount > 0 ? `bid ${amount}` : "no bid"}`;
    if (verb === "banker")
        return `${who}: banker${amount > 1 ? ` at ×${amount}` : ""}`;
    if (r.game === "blackjack" && (verb === "hit" || verb === "stand"))
        return `${who}: ${verb}`; /* its amount is the hand's bet (docs/hand-history.md) */
    return `${who}: ${verb.replace(/_/g, " ")}${amount !== 0 ? ` ${fmt(amount)}` : ""}`;
}

/* Takes cards out of a hand (one copy each: a two-deck game holds twins); how many of them were
 * not among its face-up cards (they were face down to the viewer). */
function take(hand: number[], cards: number[]): number {
    let missing = 0;
    for (const c of cards) {
        const i = hand.indexOf(c);
        if (i >= 0)
            hand.splice(i, 1);
        else
            missing++;
    }
    return missing;
}

/** What the replay shows after its first `step` events (clamped to 0..events): a pure function
 * of the Replay, so a step back is the state computed again. */
export function replayState(r: croupier.IReplay, step: number): ReplayState {
    const events = r.events ?? [];
    const total = events.length;
    const at = Math.max(0, Math.min(total, Math.floor(step)));
    const seats = new Map<number, ReplaySeatState>();
    const seatOf = (n: number): ReplaySeatState => {
        let s = seats.get(n);
        if (s === undefined) {
            const info = (r.seats ?? []).find((x) => x.seat === n);
            s = { seat: n, name: seatName(r, n), stack: num(info?.stack), cards: [], hidden: 0, played: [],
                  action: "", delta: null };
            seats.set(n, s);
        }
        return s;
    };
    for (const s of r.seats ?? [])
        seatOf(s.seat ?? 0);
    const st: ReplayState = { step: at, total, seats: [], table: [], tableHidden: 0, text: "", log: [],
                              ended: at === total, result: [] };
    const game = r.game ?? "";
    for (let i = 0; i < at; i++) {
        const e = events[i];
        const seat = has(e, "seat") ? e.seat ?? 0 : null;
        const who = seat === null ? "Table" : seatOf(seat).name;
        const cards = Array.from(e.cards ?? []);
        const count = num(e.count);
        let text = "";
        switch (e.kind) {
        case K.REPLAY_DEAL:
            if (seat === null) {
                st.table.push(...cards);
                st.tableHidden += count;
                text = `${tableLabel(game)}: ` + (cards.length > 0 ? cardsText(cards) : "") +
                    (count > 0 ? `${cards.length > 0 ? " and " : ""}${count} face down` : "");
            } else {
                const s = seatOf(seat);
                s.cards.push(...cards);
                s.hidden += count;
                text = `${who}: dealt ` + (cards.length > 0 ? cardsText(cards) : "") +
                    (count > 0 ? `${cards.length > 0 ? " and " : ""}${count} card${count > 1 ? "s" : ""} face down` : "");
            }
            break;
        case K.REPLAY_ACTION: {
            text = actionText(r, e, who);
            if (seat === null)
                break;
            const s = seatOf(seat);
            s.action = text.slice(who.length + 2);
            const { verb, cards: moved } = parseAction(e.action ?? "");
            if (moved === null)
                break;
            if (verb === "landlord") {
                /* the bottom cards join the landlord's hand, face up: every seat saw them */
                s.cards.push(...moved);
            } else if (verb === "give") {
                const missing = take(s.cards, moved);
                s.hidden = Math.max(0, s.hidden - missing);
                seatOf(num(e.amount)).cards.push(...moved);
            } else {
                /* a play: the cards leave the hand, face up on the table in front of it */
                const missing = take(s.cards, moved);
                s.hidden = Math.max(0, s.hidden - missing);
                s.played = moved;
            }
            break;
        }
        case K.REPLAY_SHOW:
            if (seat !== null) {
                const s = seatOf(seat);
                s.cards = cards;
                s.hidden = 0;
                text = `${who}: shows ${cardsText(cards)}`;
            }
            break;
        default:
            text = `${who}: an event this page does not know (${e.kind})`;
        }
        st.log.push(text);
        st.text = text;
    }
    if (st.ended) {
        const outcome = r.outcome === croupier.RoundOutcome.OUTCOME_VOIDED
            ? `Round voided (${(croupier.VoidReason[r.voidReason ?? 0] ?? "?").replace("VOID_", "").toLowerCase()}): every stake refunded`
            : "Round over";
        st.result.push(outcome);
        for (const info of r.seats ?? []) {
            const s = seatOf(info.seat ?? 0);
            s.delta = num(info.delta);
            st.result.push(`${s.name}: ${s.delta > 0 ? "+" : ""}${fmt(s.delta)}`);
        }
        if (num(r.rake) > 0)
            st.result.push(`Rake: ${fmt(num(r.rake))}`);
    }
    st.seats = [...seats.values()].sort((a, b) => a.seat - b.seat);
    return st;
}

/** What the policy (Replay.policy, docs/replays.md) lets a viewer see, in words. */
export function policyText(policy: string): string {
    switch (policy) {
    case "all": return "every card";
    case "showdown": return "the hands shown at the showdown";
    case "own": return "no hand but your own";
    default: return policy;
    }
}

/** A share code as typed, checked: 8 digits (spaces and dashes dropped); else null. */
export function codeOf(text: string): string | null {
    const c = text.replace(/[\s-]/g, "");
    return /^[0-9]{8}$/.test(c) ? c : null;
}

/** A refused GetReplay / ShareReplay in words. */
export function replayRefusalText(e: unknown, code = ""): string {
    if (!(e instanceof CroupierError))
        return `The replay failed: ${e instanceof Error ? e.message : String(e)}`;
    switch (e.codeName) {
    case "REPLAY_CODE_UNKNOWN":
        return `No replay has the code ${code}: it was never made, or it expired`;
    case "NO_SUCH_ROUND":
        return "The round's record is not there (not written yet, or older than 7 days)";
    case "NOT_IN_ROUND":
        return "You did not play that round: ask one of its players for a share code";
    case "UNAVAILABLE":
        return "The replays could not be read just now: try again";
    case "BAD_REQUEST":
        return `The gateway refused the request as malformed: ${e.message}`;
    default:
        return `The replay was refused (${e.codeName}): ${e.message}`;
    }
}

export interface ReplayDeps {
    client: () => Client | null;
    el: (tag: string, cls?: string, text?: string) => HTMLElement;
    note: (kind: string, text: string) => HTMLElement;
    showError: (text: string) => void;
    /** Shows the viewer's section (true) or puts it away, back to where the page was. */
    showViewer: (on: boolean) => void;
    gameLabel: (game: string) => string;
}

const $ = (id: string) => document.getElementById(id) as HTMLElement;
const AUTO_MS = 900;

export class ReplayViewer {
    private replay: croupier.IReplay | null = null;
    private step = 0;
    private timer: ReturnType<typeof setInterval> | null = null;
    private busy = false;

    constructor(private d: ReplayDeps) {
        $("replay-start").onclick = () => this.go(0);
        $("replay-back").onclick = () => this.go(this.step - 1);
        $("replay-forward").onclick = () => this.go(this.step + 1);
        $("replay-end").onclick = () => this.go(Number.MAX_SAFE_INTEGER);
        $("replay-play").onclick = () => this.toggle();
        $("replay-close").onclick = () => this.close();
        $("replay-open").onclick = () => void this.openCode(($("replay-code") as HTMLInputElement).value);
        $("replay-code").onkeydown = (e) => {
            if (e.key === "Enter")
                void this.openCode(($("replay-code") as HTMLInputElement).value);
        };
    }

    /** By share code, as typed in the lobby: checked here (nothing sent when it is no code). */
    async openCode(text: string): Promise<void> {
        const c = this.d.client();
        const code = codeOf(text);
        if (code === null) {
            this.d.showError(`A share code is 8 digits (not "${text.trim()}")`);
            return;
        }
        if (c === null || this.busy)
            return;
        $("error").hidden = true;
        this.busy = true;
        try {
            this.open(await c.getReplay({ code }), `shared code ${code}`);
        } catch (e) {
            this.d.showError(replayRefusalText(e, code));
        } finally {
            this.busy = false;
        }
    }

    /** A round the person played (his own cards shown), asked again for a moment while its
     * record is being written. */
    async openRound(roundId: string, game: string): Promise<void> {
        const c = this.d.client();
        if (c === null || this.busy)
            return;
        this.busy = true;
        try {
            this.open(await this.retrying(() => c.getReplay({ roundId, game })), "your round");
        } catch (e) {
            this.d.showError(replayRefusalText(e));
        } finally {
            this.busy = false;
        }
    }

    /** A share code for a round the person played, shown in its note (box) and as a note of its
     * own with its expiry. */
    async share(roundId: string, game: string, box: HTMLElement): Promise<void> {
        const c = this.d.client();
        if (c === null || this.busy)
            return;
        this.busy = true;
        try {
            const s = await this.retrying(() => c.shareReplay(roundId, game));
            const code = s.code ?? "";
            const until = num(s.expiresUnixMs);
            const shown = this.d.el("span", "share-code", `Share code: ${code}`);
            shown.dataset.code = code;
            box.querySelector<HTMLButtonElement>("button[data-do=share]")!.disabled = true;
            box.append(shown);
            this.d.note("info", `Share code of the round: ${code}` +
                (until > 0 ? ` (valid until ${new Date(until).toLocaleString()})` : "")).dataset.code = code;
        } catch (e) {
            this.d.showError(replayRefusalText(e));
        } finally {
            this.busy = false;
        }
    }

    /* NO_SUCH_ROUND for a round that just ended: its record may not be written yet. */
    private async retrying<T>(f: () => Promise<T>): Promise<T> {
        for (let i = 0; ; i++) {
            try {
                return await f();
            } catch (e) {
                if (!(e instanceof CroupierError) || e.codeName !== "NO_SUCH_ROUND" || i >= 10)
                    throw e;
                await new Promise((res) => setTimeout(res, 300));
            }
        }
    }

    /** "Replay" and "Share" for a round the person played: put in the round's note, which
     * stays when the next round clears the table. */
    roundButtons(roundId: string, game: string): HTMLElement {
        const box = this.d.el("span", "round-replay");
        const replay = this.d.el("button", "", "Replay") as HTMLButtonElement;
        replay.type = "button";
        replay.dataset.do = "replay";
        replay.title = "this round, step by step";
        replay.onclick = () => void this.openRound(roundId, game);
        const share = this.d.el("button", "", "Share") as HTMLButtonElement;
        share.type = "button";
        share.dataset.do = "share";
        share.title = "a code anyone may replay this round with";
        share.onclick = () => void this.share(roundId, game, box);
        box.append(replay, share);
        return box;
    }

    /** Opens a replay at its start. */
    open(r: croupier.IReplay, from: string): void {
        this.pause();
        this.replay = r;
        this.step = 0;
        const started = num(r.startedUnixMs);
        $("replay-title").textContent = `Replay · ${this.d.gameLabel(r.game ?? "")}` +
            (num(r.stake) > 0 ? ` · stake ${fmt(num(r.stake))}` : "") +
            (started > 0 ? ` · ${new Date(started).toLocaleString()}` : "");
        $("replay-about").textContent = `From ${from}; shows ${policyText(r.policy ?? "")}`;
        $("replay").dataset.game = r.game ?? "";
        $("replay").dataset.round = r.roundId ?? "";
        this.d.showViewer(true);
        this.draw();
    }

    close(): void {
        this.pause();
        this.replay = null;
        this.d.showViewer(false);
    }

    private go(step: number): void {
        if (this.replay === null)
            return;
        if (this.timer !== null && step <= this.step)
            this.pause(); /* a step back, or the start, stops the auto-play */
        this.step = Math.max(0, Math.min((this.replay.events ?? []).length, step));
        this.draw();
    }

    private toggle(): void {
        if (this.replay === null)
            return;
        if (this.timer !== null) {
            this.pause();
            return;
        }
        if (this.step >= (this.replay.events ?? []).length)
            this.step = 0; /* at the end: play it again */
        this.timer = setInterval(() => {
            if (this.replay === null || this.step >= (this.replay.events ?? []).length) {
                this.pause();
                return;
            }
            this.step++;
            this.draw();
        }, AUTO_MS);
        this.draw();
    }

    private pause(): void {
        if (this.timer !== null)
            clearInterval(this.timer);
        this.timer = null;
        if (this.replay !== null)
            this.draw();
    }

    private cards(list: (number | null)[], cls: string): HTMLElement {
        const box = this.d.el("div", cls);
        for (const c of list)
            box.append(cardElement(c));
        return box;
    }

    private draw(): void {
        const r = this.replay;
        if (r === null)
            return;
        const st = replayState(r, this.step);
        const el = this.d.el;
        const sec = $("replay");
        sec.dataset.step = String(st.step);
        sec.dataset.total = String(st.total);
        sec.dataset.ended = String(st.ended);
        sec.dataset.playing = String(this.timer !== null);
        const seats = st.seats.map((s) => {
            const box = el("div", "seat replay-seat");
            box.dataset.seat = String(s.seat);
            if (s.name === "You")
                box.classList.add("me");
            box.append(el("div", "seat-name", s.name));
            const roles = [r.game !== "blackjack" && has(r, "buttonSeat") && r.buttonSeat === s.seat ? "Dealer" : "",
                           has(r, "bankerSeat") && r.bankerSeat === s.seat ? "Banker" : ""].filter((x) => x !== "");
            if (roles.length > 0) {
                const badges = el("div", "seat-badges");
                badges.append(...roles.map((x) => el("span", `badge role-${x.toLowerCase()}`, x)));
                box.append(badges);
            }
            const line = [s.stack > 0 ? `stack ${fmt(s.stack)}` : "",
                s.delta !== null ? `result ${s.delta > 0 ? "+" : ""}${fmt(s.delta)}` : ""].filter((x) => x !== "");
            if (line.length > 0)
                box.append(el("div", "seat-chips", line.join(" · ")));
            if (s.action !== "")
                box.append(el("div", "seat-move", s.action));
            if (s.cards.length + s.hidden > 0)
                box.append(this.cards([...s.cards, ...Array<null>(s.hidden).fill(null)], "cards small held"));
            if (s.played.length > 0)
                box.append(el("div", "label", "Last play:"), this.cards(s.played, "cards small played"));
            return box;
        });
        $("replay-seats").replaceChildren(...seats);
        const table = $("replay-table");
        table.replaceChildren();
        if (st.table.length + st.tableHidden > 0)
            table.append(el("div", "label", tableLabel(r.game ?? "")),
                this.cards([...st.table, ...Array<null>(st.tableHidden).fill(null)], "cards board"));
        $("replay-step").textContent = st.step === 0 ? "The start: nothing dealt yet" : st.text;
        $("replay-pos").textContent = `Step ${st.step} of ${st.total}`;
        const at0 = st.step === 0, atEnd = st.ended;
        ($("replay-start") as HTMLButtonElement).disabled = at0;
        ($("replay-back") as HTMLButtonElement).disabled = at0;
        ($("replay-forward") as HTMLButtonElement).disabled = atEnd;
        ($("replay-end") as HTMLButtonElement).disabled = atEnd;
        $("replay-play").textContent = this.timer !== null ? "Pause" : atEnd ? "Play again" : "Play";
        const res = $("replay-result");
        res.hidden = !atEnd;
        res.replaceChildren(...st.result.map((line, i) => el(i === 0 ? "h3" : "div", i === 0 ? "" : "result-line", line)));
        $("replay-log").replaceChildren(...st.log.map((line) => el("li", "", line)).reverse());
    }
}
