// Niu Niu's own messages (games/niuniu/niuniu.proto) and the texts the table draws of them
// (docs/rules/niuniu.md "The engine"). Like Zha Jin Hua's (src/zjh.ts) they travel inside the
// client protocol's game envelope (docs/protocol.md "Games on the table kit: ENGINE_GAME"): a
// NiuAction is the body of Action.game (and of the Play that broadcasts it), a NiuState the body
// of Snapshot.game_state, a NiuEvent the body of ServerMessage.game_event. The SDK carries these
// bodies as bytes; this file writes and reads them in protobuf's wire format (proto2, no packed
// fields). A malformed body throws a RangeError.

export enum NiuMove {
    BID = 1,  /* the bid window: amount 0 (no bid) .. max_bid */
    BET = 2,  /* the bet window (punters): amount a bet option, in stakes */
    SHOW = 3, /* the show window */
}

export enum NiuPhase {
    BIDDING = 1,
    BETTING = 2,
    SHOWING = 3,
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

/* ---- the wire format ---------------------------------------------------------------------- */

function varint(out: number[], v: number): void {
    if (!Number.isSafeInteger(v) || v < 0)
        throw new RangeError(`niuniu: ${v} cannot be encoded here`);
    while (v >= 0x80) {
        out.push((v % 0x80) | 0x80);
        v = Math.floor(v / 0x80);
    }
    out.push(v);
}

/** A NiuAction as the body of Action.game. */
export function encodeAction(a: NiuAction): Uint8Array {
    if (!(a.move in NiuMove))
        throw new RangeError(`niuniu: no move ${String(a.move)}`);
    const out: number[] = [1 << 3 | 0];
    varint(out, a.move);
    if (a.amount !== undefined) {
        out.push(2 << 3 | 0);
        varint(out, a.amount);
    }
    return Uint8Array.from(out);
}

/* The fields of one message: number -> values (varints as numbers, length-delimited as bytes). */
type Fields = Map<number, (number | Uint8Array)[]>;

function fields(b: Uint8Array): Fields {
    const f: Fields = new Map();
    let i = 0;
    const readVarint = (): number => {
        let v = 0, mul = 1;
        for (let n = 0; n < 10; n++) {
            if (i >= b.length)
                throw new RangeError("niuniu: a varint runs past the end of the message");
            const byte = b[i++];
            v += (byte & 0x7f) * mul;
            mul *= 0x80;
            if ((byte & 0x80) === 0)
                return v;
        }
        throw new RangeError("niuniu: a varint longer than 10 bytes");
    };
    while (i < b.length) {
        const key = readVarint();
        const no = Math.floor(key / 8), type = key & 7;
        let v: number | Uint8Array;
        if (type === 0) {
            v = readVarint();
        } else if (type === 2) {
            const len = readVarint();
            if (i + len > b.length)
                throw new RangeError("niuniu: a field runs past the end of the message");
            v = b.subarray(i, i + len);
            i += len;
        } else if (type === 1 || type === 5) {
            if (i + (type === 1 ? 8 : 4) > b.length)
                throw new RangeError("niuniu: a field runs past the end of the message");
            i += type === 1 ? 8 : 4; /* fixed-width: none in these messages; skipped */
            continue;
        } else {
            throw new RangeError(`niuniu: wire type ${type} is not expected`);
        }
        const list = f.get(no) ?? [];
        list.push(v);
        f.set(no, list);
    }
    return f;
}

const int = (f: Fields, no: number): number | null => {
    const v = f.get(no)?.at(-1);
    return typeof v === "number" ? v : null;
};
const bytes = (f: Fields, no: number): Uint8Array | null => {
    const v = f.get(no)?.at(-1);
    return v instanceof Uint8Array ? v : null;
};
const required = (f: Fields, no: number, what: string): number => {
    const v = int(f, no);
    if (v === null)
        throw new RangeError(`niuniu: ${what} is missing`);
    return v;
};

/** The NiuAction of a Play's Action.game body. */
export function decodeAction(body: Uint8Array): NiuAction {
    const f = fields(body);
    const move = int(f, 1);
    if (move === null || !(move in NiuMove))
        throw new RangeError(`niuniu: an action without a known move (${String(move)})`);
    const a: NiuAction = { move };
    const amount = int(f, 2);
    if (amount !== null)
        a.amount = amount;
    return a;
}

/** The NiuState of a Snapshot's game_state body. */
export function decodeState(body: Uint8Array): NiuState {
    const f = fields(body);
    const seats = (f.get(3) ?? []).filter((v): v is Uint8Array => v instanceof Uint8Array).map((b) => {
        const s = fields(b);
        return { seat: required(s, 1, "NiuSeat.seat"), bid: int(s, 2), bet: int(s, 3),
                 shownCards: Array.from(bytes(s, 4) ?? []) };
    });
    const phase = int(f, 1);
    return {
        phase: phase !== null && phase in NiuPhase ? phase : null,
        mult: int(f, 2),
        seats,
        ownCards: Array.from(bytes(f, 4) ?? []),
        maxBid: required(f, 5, "NiuState.max_bid"),
    };
}

/** The NiuEvent of a game_event body. */
export function decodeEvent(body: Uint8Array): NiuEvent {
    const f = fields(body);
    const sub = (no: number): Fields | null => {
        const b = bytes(f, no);
        return b === null ? null : fields(b);
    };
    let m: Fields | null;
    if ((m = sub(1)) !== null)
        return { kind: "banker", seat: required(m, 1, "NiuBanker.seat"), mult: required(m, 2, "NiuBanker.mult") };
    if ((m = sub(2)) !== null)
        return { kind: "shown", seat: required(m, 1, "NiuShown.seat"), cards: Array.from(bytes(m, 2) ?? []),
                 category: new TextDecoder("utf-8", { fatal: true }).decode(bytes(m, 3) ?? new Uint8Array()) };
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
