// What the page knows of its table: built from Joined or a Snapshot, moved on by the table's
// events (Deal, Turn, Play, RoundEnd; docs/protocol.md "Gate → client"). A Snapshot replaces
// whatever the events said (after a reconnect, a Moved, or the refresh the page asks for on its
// own turn): it is the authoritative state.
import { croupier } from "@croupier/client";

import { sheddingOrder } from "./cards.js";

const E = croupier.Engine;

export interface SeatView {
    seat: number;
    playerId: number;
    name: string;
    bot: boolean;
    chips: number;
}

export interface TurnView {
    seat: number;
    deadline: number; /* Date.now() when the time is up */
    totalMs: number;
    toCall: number | null;
    min: number | null;
    max: number | null;
    hand: number | null; /* blackjack: the hand to act */
}

export interface HoldemSeat {
    stack: number;
    bet: number;
    folded: boolean;
    allIn: boolean;
}

export interface BjHand {
    seat: number;
    hand: number;
    cards: number[];
    bet: number;
    done: boolean;
    doubled: boolean;
}

/* Decoded messages (protobufjs) keep absent optional fields on the prototype, with their default
 * (0, "", or a Long for 64-bit integers): only own properties were on the wire. */
export const has = (m: object, field: string): boolean => Object.prototype.hasOwnProperty.call(m, field);
export function num(v: unknown): number {
    if (typeof v === "number")
        return v;
    if (v !== null && typeof v === "object" && typeof (v as { toNumber?: unknown }).toNumber === "function")
        return (v as { toNumber(): number }).toNumber();
    return Number(v ?? 0) || 0;
}
const opt = (m: object, field: string): number | null =>
    has(m, field) ? num((m as Record<string, unknown>)[field]) : null;
const bytes = (b: Uint8Array | null | undefined): number[] => Array.from(b ?? []);

export class Table {
    engine: croupier.Engine;
    game: string;
    stake: number;
    deskId = 0;
    mySeat = 0;
    seats = new Map<number, SeatView>();
    roundId: string | null = null;
    turn: TurnView | null = null;
    result: croupier.IRoundEnd | null = null;
    /** The round's moves as text, oldest first. */
    plays: string[] = [];

    /* shedding games (traditional engine) */
    phase = 0;
    hand: number[] = [];
    cardsLeft = new Map<number, number>();
    bid = 0;
    declarer: number | null = null;
    lastPlay: number[] = [];
    lastPlaySeat: number | null = null;
    kitty: number[] = [];
    multiplier = 0;
    private dealt = new Set<number>();

    /* hold'em */
    street = 0;
    hole: number[] = [];
    board: number[] = [];
    pot = 0;
    button: number | null = null;
    players = new Map<number, HoldemSeat>();

    /* blackjack */
    bjPhase = 0;
    dealer: (number | null)[] = [];
    hands: BjHand[] = [];
    minBet = 0;
    maxBet = 0;

    constructor(engine: croupier.Engine, game: string, stake: number) {
        this.engine = engine;
        this.game = game;
        this.stake = stake;
    }

    static fromJoined(j: croupier.IJoined): Table {
        const t = new Table(j.engine ?? E.ENGINE_UNSPECIFIED, j.game ?? "", num(j.stake));
        t.deskId = num(j.deskId);
        t.mySeat = j.seat ?? 0;
        t.setSeats(j.seats ?? []);
        return t;
    }

    static fromSnapshot(s: croupier.ISnapshot): Table {
        const t = new Table(s.engine ?? E.ENGINE_UNSPECIFIED, s.game ?? "", num(s.stake));
        t.applySnapshot(s);
        return t;
    }

    private setSeats(seats: croupier.ISeatInfo[]): void {
        this.seats.clear();
        for (const s of seats) {
            if (!has(s, "playerId"))
                continue; /* an empty seat */
            this.seats.set(s.seat ?? 0, {
                seat: s.seat ?? 0,
                playerId: num(s.playerId),
                name: s.name ?? "",
                bot: s.bot ?? false,
                chips: num(s.chips),
            });
        }
    }

    /** Seat numbers to draw: the seated ones and every seat an event named. */
    seatNumbers(): number[] {
        const all = new Set<number>([...this.seats.keys(), ...this.cardsLeft.keys(),
            ...this.players.keys(), ...this.hands.map((h) => h.seat), this.mySeat]);
        return [...all].sort((a, b) => a - b);
    }

