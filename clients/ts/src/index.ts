// @croupier/client: the TypeScript SDK of croupier's client protocol (docs/protocol.md).
export { Client, CroupierError, croupier } from "./client.js";
export type { ClientOptions, ClientEvent, JoinResult, ServerMessage, WebSocketCtor, WebSocketLike } from "./client.js";
