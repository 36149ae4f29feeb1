// The croupier client: one player's session with croupier-gate over WebSocket
// (docs/protocol.md "Transports"; one binary message = one ClientMessage / ServerMessage).
//
// The lossless part lives here (docs/gateway.md "GoAway and reconnects"): on GoAway{SHUTDOWN}
// (or a lost connection) the client waits the gateway's jittered reconnect delay, connects to
// another gateway of its list, logs in again, resumes the seat, and sends the requests that
// were waiting for an answer again with the same request id (the gateway and the game server
// answer a repeat from memory, so nothing is applied twice). Request ids come from one counter
// per client and survive reconnects. The application sees one "reconnected" event and a
// "snapshot", never a dropped game.
//
// A gateway can also stop answering without closing anything (frozen, cut off: its kernel may
// still accept what the client writes). The keepalive notices (docs/protocol.md "Keepalive"):
// nothing received for keepaliveIdleMs, a Ping; nothing at all keepaliveTimeoutMs after it, the
// connection is dropped as lost ("gatewaySilent") and the reconnect above moves to the next
// gateway.
import { croupier } from "../gen/client.js";

export { croupier };
export type ServerMessage = croupier.ServerMessage;

/** A request the gateway refused: the protocol's ErrorCode, its name, and whether a retry may
 * succeed. */
export class CroupierError extends Error {
    readonly code: number;
    readonly codeName: string;
    readonly retriable: boolean;
    constructor(code: number, message: string, retriable: boolean) {
        const name = croupier.ErrorCode[code] ?? `ERROR_${code}`;
        super(`${name}: ${message}`);
        this.code = code;
        this.codeName = name;
        this.retriable = retriable;
    }
}

/** What a WebSocket constructor must offer: the browser's, or the `ws` package in Node. */
export interface WebSocketLike {
    binaryType: string;
    readyState: number;
    send(data: Uint8Array): void;
    close(code?: number, reason?: string): void;
    onopen: ((ev: unknown) => void) | null;
    onmessage: ((ev: { data: unknown }) => void) | null;
    onclose: ((ev: { code: number; reason: string }) => void) | null;
    onerror: ((ev: unknown) => void) | null;
}
export type WebSocketCtor = new (url: string) => WebSocketLike;

export interface ClientOptions {
    /** Gateway WebSocket URLs (ws:// or wss://); the client starts with the first and moves to
     * the next one on every reconnect. */
    urls: string[];
    /** The login token, or a function returning a fresh one (called at every login). */
    token: string | (() => string | Promise<string>);
    /** The WebSocket constructor; default: globalThis.WebSocket, else the `ws` package. */
    WebSocket?: WebSocketCtor;
    /** How long a request may take in all, retries and reconnects included (ms; 10000). */
    requestBudgetMs?: number;
    /** Waiting for a connection and its login (ms; 5000). */
    connectTimeoutMs?: number;
    /** Upper bound of the backoff between failed reconnects (ms; 5000). */
    maxBackoffMs?: number;
    /** Keepalive: a Ping after this long without receiving anything from the gateway (ms;
     * 3000; 0 turns the keepalive off). */
    keepaliveIdleMs?: number;
    /** Keepalive: nothing received this long after that Ping, the gateway is taken for dead:
     * "gatewaySilent", then the reconnect to another gateway (ms; 5000). */
    keepaliveTimeoutMs?: number;
}

type EventMap = {
    deal: croupier.IDeal;
    turn: croupier.ITurn;
    play: croupier.IPlay;
    roundEnd: croupier.IRoundEnd;
    snapshot: croupier.ISnapshot;
    moved: croupier.IMoved;
    tableClosing: croupier.ITableClosing;
    /** A private room's scoreboard: after each deal and at its end (docs/protocol.md). */
    room: croupier.IRoomInfo;
    goAway: croupier.IGoAway;
    reconnected: { url: string; snapshot: croupier.ISnapshot | null };
    disconnected: { code: number; reason: string };
    /** The gateway sent nothing, not even the Pong of a keepalive Ping, for silentMs: the
     * connection is dropped and the client moves to another gateway ("disconnected", then
     * "reconnected"). */
    gatewaySilent: { url: string; silentMs: number };
    closed: { reason: string };
};
export type ClientEvent = keyof EventMap;