    private newRound(roundId: string | null): void {
        this.roundId = roundId;
        this.result = null;
        this.turn = null;
        this.plays = [];
        this.phase = 0;
        this.hand = [];
        this.cardsLeft.clear();
        this.bid = 0;
        this.declarer = null;
        this.lastPlay = [];
        this.lastPlaySeat = null;
        this.kitty = [];
        this.multiplier = 0;
        this.dealt.clear();
        this.street = 0;
        this.hole = [];
        this.board = [];
        this.pot = 0;
        for (const p of this.players.values()) {
            p.bet = 0;
            p.folded = false;
            p.allIn = false;
        }
        this.dealer = [];
        this.hands = [];
    }

    /** The state of a Snapshot, whole. */
    applySnapshot(s: croupier.ISnapshot): void {
        const rid = s.roundId || null;
        this.enterRound(rid);
        /* Between rounds a Snapshot (a move's, say) leaves the last round's cards and result on
         * the table until the next round begins. */
        const keepCards = rid === null && this.result !== null;
        this.engine = s.engine ?? this.engine;
        this.game = s.game ?? this.game;
        this.stake = num(s.stake);
        this.deskId = num(s.deskId);
        this.mySeat = s.yourSeat ?? 0;
        this.setSeats(s.seats ?? []);
        const ts = opt(s, "turnSeat");
        if (ts !== null && rid !== null) {
            const left = num(s.timeLeftMs);
            const keep = this.turn !== null && this.turn.seat === ts ? this.turn : null;
            this.turn = {
                seat: ts, deadline: Date.now() + left, totalMs: Math.max(left, keep?.totalMs ?? 0),
                toCall: keep?.toCall ?? null, min: keep?.min ?? null, max: keep?.max ?? null,
                hand: keep?.hand ?? null,
            };
        } else if (this.engine !== E.ENGINE_PERSISTENT) {
            this.turn = null; /* blackjack's betting window has no turn seat: keep its Turn */
        }
        if (s.shedding && !keepCards) {
            const st = s.shedding;
            this.phase = st.phase ?? 0;
            this.hand = bytes(st.hand).sort((a, b) => sheddingOrder(a) - sheddingOrder(b));
            this.cardsLeft.clear();
            (st.cardsLeft ?? []).forEach((n, i) => this.cardsLeft.set(i, n));
            this.bid = st.bid ?? 0;
            this.declarer = opt(st, "declarerSeat");
            this.lastPlay = bytes(st.lastPlay);
            this.lastPlaySeat = this.lastPlay.length > 0 ? opt(st, "lastPlaySeat") : null;
            this.kitty = bytes(st.kitty);
            this.multiplier = st.multiplier ?? 0;
            for (const seat of this.cardsLeft.keys())
                this.dealt.add(seat);
        }
        if (s.holdem) {
            const h = s.holdem;
            if (!keepCards) {
                this.street = h.street ?? 0;
                this.hole = bytes(h.holeCards);
                this.board = bytes(h.board);
                this.pot = num(h.pot);
            }
            this.button = opt(h, "buttonSeat");
            this.players.clear();
            for (const p of h.players ?? [])
                this.players.set(p.seat ?? 0, { stack: num(p.stack), bet: num(p.bet),
                    folded: p.folded ?? false, allIn: p.allIn ?? false });
            const me = this.players.get(this.mySeat);
            if (this.turn !== null && this.turn.seat === this.mySeat && this.turn.toCall === null) {
                /* a Snapshot in place of our Turn (after a reconnect or a move) */
                this.turn.toCall = opt(h, "toCall");
                this.turn.min = opt(h, "minRaise");
                this.turn.max = me !== undefined ? me.stack + me.bet : null;
            }
        }
        if (!s.holdem && this.engine === E.ENGINE_HOLDEM) {
            /* between hands the Snapshot has no HoldemState: the stacks are the seats' chips */
            for (const [seat, info] of this.seats) {
                const p = this.players.get(seat);
                if (p !== undefined)
                    p.stack = info.chips;
            }
        }
        if (s.blackjack && !keepCards) {
            const b = s.blackjack;
            this.bjPhase = b.phase ?? 0;
            this.dealer = bytes(b.dealerCards);
            if (this.dealer.length === 1 && b.phase === croupier.BlackjackPhase.BJ_PLAYING)
                this.dealer.push(null); /* the hole card */
            this.hands = (b.hands ?? []).map((h) => ({ seat: h.seat ?? 0, hand: h.hand ?? 0,
                cards: bytes(h.cards), bet: num(h.bet), done: h.done ?? false,
                doubled: h.doubled ?? false }));
            this.minBet = num(b.minBet);
            this.maxBet = num(b.maxBet);
            if (this.turn !== null && this.turn.seat === this.mySeat && this.turn.hand === null &&
                this.bjPhase === croupier.BlackjackPhase.BJ_PLAYING) {
                /* the Snapshot's turn is the seat's first hand not done */
                const h = this.hands.find((x) => x.seat === this.mySeat && !x.done);
                this.turn.hand = h?.hand ?? 0;
            }
        }
    }

