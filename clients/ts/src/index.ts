// @croupier/client: the TypeScript SDK of croupier's client protocol (docs/protocol.md).
export { Client, CroupierError, croupier } from "./client.js";
export type { ClientOptions, ClientEvent, JoinResult, ServerMessage, WebSocketCtor, WebSocketLike } from "./client.js";
export { BLACK_JOKER, RED_JOKER, cardCode, decodeCard, decodeCards, encodeCards, gameDeals, validCode } from "./cards.js";
export type { Card, Joker, Suit } from "./cards.js";