type Pending = {
    id: number;
    msg: croupier.IClientMessage;
    deadline: number;
    resolve: (m: croupier.ServerMessage) => void;
    reject: (e: Error) => void;
    timer?: ReturnType<typeof setTimeout>;
    sentGen: number; /* the connection it was last sent on */
};

/** What `join()` resolves to: the `Joined` of a new seat, or, when the game server finds the
 * player already seated there (a repeated Join), that seat's `Snapshot`. Exactly one is set. */
export type JoinResult =
    | { joined: croupier.IJoined; snapshot?: undefined }
    | { joined?: undefined; snapshot: croupier.ISnapshot };

/* The amounts the gateway refuses with BAD_REQUEST and closes the connection for (docs/protocol.md
 * "Actions" and "Message rules"): checked before sending, so the request is refused at once and
 * the connection kept. Also refuses what would not encode exactly (a fraction, beyond 2^53). */
function checkRequest(body: Omit<croupier.IClientMessage, "requestId">): string | null {
    const positive = (path: string, v: unknown, what: string): string | null =>
        typeof v !== "number" || !Number.isSafeInteger(v) || v <= 0
            ? `ClientMessage.${path}: ${what} (got ${String(v)})` : null;
    if (body.join)
        return positive("join.stake", body.join.stake, "an integer > 0");
    if (body.createRoom)
        return positive("create_room.stake", body.createRoom.stake, "an integer > 0");
    if (body.listTables && body.listTables.stake !== undefined && body.listTables.stake !== null)
        return positive("list_tables.stake", body.listTables.stake, "an integer > 0");
    const h = body.action?.holdem;
    if (h && (h.move === croupier.HoldemMove.HOLDEM_BET || h.move === croupier.HoldemMove.HOLDEM_RAISE))
        return positive("action.holdem.amount", h.amount, "required for BET/RAISE, an integer > 0");
    const b = body.action?.blackjack;
    if (b && b.move === croupier.BlackjackMove.BJ_BET)
        return positive("action.blackjack.amount", b.amount, "required for BET, an integer > 0");
    return null;
}

const RETRIABLE = new Set([
    croupier.ErrorCode.DEADLINE_EXCEEDED,
    croupier.ErrorCode.UNAVAILABLE,
    croupier.ErrorCode.DRAINING,
]);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function defaultWebSocket(): Promise<WebSocketCtor> {
    const g = globalThis as unknown as { WebSocket?: WebSocketCtor };
    if (g.WebSocket !== undefined)
        return g.WebSocket;
    const mod = await import("ws");
    return mod.default as unknown as WebSocketCtor;
}

export class Client {
    private readonly opts: Required<Omit<ClientOptions, "WebSocket">> & { WebSocket?: WebSocketCtor };
    private ws: WebSocketLike | null = null;
    private urlIndex = 0;
    private nextId = 1;
    private readonly pending = new Map<number, Pending>();
    private readonly listeners = new Map<string, Set<(arg: unknown) => void>>();
    private state: "idle" | "open" | "reconnecting" | "closed" = "idle";
    private seated = false;
    private reconnectDelay = 0;
    private reconnecting: Promise<void> | null = null;
    private gen = 0; /* connections opened */
    /* Keepalive of the current connection: when it last received anything, when the last probe
     * Ping went out (0: none), and the timer of the next look. */
    private lastRxAt = 0;
    private probeAt = 0;
    private keepaliveTimer: ReturnType<typeof setTimeout> | null = null;
    /* Ends the Resume of a reconnect at once when its connection is lost too (resumeNow). */
    private resumeLost: (() => void) | null = null;
    /* The last Error pushed without a request id on this connection (see refused()). */
    private pushedError: croupier.IError | null = null;
    /** The player id and the last LoginResult, once logged in. */
    playerId = 0;
    login: croupier.ILoginResult | null = null;

    constructor(opts: ClientOptions) {
        if (opts.urls.length === 0)
            throw new Error("croupier: no gateway URL");
        this.opts = {
            requestBudgetMs: 10000,
            connectTimeoutMs: 5000,
            maxBackoffMs: 5000,
            keepaliveIdleMs: 3000,
            keepaliveTimeoutMs: 5000,
            ...opts,
        };
    }