    /* An event or Snapshot of round rid (null: none named): a new round once the last one ended
     * or another id shows up; the first id of a round begun without one (blackjack's bets come
     * before its first Deal) is taken as the round's. */
    private enterRound(rid: string | null): void {
        if (rid === null || rid === this.roundId)
            return;
        if (this.roundId === null && this.result === null)
            this.roundId = rid;
        else
            this.newRound(rid);
    }

    onDeal(d: croupier.IDeal): void {
        const rid = d.roundId || null;
        if (rid === null && this.result !== null)
            this.newRound(null);
        this.enterRound(rid);
        const cards = bytes(d.cards);
        const seat = opt(d, "seat");
        switch (this.engine) {
        case E.ENGINE_TRADITIONAL: {
            if (seat === null)
                break;
            const count = opt(d, "count") ?? cards.length;
            if (!this.dealt.has(seat)) {
                /* the deal's start: one Deal per seat, the cards in one's own */
                this.dealt.add(seat);
                this.cardsLeft.set(seat, count);
                /* a live deal opens the bidding in Dou Dizhu (the landlord's bottom cards end
                 * it, below; docs/rules/doudizhu.md); a Snapshot names the phase itself */
                if (this.phase === 0 && this.game === "doudizhu")
                    this.phase = croupier.SheddingPhase.SHEDDING_BIDDING;
                if (seat === this.mySeat)
                    this.hand = cards.sort((a, b) => sheddingOrder(a) - sheddingOrder(b));
            } else {
                /* the landlord's bottom cards, shown to everyone */
                this.kitty = cards;
                this.declarer = seat;
                this.cardsLeft.set(seat, (this.cardsLeft.get(seat) ?? 0) + count);
                if (seat === this.mySeat)
                    this.hand = [...this.hand, ...cards].sort((a, b) => sheddingOrder(a) - sheddingOrder(b));
                this.phase = croupier.SheddingPhase.SHEDDING_PLAYING;
            }
            break;
        }
        case E.ENGINE_HOLDEM:
            if (seat === null)
                this.board.push(...cards);
            else if (seat === this.mySeat)
                this.hole = cards;
            if (seat !== null && !this.players.has(seat))
                this.players.set(seat, { stack: 0, bet: 0, folded: false, allIn: false });
            break;
        case E.ENGINE_PERSISTENT: {
            const card = cards.length > 0 ? cards[0] : null;
            if (seat === null) {
                const hole = this.dealer.indexOf(null);
                if (card !== null && hole >= 0)
                    this.dealer[hole] = card; /* the hole card turned over */
                else
                    this.dealer.push(card);
                break;
            }
            const idx = d.hand ?? 0;
            let h = this.hands.find((x) => x.seat === seat && x.hand === idx);
            if (h === undefined) {
                h = { seat, hand: idx, cards: [], bet: 0, done: false, doubled: false };
                this.hands.push(h);
            }
            if (card !== null)
                h.cards.push(card);
            break;
        }
        default:
            break;
        }
    }

    onTurn(t: croupier.ITurn): void {
        const betting = this.engine === E.ENGINE_PERSISTENT && !has(t, "hand") && has(t, "minAmount");
        if (betting && this.result !== null)
            this.newRound(null); /* blackjack: the betting window opens the next round */
        if (betting)
            this.bjPhase = croupier.BlackjackPhase.BJ_BETTING;
        const window = this.engine === E.ENGINE_PERSISTENT && !has(t, "hand");
        if (window && t.seat !== this.mySeat)
            return; /* the betting and insurance windows' Turns go to every seat: only ours is drawn */
        const left = t.timeLeftMs ?? 0;
        this.turn = { seat: t.seat ?? 0, deadline: Date.now() + left, totalMs: left,
                      toCall: opt(t, "toCall"), min: opt(t, "minAmount"), max: opt(t, "maxAmount"),
                      hand: opt(t, "hand") };
    }

