// Niu Niu's own messages (games/niuniu/niuniu.proto) and the texts the table draws of them
// (docs/rules/niuniu.md "The engine"). Like Zha Jin Hua's (src/zjh.ts) they travel inside the
// client protocol's game envelope (docs/protocol.md "Games on the table kit: ENGINE_GAME"): a
// NiuAction is the body of Action.game (and of the Play that broadcasts it), a NiuState the body
// of Snapshot.game_state, a NiuEvent the body of ServerMessage.game_event. The SDK carries these
// bodies as bytes; its protobufjs code generated from the game's .proto (croupier.niuniu) writes
// and reads them, and this file turns them into the plain views the page draws. A malformed body
// throws a RangeError (src/gamebody.ts).
import { croupier } from "@croupier/client";

import { checkUint, decodeBody, present } from "./gamebody.js";

const pb = croupier.niuniu;

/** The moves and phases, by the page's names, with the values of the .proto's enums. */
export enum NiuMove {
    BID = pb.NiuMove.NIU_BID,   /* the bid window: amount 0 (no bid) .. max_bid */
    BET = pb.NiuMove.NIU_BET,   /* the bet window (punters): amount a bet option, in stakes */
    SHOW = pb.NiuMove.NIU_SHOW, /* the show window */
}

export enum NiuPhase {
    BIDDING = pb.NiuPhase.NIU_BIDDING,
    BETTING = pb.NiuPhase.NIU_BETTING,
    SHOWING = pb.NiuPhase.NIU_SHOWING,
}

export interface NiuAction {
    move: NiuMove;
    amount?: number;
}

export interface NiuSeat {
    seat: number;
    bid: number | null;
    bet: number | null;
    shownCards: number[];
}

export interface NiuState {
    phase: NiuPhase | null; /* null between rounds */
    mult: number | null;    /* the banker's multiplier, once chosen */
    seats: NiuSeat[];
    ownCards: number[];
    maxBid: number;
}

export type NiuEvent =
    | { kind: "banker"; seat: number; mult: number }
    | { kind: "shown"; seat: number; cards: number[]; category: string };

/* ---- the messages ------------------------------------------------------------------------ */

/** A NiuAction as the body of Action.game. */
export function encodeAction(a: NiuAction): Uint8Array {
    if (!(a.move in NiuMove))
        throw new RangeError(`niuniu: no move ${String(a.move)}`);
    const m: croupier.niuniu.INiuAction = { move: a.move as number as croupier.niuniu.NiuMove };
    if (a.amount !== undefined)
        m.amount = checkUint("niuniu", "amount", a.amount, 0xffffffff);
    return pb.NiuAction.encode(m).finish();
}

/** The NiuAction of a Play's Action.game body. */
export function decodeAction(body: Uint8Array): NiuAction {
    const m = decodeBody("niuniu", "NiuAction", pb.NiuAction, body);
    if (!(m.move in NiuMove))
        throw new RangeError(`niuniu: an action without a known move (${m.move})`);
    const a: NiuAction = { move: m.move as number as NiuMove };
    if (present(m, "amount"))
        a.amount = m.amount;
    return a;
}

/** The NiuState of a Snapshot's game_state body: what was not sent reads as null (the phase
 * between rounds, a seat's bid or bet before it made one) or as no cards. */
export function decodeState(body: Uint8Array): NiuState {
    const m = decodeBody("niuniu", "NiuState", pb.NiuState, body);
    return {
        phase: m.phase in NiuPhase ? m.phase as number as NiuPhase : null,
        mult: present(m, "mult") ? m.mult : null,
        seats: m.seats.map((s) => ({ seat: s.seat, bid: present(s, "bid") ? s.bid ?? 0 : null,
                                    bet: present(s, "bet") ? s.bet ?? 0 : null,
                                    shownCards: Array.from(s.shownCards ?? []) })),
        ownCards: Array.from(m.ownCards),
        maxBid: m.maxBid,
    };
}

/** The NiuEvent of a game_event body. */
export function decodeEvent(body: Uint8Array): NiuEvent {
    const m = decodeBody("niuniu", "NiuEvent", pb.NiuEvent, body);
    if (m.banker)
        return { kind: "banker", seat: m.banker.seat, mult: m.banker.mult };
    if (m.shown)
        return { kind: "shown", seat: m.shown.seat, cards: Array.from(m.shown.cards),
                 category: m.shown.category };
    throw new RangeError("niuniu: an event of no known kind");
}

/* ---- texts -------------------------------------------------------------------------------- */

/** A hand's category as croupier-rules niuniu eval names it ("niu_7", "five_small"), in words. */
export function categoryText(category: string): string {
    const named: Record<string, string> = {
        no_niu: "No niu", niu_niu: "Niu niu", five_faces: "Five faces", bomb: "Bomb",
        five_small: "Five small",
    };
    if (category in named)
        return named[category];
    const m = /^niu_([1-9])$/.exec(category);
    return m !== null ? `Niu ${m[1]}` : category.replace(/_/g, " ");
}

/** A move as the table's log says it. */
export function moveText(a: NiuAction): string {
    switch (a.move) {
    case NiuMove.BID:
        return a.amount ? `bids ×${a.amount}` : "no bid";
    case NiuMove.BET:
        return `bets ${a.amount ?? 0}`;
    default:
        return "shows";
    }
}

/** One transfer of a RoundEnd (docs/protocol.md "Transfers"): an absent seat is the house. */
export interface TransferView {
    from: number | null;
    to: number | null;
    amount: number;
    reason: string;
}

/** The round's transfers in order, one line each: "Seat 3 → You: 60 (Niu 5)"; the rake goes to
 * "the house". name(seat) names a seat. */
export function transferLines(tr: TransferView[], name: (seat: number) => string): string[] {
    const who = (s: number | null) => (s === null ? "the house" : name(s));
    return tr.map((x) => `${who(x.from)} → ${who(x.to)}: ${x.amount.toLocaleString("en-US")}` +
        ` (${x.reason === "rake" ? "rake" : categoryText(x.reason)})`);
}

/** The choices of this page's seat in the open window: bids 0..maxBid in the bid window, the
 * bets min..max of its Turn in the bet window (the banker does not bet), the show in the show
 * window; none once it decided or outside a window. */
export function choices(st: NiuState, mySeat: number, banker: number | null, pending: boolean,
                        min: number | null, max: number | null): NiuAction[] {
    if (!pending || st.phase === null)
        return [];
    const me = st.seats.find((s) => s.seat === mySeat);
    if (me === undefined)
        return [];
    if (st.phase === NiuPhase.BIDDING) {
        const out: NiuAction[] = [];
        for (let b = 0; b <= (max ?? st.maxBid); b++)
            out.push({ move: NiuMove.BID, amount: b });
        return out;
    }
    if (st.phase === NiuPhase.BETTING) {
        if (banker === mySeat || min === null || max === null || min > max)
            return [];
        const out: NiuAction[] = [];
        for (let b = min; b <= max; b++)
            out.push({ move: NiuMove.BET, amount: b });
        return out;
    }
    return [{ move: NiuMove.SHOW }];
}