    on<E extends ClientEvent>(event: E, fn: (arg: EventMap[E]) => void): this {
        let set = this.listeners.get(event);
        if (set === undefined)
            this.listeners.set(event, (set = new Set()));
        set.add(fn as (arg: unknown) => void);
        return this;
    }

    off<E extends ClientEvent>(event: E, fn: (arg: EventMap[E]) => void): this {
        this.listeners.get(event)?.delete(fn as (arg: unknown) => void);
        return this;
    }

    private emit<E extends ClientEvent>(event: E, arg: EventMap[E]): void {
        for (const fn of this.listeners.get(event) ?? [])
            fn(arg);
    }

    /** The URL the client is connected (or connecting) to. */
    get url(): string {
        return this.opts.urls[this.urlIndex % this.opts.urls.length];
    }

    /** Connects to the first gateway that answers (in list order) and logs in. */
    async connect(): Promise<croupier.ILoginResult> {
        let last: unknown = null;
        for (let i = 0; i < this.opts.urls.length; i++) {
            try {
                const r = await this.open(this.url);
                this.state = "open";
                this.keepaliveStart();
                return r;
            } catch (e) {
                if (e instanceof CroupierError)
                    throw e; /* the token is refused: another gateway would refuse it too */
                last = e;
                this.urlIndex++;
            }
        }
        throw last instanceof Error ? last : new Error("croupier: no gateway answered");
    }

    /** Closes the connection for good (no reconnect); waiting requests are rejected. */
    close(): void {
        this.state = "closed";
        this.keepaliveStop();
        this.ws?.close(1000, "client closing");
        this.ws = null;
        for (const p of this.pending.values()) {
            clearTimeout(p.timer);
            p.reject(new Error("croupier: client closed"));
        }
        this.pending.clear();
    }

    listTables(filter: { engine?: croupier.Engine; game?: string; stake?: number } = {}):
        Promise<croupier.ITableAd[]> {
        return this.request({ listTables: filter }).then((m) => m.tableList?.tables ?? []);
    }

    /** Joins a table: `{joined}` (the new seat), or `{snapshot}` when the game server finds the
     * player already seated there (that seat's state; no second seat is taken). */
    async join(engine: croupier.Engine, game: string, stake: number): Promise<JoinResult> {
        const m = await this.request({ join: { engine, game, stake } });
        this.seated = true;
        if (m.joined)
            return { joined: m.joined };
        if (m.snapshot)
            return { snapshot: m.snapshot };
        throw new Error(`croupier: a Join answered by ${m.body ?? "nothing"}`);
    }

    /** One move; resolves with the Result (its event_seq is the table's number of the Play). */
    async act(action: croupier.IAction): Promise<{ eventSeq: number }> {
        const m = await this.request({ action });
        return { eventSeq: Number(m.eventSeq ?? 0) };
    }

    async leave(): Promise<void> {
        await this.request({ leave: {} });
        this.seated = false;
    }

    /** Creates a private room and sits in it as its host: the Joined, whose `room.code` the
     * others join by (docs/protocol.md "Private rooms"). */
    async createRoom(engine: croupier.Engine, game: string, stake: number,
                     rules: croupier.IRoomRules): Promise<croupier.IJoined> {
        const m = await this.request({ createRoom: { engine, game, stake, rules } });
        this.seated = true;
        return m.joined as croupier.IJoined;
    }

    /** Sits in the private room of a 6-digit code. Rejects ROOM_NOT_FOUND, ROOM_FULL,
     * ROOM_STARTED, ROOM_ENDED. */
    async joinRoom(code: string): Promise<croupier.IJoined> {
        const m = await this.request({ joinRoom: { code } });
        this.seated = true;
        return m.joined as croupier.IJoined;
    }

    /** A room's record by code, seated or not: its state and scoreboard, also after its end. */
    async getRoom(code: string): Promise<croupier.IRoomInfo> {
        const m = await this.request({ getRoom: { code } });
        return m.room as croupier.IRoomInfo;
    }

