// What src/zjh.ts and src/niuniu.ts share: a game's own message (the body of Action.game,
// Snapshot.game_state or ServerMessage.game_event, docs/protocol.md "Games on the table kit:
// ENGINE_GAME") is written and read by the SDK's protobufjs code, generated at build time from
// the game's .proto (croupier.zjh, croupier.niuniu; clients/ts/scripts/gen.mjs). These helpers
// put the page's checks and error messages around it: a body protobufjs cannot read, or a value
// it would silently truncate on the wire, is a RangeError that names the game and the message.

/* A generated message type: only its decoder is needed here. */
interface Decodable<T> {
    decode(body: Uint8Array): T;
}

/* The message a protobufjs ProtocolError (a required field missing) was decoding: its
 * `instance` is the partly decoded message, whose generated class knows its type's name. */
function failedType(e: unknown): string | null {
    const ctor = (e as { instance?: { constructor?: { getTypeUrl?: (prefix: string) => string } } })
        .instance?.constructor;
    const url = typeof ctor?.getTypeUrl === "function" ? ctor.getTypeUrl("") : null;
    return url === null ? null : url.slice(url.lastIndexOf(".") + 1);
}

/**
 * Decodes body as the message `name` of `game` with its generated type. A malformed body (cut
 * short, a wire type that cannot be skipped, a required field missing, here or in a nested
 * message) throws a RangeError "<game>: a malformed <name> (<what protobufjs said>)", with a
 * nested message's name before its missing field; protobufjs' own error is its `cause`.
 */
export function decodeBody<T>(game: string, name: string, type: Decodable<T>, body: Uint8Array): T {
    try {
        return type.decode(body);
    } catch (e) {
        const what = e instanceof Error ? e.message : String(e);
        const where = failedType(e);
        const inner = where === null || where === name ? "" : `${where}: `;
        throw new RangeError(`${game}: a malformed ${name} (${inner}${what})`, { cause: e });
    }
}

/** Whether a decoded message carried `field` on the wire (proto2 optional fields read as their
 * default when absent; the decoder sets only the fields it read). */
export function present(message: object, field: string): boolean {
    return Object.hasOwn(message, field);
}

/**
 * v, checked to fit a field of at most `max` (0xffffffff for a uint32, Number.MAX_SAFE_INTEGER
 * for an int64 the page only fills with amounts): a whole number 0..max, else a RangeError.
 * protobufjs would write a fraction, a negative or a too-large number as some other value.
 */
export function checkUint(game: string, what: string, v: number, max: number): number {
    if (!Number.isSafeInteger(v) || v < 0 || v > max)
        throw new RangeError(`${game}: ${what} ${v} cannot be encoded here`);
    return v;
}
