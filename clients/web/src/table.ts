// What the page knows of its table: built from Joined or a Snapshot, moved on by the table's
// events (Deal, Turn, Play, RoundEnd; docs/protocol.md "Gate → client"). A Snapshot replaces
// whatever the events said (after a reconnect, a Moved, or the refresh the page asks for on its
// own turn): it is the authoritative state.
import { croupier } from "@croupier/client";

import { cardsText, guandanOrder, sheddingOrder } from "./cards.js";
import * as niu from "./niuniu.js";
import { decodeAction, decodeEvent, decodeState, ZjhMove, type ZjhSeat, type ZjhState } from "./zjh.js";

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

/* The hand without the cards played: one copy per card (two-deck games hold twins). */
function removeCards(hand: number[], played: number[]): number[] {
    const left = [...hand];
    for (const c of played) {
        const i = left.indexOf(c);
        if (i >= 0)
            left.splice(i, 1);
    }
    return left;
}

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
    /** The round's moves, oldest first: the seat and what it did (its name is drawn with it). */
    plays: { seat: number; text: string }[] = [];
    /** The number of seats at the table, empty ones included (from Joined / Snapshot). */
    seatCount = 0;
    /** The seats without a player (from Joined / Snapshot). */
    emptySeats = new Set<number>();
    /** Each seat's last move of this round, as text. */
    lastMove = new Map<number, string>();
    /** A spectator's view (Snapshot.spectator, docs/spectators.md): no seat of the page's
     * (mySeat is then the seat count), no turn of its own, no private card. */
    spectator = false;

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
    /* Guandan (docs/rules/guandan.md): the deal's level rank, each team's (0: seats 0 + 2,
     * 1: seats 1 + 3), and in the tribute phase whether the seat to act returns a card (else it
     * pays) and to whom */
    level = 0;
    teamLevels: number[] = [];
    tributeReturn = false;
    tributeTo: number | null = null;
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

    /* Zha Jin Hua (ENGINE_GAME "zhajinhua"): the last ZjhState, moved on by the events */
    zjh: ZjhState | null = null;
    /** Zha Jin Hua: the cards a compare showed this page (its own and its opponent's). */
    zjhShown = new Map<number, number[]>();

    /* Niu Niu (ENGINE_GAME "niuniu", docs/rules/niuniu.md): the last NiuState, moved on by the
     * events; the round's banker (Snapshot.banker_seat, NiuEvent banker); the seats of the open
     * action window still to decide (Turn / Snapshot window_seats); the hands shown */
    niu: niu.NiuState | null = null;
    banker: number | null = null;
    windowSeats: number[] = [];
    niuShown = new Map<number, { cards: number[]; category: string }>();

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
        this.seatCount = seats.length;
        this.emptySeats.clear();
        for (const s of seats) {
            if (!has(s, "playerId")) {
                this.emptySeats.add(s.seat ?? 0);
                continue;
            }
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
            ...this.players.keys(), ...this.hands.map((h) => h.seat), this.mySeat,
            ...(this.zjh?.seats ?? []).map((z) => z.seat), ...(this.niu?.seats ?? []).map((z) => z.seat)]);
        if (this.spectator)
            all.delete(this.mySeat);
        return [...all].sort((a, b) => a - b);
    }

    private newRound(roundId: string | null): void {
        this.roundId = roundId;
        this.result = null;
        this.turn = null;
        this.plays = [];
        this.lastMove.clear();
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
        this.zjh = null;
        this.zjhShown.clear();
        this.niu = null;
        this.banker = null;
        this.windowSeats = [];
        this.niuShown.clear();
    }

    /** The seats with a player. */
    seatedCount(): number {
        return this.seats.size;
    }

    /** Zha Jin Hua: one seat of the hand, null when it was not dealt in. */
    zjhSeat(seat: number): ZjhSeat | null {
        return this.zjh?.seats.find((z) => z.seat === seat) ?? null;
    }

    /** Niu Niu: one seat of the round, null when it was not dealt in. */
    niuSeat(seat: number): niu.NiuSeat | null {
        return this.niu?.seats.find((z) => z.seat === seat) ?? null;
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
        this.spectator = s.spectator ?? false;
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
        } else if (this.game === "niuniu" && rid !== null && (s.windowSeats ?? []).length > 0) {
            /* an action window: no turn seat, the seats still to decide and the window's time;
             * the page's own seat is "to act" when it is one of them */
            const w = [...(s.windowSeats ?? [])];
            const left = num(s.timeLeftMs);
            const seat = w.includes(this.mySeat) ? this.mySeat : w[0];
            const keep = this.turn !== null && this.turn.seat === seat ? this.turn : null;
            this.turn = { seat, deadline: Date.now() + left, totalMs: Math.max(left, keep?.totalMs ?? 0),
                          toCall: null, min: keep?.min ?? null, max: keep?.max ?? null, hand: null };
        } else if (this.engine !== E.ENGINE_PERSISTENT) {
            this.turn = null; /* blackjack's betting window has no turn seat: keep its Turn */
        }
        if (this.game === "niuniu") {
            this.windowSeats = rid !== null ? [...(s.windowSeats ?? [])] : [];
            if (!keepCards)
                this.banker = opt(s, "bankerSeat");
        }
        if (s.shedding && !keepCards) {
            const st = s.shedding;
            this.phase = st.phase ?? 0;
            this.level = st.level ?? 0;
            this.teamLevels = [...(st.teamLevels ?? [])];
            this.tributeReturn = st.tributeReturn ?? false;
            this.tributeTo = opt(st, "tributeTo");
            this.hand = this.sortHand(bytes(st.hand));
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
        if (s.gameState?.body && s.gameState.body.length > 0 && this.game === "zhajinhua" && !keepCards) {
            const prev = this.zjh;
            this.zjh = decodeState(s.gameState.body);
            if (this.zjh.ownCards.length === 0 && prev !== null && prev.ownCards.length > 0 &&
                this.zjh.inHand)
                this.zjh.ownCards = prev.ownCards;
        }
        if (s.gameState?.body && s.gameState.body.length > 0 && this.game === "niuniu" && !keepCards) {
            this.niu = niu.decodeState(s.gameState.body);
            for (const z of this.niu.seats)
                if (z.shownCards.length > 0 && !this.niuShown.has(z.seat))
                    this.niuShown.set(z.seat, { cards: z.shownCards, category: "" });
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
        if (seat !== null)
            this.emptySeats.delete(seat); /* taken since the last Snapshot */
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
                    this.hand = this.sortHand(cards);
            } else {
                /* the landlord's bottom cards, shown to everyone */
                this.kitty = cards;
                this.declarer = seat;
                this.cardsLeft.set(seat, (this.cardsLeft.get(seat) ?? 0) + count);
                if (seat === this.mySeat)
                    this.hand = this.sortHand([...this.hand, ...cards]);
                this.phase = croupier.SheddingPhase.SHEDDING_PLAYING;
            }
            break;
        }
        case E.ENGINE_HOLDEM:
            if (seat === null) {
                this.board.push(...cards);
                for (const p of this.players.values())
                    p.bet = 0; /* a new street: the bets went into the pot */
            }
            else if (seat === this.mySeat)
                this.hole = cards;
            if (seat !== null && !this.players.has(seat))
                this.players.set(seat, { stack: this.seats.get(seat)?.chips ?? 0, bet: 0, folded: false, allIn: false });
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
        case E.ENGINE_GAME:
            /* Zha Jin Hua deals face down, even to the seat (three cards each): the hand's
             * seats until the Snapshot says more */
            if (seat !== null && this.game === "zhajinhua") {
                if (this.zjh === null)
                    this.zjh = { inHand: true, bettingRound: 1, unit: this.stake, pot: 0, dealerSeat: null,
                        ante: this.stake, maxUnit: 0, maxRounds: 0, ownCards: [], seats: [], toCall: null,
                        canCompare: false };
                if (this.zjhSeat(seat) === null)
                    this.zjh.seats.push({ seat, stack: this.seats.get(seat)?.chips ?? 0, putIn: 0,
                        looked: false, folded: false, allIn: false });
            }
            /* Niu Niu deals four cards to each seat of the round (the seat sees its own), the
             * fifth at the show window (docs/rules/niuniu.md "The engine") */
            if (seat !== null && this.game === "niuniu") {
                if (this.niu === null)
                    this.niu = { phase: niu.NiuPhase.BIDDING, mult: null, seats: [], ownCards: [], maxBid: 0 };
                let z = this.niuSeat(seat);
                if (z === null) {
                    z = { seat, bid: null, bet: null, shownCards: [] };
                    this.niu.seats.push(z);
                }
                if (seat === this.mySeat && cards.length > 0)
                    this.niu.ownCards = [...this.niu.ownCards.filter((c) => !cards.includes(c)), ...cards];
            }
            break;
        default:
            break;
        }
    }

    onTurn(t: croupier.ITurn): void {
        if (this.game === "niuniu")
            /* every window of Niu Niu opens with a Turn to everyone (docs/protocol.md "Action
             * windows"): its seats, ours as seat when we are one of them; the page reads the
             * window's phase from the Snapshot it asks for on its own turn (main.ts) */
            this.windowSeats = [...(t.windowSeats ?? [])];
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
        this.emptySeats.delete(seat);
        const a = p.action ?? {};
        const auto = p.timedOut ? " (timed out)" : "";
        if (a.shedding) {
            const s = a.shedding;
            const cards = bytes(s.cards);
            if (s.move === croupier.SheddingMove.SHEDDING_BID) {
                this.plays.push({ seat, text: `${s.bid ? `bid ${s.bid}` : "no bid"}${auto}` });
                this.lastMove.set(seat, s.bid ? `bid ${s.bid}` : "no bid");
                this.bid = Math.max(this.bid, s.bid ?? 0);
            } else if (s.move === croupier.SheddingMove.SHEDDING_PLAY &&
                       this.phase === croupier.SheddingPhase.SHEDDING_TRIBUTE) {
                /* Guandan's tribute: a card given, not a play to beat (the hands are read
                 * again from the Snapshot on the next turn) */
                this.plays.push({ seat, text: `gives ${cardsText(cards)}${auto}` });
                this.lastMove.set(seat, `gives ${cardsText(cards)}`);
                if (seat === this.mySeat)
                    this.hand = removeCards(this.hand, cards);
            } else if (s.move === croupier.SheddingMove.SHEDDING_PLAY) {
                this.plays.push({ seat, text: `${cardsText(cards)}${auto}` });
                this.lastMove.set(seat, cardsText(cards));
                this.lastPlay = cards;
                this.lastPlaySeat = seat;
                if (seat === this.mySeat)
                    this.hand = removeCards(this.hand, cards);
            } else {
                this.plays.push({ seat, text: `pass${auto}` });
                this.lastMove.set(seat, "pass");
            }
            const left = opt(p, "cardsLeft");
            if (left !== null)
                this.cardsLeft.set(seat, left);
        } else if (a.holdem) {
            const h = a.holdem;
            const name = (croupier.HoldemMove[h.move ?? 0] ?? "?").replace("HOLDEM_", "").toLowerCase();
            const amount = opt(h, "amount");
            this.plays.push({ seat, text: `${name}${amount !== null ? ` to ${amount}` : ""}${auto}` });
            this.lastMove.set(seat, `${name}${amount !== null ? ` ${amount}` : ""}`);
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
            this.plays.push({ seat, text: `${what}${auto}` });
            this.lastMove.set(seat, what);
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
        } else if (a.game?.body && this.game === "niuniu") {
            const n = niu.decodeAction(a.game.body);
            const what = niu.moveText(n);
            this.plays.push({ seat, text: `${what}${auto}` });
            this.lastMove.set(seat, what);
            const z = this.niuSeat(seat);
            if (z !== null && n.move === niu.NiuMove.BID)
                z.bid = n.amount ?? 0;
            if (z !== null && n.move === niu.NiuMove.BET)
                z.bet = n.amount ?? 0;
            this.windowSeats = this.windowSeats.filter((w) => w !== seat);
        } else if (a.game?.body && this.game === "zhajinhua") {
            const z = decodeAction(a.game.body);
            const what = z.move === ZjhMove.FOLD ? "fold" : z.move === ZjhMove.CALL ? "call"
                : z.move === ZjhMove.RAISE ? `raise to ${z.unit ?? 0}` : z.move === ZjhMove.LOOK ? "look"
                : `compare with ${z.target === this.mySeat ? "you" : this.seatName(z.target ?? 0)}`;
            this.plays.push({ seat, text: `${what}${auto}` });
            this.lastMove.set(seat, what);
            const zs = this.zjhSeat(seat);
            if (zs !== null && z.move === ZjhMove.FOLD)
                zs.folded = true;
            if (zs !== null && z.move === ZjhMove.LOOK)
                zs.looked = true;
            if (this.zjh !== null && z.move === ZjhMove.RAISE && z.unit !== undefined)
                this.zjh.unit = z.unit;
            if (z.move === ZjhMove.LOOK)
                return; /* a look is no move of the turn: the seat still acts */
        }
        if (this.turn !== null && this.turn.seat === seat)
            this.turn = null; /* the seat moved; a Turn follows when it decides again */
    }

    /** Zha Jin Hua's own events (a ZjhEvent, games/zhajinhua/zhajinhua.proto): a look, one's
     * own cards after it, a compare (the cards go to its two players only), an all-in call's
     * result, a new betting round (docs/rules/zhajinhua.md). */
    onGameEvent(body: Uint8Array): void {
        if (this.game === "niuniu") {
            this.onNiuEvent(body);
            return;
        }
        if (this.game !== "zhajinhua")
            return;
        const ev = decodeEvent(body);
        const name = (seat: number) => (seat === this.mySeat ? "you" : this.seatName(seat));
        switch (ev.kind) {
        case "looked": {
            const z = this.zjhSeat(ev.seat);
            if (z !== null)
                z.looked = true;
            break;
        }
        case "cards":
            if (this.zjh !== null && ev.seat === this.mySeat)
                this.zjh.ownCards = ev.cards;
            break;
        case "compared": {
            const loser = this.zjhSeat(ev.loser);
            if (loser !== null)
                loser.folded = true;
            if (ev.askerCards.length > 0)
                this.zjhShown.set(ev.asker, ev.askerCards);
            if (ev.targetCards.length > 0)
                this.zjhShown.set(ev.target, ev.targetCards);
            const text = `${ev.allIn ? "all-in " : ""}compare with ${name(ev.target)}: ` +
                (ev.loser === ev.asker ? "lost" : "won");
            this.plays.push({ seat: ev.asker, text });
            this.lastMove.set(ev.asker, text);
            break;
        }
        case "allIn":
            this.plays.push({ seat: ev.seat, text: ev.won ? "all-in call: beats every hand, takes the pot"
                                                          : "all-in call: beaten, out" });
            break;
        case "round":
            if (this.zjh !== null)
                this.zjh.bettingRound = ev.bettingRound;
            break;
        }
    }

    /** Niu Niu's own events (a NiuEvent, games/niuniu/niuniu.proto): the banker once chosen,
     * every hand shown with its category. */
    private onNiuEvent(body: Uint8Array): void {
        const ev = niu.decodeEvent(body);
        if (ev.kind === "banker") {
            this.banker = ev.seat;
            if (this.niu !== null) {
                this.niu.mult = ev.mult;
                this.niu.phase = niu.NiuPhase.BETTING;
            }
            const text = `banker${ev.mult > 1 ? ` at ×${ev.mult}` : ""}`;
            this.plays.push({ seat: ev.seat, text });
            return;
        }
        this.niuShown.set(ev.seat, { cards: ev.cards, category: ev.category });
        if (ev.seat === this.mySeat && this.niu !== null)
            this.niu.ownCards = ev.cards;
        const text = `shows ${niu.categoryText(ev.category)}`;
        this.plays.push({ seat: ev.seat, text });
        this.lastMove.set(ev.seat, text);
    }

    /** The transfers of the last round (banker games, docs/protocol.md "Transfers"), in order;
     * a seat absent from a transfer is the house. */
    transfers(): niu.TransferView[] {
        return (this.result?.transfers ?? []).map((x) => ({
            from: opt(x, "fromSeat"), to: opt(x, "toSeat"), amount: num(x.amount), reason: x.reason ?? "",
        }));
    }

    onRoundEnd(e: croupier.IRoundEnd): void {
        this.result = e;
        this.turn = null;
        if (this.spectator && this.engine === E.ENGINE_HOLDEM)
            /* a spectator reads no Snapshot after a hand (a player does): the stacks moved by the
             * results (the page never takes the bets out of them) */
            for (const d of e.deltas ?? []) {
                const p = this.players.get(d.seat ?? 0);
                if (p !== undefined)
                    p.stack += num(d.delta);
            }
        if (this.engine === E.ENGINE_PERSISTENT)
            this.dealer = this.dealer.filter((c) => c !== null);
    }

    /** A hand in the game's order: Guandan's with its level, else the shedding order. */
    sortHand(cards: number[]): number[] {
        const key = this.game === "guandan" && this.level > 0 ? (c: number) => guandanOrder(c, this.level)
            : sheddingOrder;
        return cards.sort((a, b) => key(a) - key(b));
    }

    seatName(seat: number): string {
        const s = this.seats.get(seat);
        if (s === undefined)
            return this.emptySeats.has(seat) ? "Empty seat" : `Seat ${seat + 1}`;
        if (s.name)
            return s.name;
        return s.bot ? `Bot ${seat + 1}` : `Player ${s.playerId}`;
    }

    /** Whether it is this page's move now. */
    myTurn(): boolean {
        if (this.spectator)
            return false;
        if (this.game === "niuniu" && this.result === null && this.turn !== null)
            return this.windowSeats.includes(this.mySeat); /* a window: until our decision */
        return this.turn !== null && this.turn.seat === this.mySeat && this.result === null;
    }
}