    onPlay(p: croupier.IPlay): void {
        const seat = p.seat ?? 0;
        const a = p.action ?? {};
        const who = seat === this.mySeat ? "You" : this.seatName(seat);
        const auto = p.timedOut ? " (timed out)" : "";
        if (a.shedding) {
            const s = a.shedding;
            const cards = bytes(s.cards);
            if (s.move === croupier.SheddingMove.SHEDDING_BID) {
                this.plays.push(`${who}: ${s.bid ? `bid ${s.bid}` : "no bid"}${auto}`);
                this.bid = Math.max(this.bid, s.bid ?? 0);
            } else if (s.move === croupier.SheddingMove.SHEDDING_PLAY) {
                this.plays.push(`${who}: played ${cards.length} card${cards.length > 1 ? "s" : ""}${auto}`);
                this.lastPlay = cards;
                this.lastPlaySeat = seat;
                if (seat === this.mySeat)
                    this.hand = this.hand.filter((c) => !cards.includes(c));
            } else {
                this.plays.push(`${who}: pass${auto}`);
            }
            const left = opt(p, "cardsLeft");
            if (left !== null)
                this.cardsLeft.set(seat, left);
        } else if (a.holdem) {
            const h = a.holdem;
            const name = (croupier.HoldemMove[h.move ?? 0] ?? "?").replace("HOLDEM_", "").toLowerCase();
            const amount = opt(h, "amount");
            this.plays.push(`${who}: ${name}${amount !== null ? ` to ${amount}` : ""}${auto}`);
            const ps = this.players.get(seat);
            if (ps !== undefined) {
                if (h.move === croupier.HoldemMove.HOLDEM_FOLD)
                    ps.folded = true;
                if (amount !== null)
                    ps.bet = amount;
            }
        } else if (a.blackjack) {
            const b = a.blackjack;
            const name = (croupier.BlackjackMove[b.move ?? 0] ?? "?").replace("BJ_", "").toLowerCase();
            const amount = opt(b, "amount");
            const what = b.move === croupier.BlackjackMove.BJ_INSURANCE
                ? (b.insure ? "takes insurance" : "no insurance")
                : `${name}${amount !== null ? ` ${amount}` : ""}`;
            this.plays.push(`${who}: ${what}${auto}`);
            if (b.move === croupier.BlackjackMove.BJ_BET) {
                const h = this.hands.find((x) => x.seat === seat && x.hand === 0);
                if (h === undefined)
                    this.hands.push({ seat, hand: 0, cards: [], bet: amount ?? 0, done: false, doubled: false });
                else
                    h.bet = amount ?? 0;
            } else {
                const h = this.hands.find((x) => x.seat === seat && x.hand === (b.hand ?? 0));
                if (h !== undefined && b.move === croupier.BlackjackMove.BJ_SPLIT) {
                    /* the second card starts the seat's next hand (docs/rules/blackjack.md §4) */
                    const next = this.hands.filter((x) => x.seat === seat).length;
                    this.hands.push({ seat, hand: next, cards: h.cards.splice(1), bet: h.bet,
                                      done: false, doubled: false });
                } else if (h !== undefined && b.move === croupier.BlackjackMove.BJ_DOUBLE) {
                    h.doubled = true;
                    h.bet *= 2;
                } else if (h !== undefined && b.move !== croupier.BlackjackMove.BJ_HIT) {
                    h.done = b.move !== croupier.BlackjackMove.BJ_INSURANCE;
                }
            }
        }
        if (this.turn !== null && this.turn.seat === seat)
            this.turn = null; /* the seat moved; a Turn follows when it decides again */
    }

    onRoundEnd(e: croupier.IRoundEnd): void {
        this.result = e;
        this.turn = null;
        if (this.engine === E.ENGINE_PERSISTENT)
            this.dealer = this.dealer.filter((c) => c !== null);
    }

    seatName(seat: number): string {
        const s = this.seats.get(seat);
        if (s === undefined)
            return `Seat ${seat + 1}`;
        if (s.name)
            return s.name;
        return s.bot ? `Bot ${seat + 1}` : `Player ${s.playerId}`;
    }

    /** Whether it is this page's move now. */
    myTurn(): boolean {
        return this.turn !== null && this.turn.seat === this.mySeat && this.result === null;
    }
}