    /** The host disbands its room before the first deal (NOT_HOST, ROOM_STARTED otherwise). */
    async disbandRoom(): Promise<void> {
        await this.request({ leave: { disbandRoom: true } });
        this.seated = false;
    }

    async resume(): Promise<croupier.ISnapshot> {
        const m = await this.request({ resume: {} });
        this.seated = true;
        return m.snapshot as croupier.ISnapshot;
    }

    async ping(): Promise<number> {
        const m = await this.request({ ping: { nonce: Date.now() } });
        return Number(m.pong?.serverTimeMs ?? 0);
    }

    /** Sends a request and waits for its answer, retrying retriable refusals with the same id
     * within the budget, across reconnects. Rejects with CroupierError. */
    request(body: Omit<croupier.IClientMessage, "requestId">): Promise<croupier.ServerMessage> {
        if (this.state === "closed")
            return Promise.reject(new Error("croupier: client closed"));
        const bad = checkRequest(body);
        if (bad !== null)
            return Promise.reject(new CroupierError(croupier.ErrorCode.BAD_REQUEST, bad, false));
        const id = this.nextId++;
        const msg: croupier.IClientMessage = { ...body, requestId: id };
        return new Promise((resolve, reject) => {
            const p: Pending = { id, msg, deadline: Date.now() + this.opts.requestBudgetMs, resolve,
                                 reject, sentGen: 0 };
            p.timer = setTimeout(() => this.expire(p), this.opts.requestBudgetMs);
            this.pending.set(id, p);
            if (this.state === "open")
                this.send(p);
            /* else: sent once the reconnect has logged in */
        });
    }

    private expire(p: Pending): void {
        if (!this.pending.delete(p.id))
            return;
        p.reject(new CroupierError(croupier.ErrorCode.DEADLINE_EXCEEDED,
            "no answer within the request budget", true));
    }

    private send(p: Pending): void {
        if (this.ws !== null && this.ws.readyState === 1) {
            p.sentGen = this.gen;
            this.ws.send(croupier.ClientMessage.encode(p.msg).finish());
        }
    }

    /* One connection: open, login (LoginResult or CroupierError), then the message loop. */
    private async open(url: string): Promise<croupier.ILoginResult> {
        const WS = this.opts.WebSocket ?? (await defaultWebSocket());
        const ws = new WS(url);
        ws.binaryType = "arraybuffer";
        this.ws = ws;
        this.gen++;
        this.pushedError = null;
        const token = typeof this.opts.token === "function" ? await this.opts.token()
                                                             : this.opts.token;
        return new Promise((resolve, reject) => {
            const loginId = this.nextId++;
            let done = false;
            const timer = setTimeout(() => {
                if (!done) {
                    done = true;
                    ws.close(1000, "login timeout");
                    reject(new Error(`croupier: ${url}: no login answer`));
                }
            }, this.opts.connectTimeoutMs);
            ws.onopen = () => {
                ws.send(croupier.ClientMessage.encode({ requestId: loginId, login: { token } })
                            .finish());
            };
            ws.onerror = () => {};
            ws.onclose = (ev) => {
                if (!done) {
                    done = true;
                    clearTimeout(timer);
                    reject(new Error(`croupier: ${url}: closed (${ev.code} ${ev.reason})`));
                    return;
                }
                if (this.ws === ws) {
                    if (ev.code === 1007)
                        this.refused();
                    this.lost(ev.code, ev.reason);
                }
            };
            ws.onmessage = (ev) => {
                if (this.ws === ws)
                    this.lastRxAt = Date.now();
                const m = croupier.ServerMessage.decode(new Uint8Array(ev.data as ArrayBuffer));
                if (!done && Number(m.requestId ?? 0) === loginId) {
                    done = true;
                    clearTimeout(timer);
                    if (m.loginResult) {
                        this.login = m.loginResult;
                        this.playerId = Number(m.loginResult.playerId);
                        resolve(m.loginResult);
                    } else {
                        const e = m.result?.error ?? m.error;
                        reject(new CroupierError(e?.code ?? 0, e?.message ?? "login refused",
                                                 e?.retriable ?? false));
                        ws.close(1000, "login refused");
                    }
                    return;
                }
                if (this.ws === ws)
                    this.onMessage(m);
            };
        });
    }

