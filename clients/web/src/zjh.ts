// Zha Jin Hua's own messages (games/zhajinhua/zhajinhua.proto), which travel inside the client
// protocol's game-neutral envelope (docs/protocol.md "Games on the table kit: ENGINE_GAME"): a
// ZjhAction is the body of Action.game (and of the Play that broadcasts it), a ZjhState the body
// of Snapshot.game_state. The SDK carries these bodies as bytes without opening them; this file
// writes and reads the few fields the page needs, in protobuf's wire format (varints and
// length-delimited fields; proto2, no packed fields in these messages). A malformed body throws
// a RangeError.

export enum ZjhMove {
    FOLD = 1,
    CALL = 2,  /* pay the unit (twice once looked); an all-in call when the stack is short */
    RAISE = 3, /* unit: the new unit, above the current one, at most the cap */
    LOOK = 4,  /* look at one's own cards: any time, also out of turn, once */
    COMPARE = 5, /* target: the live seat to compare with; from betting round 2 */
}

export interface ZjhAction {
    move: ZjhMove;
    unit?: number;
    target?: number;
}

export interface ZjhSeat {
    seat: number;
    stack: number;
    putIn: number;
    looked: boolean;
    folded: boolean;
    allIn: boolean;
}

export interface ZjhState {
    inHand: boolean;
    bettingRound: number;
    unit: number;
    pot: number;
    dealerSeat: number | null;
    ante: number;
    maxUnit: number;
    maxRounds: number;
    ownCards: number[];
    seats: ZjhSeat[];
    toCall: number | null;
    canCompare: boolean;
}

/* ---- the wire format ---------------------------------------------------------------------- */

function varint(out: number[], v: number): void {
    if (!Number.isSafeInteger(v) || v < 0)
        throw new RangeError(`zjh: ${v} cannot be encoded here`);
    while (v >= 0x80) {
        out.push((v % 0x80) | 0x80);
        v = Math.floor(v / 0x80);
    }
    out.push(v);
}

/** A ZjhAction as the body of Action.game. */
export function encodeAction(a: ZjhAction): Uint8Array {
    const out: number[] = [];
    out.push(1 << 3 | 0);
    varint(out, a.move);
    if (a.unit !== undefined) {
        out.push(2 << 3 | 0);
        varint(out, a.unit);
    }
    if (a.target !== undefined) {
        out.push(3 << 3 | 0);
        varint(out, a.target);
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
                throw new RangeError("zjh: a varint runs past the end of the message");
            const byte = b[i++];
            v += (byte & 0x7f) * mul;
            mul *= 0x80;
            if ((byte & 0x80) === 0)
                return v;
        }
        throw new RangeError("zjh: a varint longer than 10 bytes");
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
                throw new RangeError("zjh: a field runs past the end of the message");
            v = b.subarray(i, i + len);
            i += len;
        } else if (type === 1 || type === 5) {
            i += type === 1 ? 8 : 4; /* fixed-width: none in these messages; skipped */
            continue;
        } else {
            throw new RangeError(`zjh: wire type ${type} is not expected`);
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

/** The ZjhAction of a Play's Action.game body. */
export function decodeAction(body: Uint8Array): ZjhAction {
    const f = fields(body);
    const move = int(f, 1);
    if (move === null || !(move in ZjhMove))
        throw new RangeError(`zjh: an action without a known move (${String(move)})`);
    const a: ZjhAction = { move };
    const unit = int(f, 2), target = int(f, 3);
    if (unit !== null)
        a.unit = unit;
    if (target !== null)
        a.target = target;
    return a;
}

/** The ZjhState of a Snapshot's game_state body. */
export function decodeState(body: Uint8Array): ZjhState {
    const f = fields(body);
    const seats = (f.get(10) ?? []).filter((v): v is Uint8Array => v instanceof Uint8Array).map((b) => {
        const s = fields(b);
        return { seat: int(s, 1) ?? 0, stack: int(s, 2) ?? 0, putIn: int(s, 3) ?? 0,
                 looked: int(s, 4) === 1, folded: int(s, 5) === 1, allIn: int(s, 6) === 1 };
    });
    return {
        inHand: int(f, 1) === 1,
        bettingRound: int(f, 2) ?? 0,
        unit: int(f, 3) ?? 0,
        pot: int(f, 4) ?? 0,
        dealerSeat: int(f, 5),
        ante: int(f, 6) ?? 0,
        maxUnit: int(f, 7) ?? 0,
        maxRounds: int(f, 8) ?? 0,
        ownCards: Array.from(bytes(f, 9) ?? []),
        seats,
        toCall: int(f, 11),
        canCompare: int(f, 12) === 1,
    };
}

/** A ZjhEvent (ServerMessage.game_event body): one of its kinds. */
export type ZjhEvent =
    | { kind: "looked"; seat: number }
    | { kind: "cards"; seat: number; cards: number[] }
    | { kind: "compared"; asker: number; target: number; loser: number; askerCards: number[];
        targetCards: number[]; allIn: boolean }
    | { kind: "allIn"; seat: number; won: boolean }
    | { kind: "round"; bettingRound: number };

/** The ZjhEvent of a game_event body. */
export function decodeEvent(body: Uint8Array): ZjhEvent {
    const f = fields(body);
    const sub = (no: number): Fields | null => {
        const b = bytes(f, no);
        return b === null ? null : fields(b);
    };
    let m: Fields | null;
    if ((m = sub(1)) !== null)
        return { kind: "looked", seat: int(m, 1) ?? 0 };
    if ((m = sub(2)) !== null)
        return { kind: "cards", seat: int(m, 1) ?? 0, cards: Array.from(bytes(m, 2) ?? []) };
    if ((m = sub(3)) !== null)
        return { kind: "compared", asker: int(m, 1) ?? 0, target: int(m, 2) ?? 0, loser: int(m, 3) ?? 0,
                 askerCards: Array.from(bytes(m, 4) ?? []), targetCards: Array.from(bytes(m, 5) ?? []),
                 allIn: int(m, 6) === 1 };
    if ((m = sub(4)) !== null)
        return { kind: "allIn", seat: int(m, 1) ?? 0, won: int(m, 2) === 1 };
    if ((m = sub(5)) !== null)
        return { kind: "round", bettingRound: int(m, 1) ?? 0 };
    throw new RangeError("zjh: an event of no known kind");
}