    private onMessage(m: croupier.ServerMessage): void {
        const rid = Number(m.requestId ?? 0);
        if (rid !== 0) {
            const p = this.pending.get(rid);
            if (p === undefined)
                return; /* an answer to a request given up on */
            const e = m.result?.error ?? (m.body === "error" ? m.error : null);
            if (e) {
                const code = e.code ?? 0;
                if (RETRIABLE.has(code) && Date.now() + 50 < p.deadline) {
                    /* the same id: the gateway and the game server apply it at most once */
                    setTimeout(() => {
                        if (this.pending.has(p.id) && this.state === "open")
                            this.send(p);
                    }, 50);
                    return;
                }
                this.pending.delete(rid);
                clearTimeout(p.timer);
                p.reject(new CroupierError(code, e.message ?? "", e.retriable ?? false));
                return;
            }
            this.pending.delete(rid);
            clearTimeout(p.timer);
            p.resolve(m);
            return;
        }
        switch (m.body) {
        case "deal": this.emit("deal", m.deal!); break;
        case "turn": this.emit("turn", m.turn!); break;
        case "play": this.emit("play", m.play!); break;
        case "roundEnd": this.emit("roundEnd", m.roundEnd!); break;
        case "snapshot": this.emit("snapshot", m.snapshot!); break;
        case "room": this.emit("room", m.room!); break;
        case "moved":
            this.seated = true;
            this.emit("moved", m.moved!);
            break;
        case "tableClosing":
            if (!m.tableClosing?.afterMs)
                this.seated = false; /* no move follows: join again */
            this.emit("tableClosing", m.tableClosing!);
            break;
        case "goAway": {
            const g = m.goAway!;
            this.emit("goAway", g);
            if (g.reason === croupier.GoAwayReason.GOAWAY_SESSION_REPLACED) {
                this.state = "closed";
                this.emit("closed", { reason: "session replaced by a newer login" });
            } else {
                this.reconnectDelay = Number(g.reconnectDelayMs ?? 0);
            }
            break;
        }
        case "error":
            /* A refusal without a request id (docs/protocol.md "Transports", close 1007): the
             * close that follows fails the requests sent on this connection (refused()). */
            this.pushedError = m.error ?? null;
            break;
        default:
            break;
        }
    }

    /* The gateway closed with 1007: a request it could not accept (the gateway names it in the
     * Error it pushes first, and that request is already rejected). Requests still waiting that
     * went out on this connection are rejected with the pushed Error, not sent again into the
     * same refusal. */
    private refused(): void {
        const e = this.pushedError;
        this.pushedError = null;
        if (e === null)
            return;
        for (const p of [...this.pending.values()]) {
            if (p.sentGen !== this.gen)
                continue;
            this.pending.delete(p.id);
            clearTimeout(p.timer);
            p.reject(new CroupierError(e.code ?? 0, e.message ?? "", false));
        }
    }

    /* The keepalive of a logged-in connection (docs/protocol.md "Keepalive"). */
    private keepaliveStart(): void {
        this.keepaliveStop();
        if (this.opts.keepaliveIdleMs <= 0)
            return;
        this.lastRxAt = Date.now();
        this.probeAt = 0;
        this.keepaliveArm(this.opts.keepaliveIdleMs);
    }

    private keepaliveStop(): void {
        if (this.keepaliveTimer !== null)
            clearTimeout(this.keepaliveTimer);
        this.keepaliveTimer = null;
    }

    private keepaliveArm(ms: number): void {
        this.keepaliveTimer = setTimeout(() => this.keepaliveCheck(), Math.max(ms, 1));
    }

    /* Received nothing for keepaliveIdleMs: a Ping (outside the request map: its Pong, like any
     * frame, only proves the gateway alive). Still nothing keepaliveTimeoutMs after it: the
     * gateway is silent. A frozen gateway never answers a close either, so the socket is
     * abandoned at once (terminate() where the WebSocket has it, as `ws` does) and the loss
     * handled now, not when the close handshake would time out. */
    private keepaliveCheck(): void {
        this.keepaliveTimer = null;
        const ws = this.ws;
        if (ws === null || this.state !== "open")
            return;
        const now = Date.now(), idle = this.opts.keepaliveIdleMs;
        if (now - this.lastRxAt < idle) {
            this.keepaliveArm(this.lastRxAt + idle - now);
            return;
        }
        if (this.probeAt <= this.lastRxAt) {
            this.probeAt = now;
            if (ws.readyState === 1)
                ws.send(croupier.ClientMessage.encode({ requestId: this.nextId++,
                                                        ping: { nonce: now } }).finish());
            this.keepaliveArm(this.opts.keepaliveTimeoutMs);
            return;
        }
        if (now - this.probeAt < this.opts.keepaliveTimeoutMs) {
            this.keepaliveArm(this.probeAt + this.opts.keepaliveTimeoutMs - now);
            return;
        }
        const url = this.url, silentMs = now - this.lastRxAt;
        this.ws = null; /* its late onclose is no longer ours */
        const t = ws as unknown as { terminate?: () => void };
        try {
            if (typeof t.terminate === "function")
                t.terminate();
            else
                ws.close(4000, "gateway silent");
        } catch { /* already closing */ }
        this.emit("gatewaySilent", { url, silentMs });
        this.lost(4000, "gateway silent");
    }

    /* The connection ended: reconnect unless closed on purpose. */
    private lost(code: number, reason: string): void {
        this.keepaliveStop();
        this.ws = null;
        this.emit("disconnected", { code, reason });
        if (this.state === "closed")
            return;
        if (this.reconnecting !== null) {
            /* Lost again while the reconnect resumes (that gateway closed or went silent as
             * well): its loop goes on to the next gateway instead of waiting out the Resume. */
            this.resumeLost?.();
            return;
        }
        this.state = "reconnecting";
        this.reconnecting = this.reconnect().finally(() => (this.reconnecting = null));
    }

    private async reconnect(): Promise<void> {
        let delay = this.reconnectDelay;
        this.reconnectDelay = 0;
        let backoff = 100;
        for (;;) {
            if (delay > 0)
                await sleep(delay);
            if (this.state === "closed")
                return;
            this.urlIndex++; /* another gateway */
            try {
                const login = await this.open(this.url);
                let snapshot: croupier.ISnapshot | null = null;
                this.state = "open";
                this.keepaliveStart();
                if (login.seated || this.seated) {
                    const id = this.nextId++;
                    const r = await this.resumeNow(id);
                    if (r === "lost")
                        throw new Error(`croupier: ${this.url}: lost during the resume`);
                    snapshot = r;
                }
                /* The requests still waiting go again, with their ids (those not sent on this
                 * connection yet). */
                for (const p of this.pending.values())
                    if (p.sentGen !== this.gen)
                        this.send(p);
                if (snapshot !== null)
                    this.emit("snapshot", snapshot);
                this.emit("reconnected", { url: this.url, snapshot });
                return;
            } catch (e) {
                if (e instanceof CroupierError && !e.retriable) {
                    this.close();
                    this.emit("closed", { reason: e.message });
                    return;
                }
                delay = Math.min(backoff, this.opts.maxBackoffMs) * (0.5 + Math.random() / 2);
                backoff *= 2;
            }
        }
    }

    /* A Resume sent ahead of the waiting requests; null when there is no seat any more, "lost"
     * when the connection was lost before its answer (the seat is still ours: resume it
     * through the next gateway). */
    private resumeNow(id: number): Promise<croupier.ISnapshot | null | "lost"> {
        return new Promise((resolve) => {
            const p: Pending = {
                id,
                msg: { requestId: id, resume: {} },
                deadline: Date.now() + this.opts.requestBudgetMs,
                resolve: (m) => {
                    this.resumeLost = null;
                    resolve(m.snapshot ?? null);
                },
                reject: () => {
                    this.resumeLost = null;
                    this.seated = false;
                    resolve(null);
                },
                sentGen: 0,
            };
            this.resumeLost = () => {
                this.resumeLost = null;
                if (this.pending.delete(id)) {
                    clearTimeout(p.timer);
                    resolve("lost");
                }
            };
            p.timer = setTimeout(() => this.expire(p), this.opts.requestBudgetMs);
            this.pending.set(id, p);
            this.send(p);
        });
    }
}
