/* Valid samples of every message kind; see test_proto_samples.h. */
#include "test_proto_samples.h"

static uint8_t cards_pair[] = {FRAME_CARD(9, 0), FRAME_CARD(9, 3)};
static uint8_t cards_hole[] = {FRAME_CARD(14, 3), FRAME_CARD(13, 3)};
static uint8_t cards_board[] = {FRAME_CARD(2, 1), FRAME_CARD(7, 2), FRAME_CARD(12, 0)};
static uint8_t cards_rocket[] = {FRAME_CARD_BLACK_JOKER, FRAME_CARD_RED_JOKER};
static uint8_t cards_hand[] = {FRAME_CARD(3, 0),  FRAME_CARD(3, 1),  FRAME_CARD(5, 2),
                               FRAME_CARD(11, 3), FRAME_CARD(14, 0), FRAME_CARD_RED_JOKER};
static uint8_t cards_bj[] = {FRAME_CARD(10, 2), FRAME_CARD(6, 1)};
/* A table-kit game's own message, serialized: opaque to the codec (bytes no card code holds). */
static uint8_t game_body[] = {0x08, 0x02, 0x12, 0x02, 0x00, 0xff, 0x18, 0x64};

#define BIN(a) ((ProtobufCBinaryData){sizeof(a), (a)})

/* ---- client -> gate ---------------------------------------------------------------------- */

static void client_action(samples_client_cb cb, void *arg, const char *name, Croupier__Action *a,
                          int *n)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.request_id = 100 + (uint64_t)*n;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_ACTION;
    m.action = a;
    cb(arg, name, &m);
    (*n)++;
}

int samples_client(samples_client_cb cb, void *arg)
{
    int n = 0;
    {
        Croupier__Login login = CROUPIER__LOGIN__INIT;
        login.token = "v1.42.1767225600.c2lnbmF0dXJl";
        login.client_version = "bot/0.1 ünïcödé";
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        m.request_id = 1;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN;
        m.login = &login;
        cb(arg, "login", &m), n++;
    }
    {
        static const struct {
            const char *name;
            Croupier__Engine engine;
            const char *game;
            int64_t stake;
        } joins[] = {
            {"join_traditional", CROUPIER__ENGINE__ENGINE_TRADITIONAL, "doudizhu", 10},
            {"join_holdem", CROUPIER__ENGINE__ENGINE_HOLDEM, "holdem", 50},
            {"join_persistent", CROUPIER__ENGINE__ENGINE_PERSISTENT, "blackjack", 25},
        };
        for (size_t i = 0; i < sizeof joins / sizeof joins[0]; i++) {
            Croupier__Join j = CROUPIER__JOIN__INIT;
            j.engine = joins[i].engine;
            j.game = (char *)joins[i].game;
            j.stake = joins[i].stake;
            Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
            m.request_id = 2 + i;
            m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_JOIN;
            m.join = &j;
            cb(arg, joins[i].name, &m), n++;
        }
    }
    {
        Croupier__Leave leave = CROUPIER__LEAVE__INIT;
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        m.request_id = 10;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LEAVE;
        m.leave = &leave;
        cb(arg, "leave", &m), n++;
    }
    {
        Croupier__Resume resume = CROUPIER__RESUME__INIT;
        resume.has_last_event_seq = 1;
        resume.last_event_seq = 77;
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        m.request_id = 11;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_RESUME;
        m.resume = &resume;
        cb(arg, "resume", &m), n++;
    }
    {
        Croupier__Ping ping = CROUPIER__PING__INIT;
        ping.nonce = UINT64_MAX;
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        m.request_id = UINT64_MAX;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
        m.ping = &ping;
        cb(arg, "ping", &m), n++;
    }
    {
        Croupier__SheddingAction s = CROUPIER__SHEDDING_ACTION__INIT;
        Croupier__Action a = CROUPIER__ACTION__INIT;
        a.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
        a.shedding = &s;
        s.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY;
        s.has_cards = 1;
        s.cards = BIN(cards_pair);
        client_action(cb, arg, "shedding_play", &a, &n);
        s.cards = BIN(cards_rocket);
        client_action(cb, arg, "shedding_play_jokers", &a, &n);
        s.has_cards = 0;
        s.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
        client_action(cb, arg, "shedding_pass", &a, &n);
        s.move = CROUPIER__SHEDDING_MOVE__SHEDDING_BID;
        s.has_bid = 1;
        s.bid = 3;
        client_action(cb, arg, "shedding_bid", &a, &n);
        s.bid = 0;
        client_action(cb, arg, "shedding_bid_decline", &a, &n);
    }
    {
        static const struct {
            const char *name;
            Croupier__HoldemMove move;
            int64_t amount;
        } hm[] = {
            {"holdem_fold", CROUPIER__HOLDEM_MOVE__HOLDEM_FOLD, 0},
            {"holdem_check", CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK, 0},
            {"holdem_call", CROUPIER__HOLDEM_MOVE__HOLDEM_CALL, 0},
            {"holdem_bet", CROUPIER__HOLDEM_MOVE__HOLDEM_BET, 100},
            {"holdem_raise", CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE, INT64_MAX},
        };
        for (size_t i = 0; i < sizeof hm / sizeof hm[0]; i++) {
            Croupier__HoldemAction h = CROUPIER__HOLDEM_ACTION__INIT;
            h.move = hm[i].move;
            h.has_amount = hm[i].amount > 0;
            h.amount = hm[i].amount;
            Croupier__Action a = CROUPIER__ACTION__INIT;
            a.kind_case = CROUPIER__ACTION__KIND_HOLDEM;
            a.holdem = &h;
            client_action(cb, arg, hm[i].name, &a, &n);
        }
    }
    {
        static const struct {
            const char *name;
            Croupier__BlackjackMove move;
            int64_t amount;
            int insure; /* -1: absent */
            int hand;   /* -1: absent */
        } bm[] = {
            {"bj_bet", CROUPIER__BLACKJACK_MOVE__BJ_BET, 25, -1, -1},
            {"bj_hit", CROUPIER__BLACKJACK_MOVE__BJ_HIT, 0, -1, -1},
            {"bj_stand", CROUPIER__BLACKJACK_MOVE__BJ_STAND, 0, -1, 1},
            {"bj_double", CROUPIER__BLACKJACK_MOVE__BJ_DOUBLE, 0, -1, 0},
            {"bj_split", CROUPIER__BLACKJACK_MOVE__BJ_SPLIT, 0, -1, -1},
            {"bj_surrender", CROUPIER__BLACKJACK_MOVE__BJ_SURRENDER, 0, -1, -1},
            {"bj_insurance_yes", CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE, 0, 1, -1},
            {"bj_insurance_no", CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE, 0, 0, -1},
        };
        for (size_t i = 0; i < sizeof bm / sizeof bm[0]; i++) {
            Croupier__BlackjackAction b = CROUPIER__BLACKJACK_ACTION__INIT;
            b.move = bm[i].move;
            b.has_amount = bm[i].amount > 0;
            b.amount = bm[i].amount;
            b.has_insure = bm[i].insure >= 0;
            b.insure = bm[i].insure > 0;
            b.has_hand = bm[i].hand >= 0;
            b.hand = bm[i].hand > 0 ? (uint32_t)bm[i].hand : 0;
            Croupier__Action a = CROUPIER__ACTION__INIT;
            a.kind_case = CROUPIER__ACTION__KIND_BLACKJACK;
            a.blackjack = &b;
            client_action(cb, arg, bm[i].name, &a, &n);
        }
    }
    {
        Croupier__ListTables l = CROUPIER__LIST_TABLES__INIT;
        l.has_engine = 1, l.engine = CROUPIER__ENGINE__ENGINE_HOLDEM;
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        m.request_id = 12;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LIST_TABLES;
        m.list_tables = &l;
        cb(arg, "list_tables", &m), n++;
        l.game = "holdem";
        l.has_stake = 1, l.stake = 50;
        cb(arg, "list_tables_filtered", &m), n++;
        Croupier__ListTables any = CROUPIER__LIST_TABLES__INIT;
        m.list_tables = &any;
        cb(arg, "list_tables_any_engine", &m), n++;
        any.has_engine = 1, any.engine = CROUPIER__ENGINE__ENGINE_GAME;
        any.game = "zhajinhua";
        cb(arg, "list_tables_game", &m), n++;
    }
    {
        Croupier__Join j = CROUPIER__JOIN__INIT;
        j.engine = CROUPIER__ENGINE__ENGINE_GAME;
        j.game = "zhajinhua";
        j.stake = 5;
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        m.request_id = 13;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_JOIN;
        m.join = &j;
        cb(arg, "join_game", &m), n++;
        Croupier__GameAction g = CROUPIER__GAME_ACTION__INIT;
        g.body = BIN(game_body);
        Croupier__Action a = CROUPIER__ACTION__INIT;
        a.kind_case = CROUPIER__ACTION__KIND_GAME;
        a.game = &g;
        client_action(cb, arg, "game_action", &a, &n);
        g.body = (ProtobufCBinaryData){0, NULL};
        client_action(cb, arg, "game_action_empty", &a, &n);
    }
    {
        /* Tournaments (docs/protocol.md "Tournaments"). */
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        m.request_id = 14;
        Croupier__ListTournaments l = CROUPIER__LIST_TOURNAMENTS__INIT;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LIST_TOURNAMENTS;
        m.list_tournaments = &l;
        cb(arg, "list_tournaments", &m), n++;
        l.has_status = 1, l.status = CROUPIER__TOURNAMENT_STATUS__TOUR_REGISTERING;
        l.has_limit = 1, l.limit = 200;
        cb(arg, "list_tournaments_filtered", &m), n++;
        Croupier__GetTournament gt = CROUPIER__GET_TOURNAMENT__INIT;
        gt.tournament = 7;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_GET_TOURNAMENT;
        m.get_tournament = &gt;
        cb(arg, "get_tournament", &m), n++;
        Croupier__RegisterTournament rt = CROUPIER__REGISTER_TOURNAMENT__INIT;
        rt.tournament = UINT64_MAX;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT;
        m.register_tournament = &rt;
        cb(arg, "register_tournament", &m), n++;
        Croupier__UnregisterTournament ut = CROUPIER__UNREGISTER_TOURNAMENT__INIT;
        ut.tournament = 7;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_UNREGISTER_TOURNAMENT;
        m.unregister_tournament = &ut;
        cb(arg, "unregister_tournament", &m), n++;
        Croupier__TakeTournamentSeat ts = CROUPIER__TAKE_TOURNAMENT_SEAT__INIT;
        ts.tournament = 7;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_TAKE_TOURNAMENT_SEAT;
        m.take_tournament_seat = &ts;
        cb(arg, "take_tournament_seat", &m), n++;
    }
    {
        /* Replays (docs/protocol.md "Replays"). */
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        m.request_id = 15;
        Croupier__GetReplay g = CROUPIER__GET_REPLAY__INIT;
        g.round_id = "holdem:3:7:4294967297:12";
        g.game = "holdem";
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_GET_REPLAY;
        m.get_replay = &g;
        cb(arg, "get_replay_round", &m), n++;
        Croupier__GetReplay gc = CROUPIER__GET_REPLAY__INIT;
        gc.code = "04291735";
        m.get_replay = &gc;
        cb(arg, "get_replay_code", &m), n++;
        Croupier__ShareReplay s = CROUPIER__SHARE_REPLAY__INIT;
        s.round_id = "holdem:3:7:4294967297:12";
        s.game = "holdem";
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_SHARE_REPLAY;
        m.share_replay = &s;
        cb(arg, "share_replay", &m), n++;
        /* Spectators (docs/spectators.md). */
        Croupier__Watch w = CROUPIER__WATCH__INIT;
        w.server_id = "holdem:3", w.has_desk_id = 1, w.desk_id = 4294967297ull;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_WATCH;
        m.watch = &w;
        cb(arg, "watch_table", &m), n++;
        Croupier__Watch wp = CROUPIER__WATCH__INIT;
        wp.has_player_id = 1, wp.player_id = 42;
        m.watch = &wp;
        cb(arg, "watch_player", &m), n++;
        Croupier__Unwatch u = CROUPIER__UNWATCH__INIT;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_UNWATCH;
        m.unwatch = &u;
        cb(arg, "unwatch", &m), n++;
    }
    return n;
}

/* ---- gate -> client ---------------------------------------------------------------------- */

#define SEAT_INIT PROTOBUF_C_MESSAGE_INIT(&croupier__seat_info__descriptor)
static Croupier__SeatInfo seat_a = {.base = SEAT_INIT,
                                    .seat = 0,
                                    .has_player_id = 1,
                                    .player_id = 42,
                                    .name = "alice",
                                    .has_chips = 1,
                                    .chips = 1500,
                                    .has_connected = 1,
                                    .connected = 1};
static Croupier__SeatInfo seat_b = {.base = SEAT_INIT,
                                    .seat = 1,
                                    .has_player_id = 1,
                                    .player_id = 43,
                                    .name = "bot-7",
                                    .has_chips = 1,
                                    .chips = 900,
                                    .has_bot = 1,
                                    .bot = 1};
static Croupier__SeatInfo seat_empty = {.base = SEAT_INIT, .seat = 2};
static Croupier__SeatInfo *seats[] = {&seat_a, &seat_b, &seat_empty};

static void server_emit(samples_server_cb cb, void *arg, const char *name,
                        Croupier__ServerMessage *m, int *n)
{
    cb(arg, name, m);
    (*n)++;
}

static void fill_joined(Croupier__Joined *j)
{
    j->desk_id = 0x0001000200000007ull;
    j->seat = 1;
    j->engine = CROUPIER__ENGINE__ENGINE_HOLDEM;
    j->game = "holdem";
    j->stake = 50;
    j->n_seats = 3;
    j->seats = seats;
}

static void server_snapshots(samples_server_cb cb, void *arg, int *n)
{
    Croupier__Snapshot s = CROUPIER__SNAPSHOT__INIT;
    s.desk_id = 9;
    s.your_seat = 0;
    s.n_seats = 3;
    s.seats = seats;
    s.round_id = "game-3:17:9:204";
    s.has_turn_seat = 1;
    s.turn_seat = 1;
    s.has_time_left_ms = 1;
    s.time_left_ms = 14500;
    s.has_event_seq = 1;
    s.event_seq = 88;
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    m.request_id = 11;
    m.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT;
    m.snapshot = &s;

    Croupier__SheddingState sh = CROUPIER__SHEDDING_STATE__INIT;
    uint32_t left[] = {6, 17, 0};
    sh.phase = CROUPIER__SHEDDING_PHASE__SHEDDING_PLAYING;
    sh.has_hand = 1;
    sh.hand = BIN(cards_hand);
    sh.n_cards_left = 3;
    sh.cards_left = left;
    sh.has_declarer_seat = sh.has_bid = sh.has_last_play = sh.has_last_play_seat = 1;
    sh.declarer_seat = 1;
    sh.bid = 3;
    sh.last_play = BIN(cards_pair);
    sh.last_play_seat = 1;
    sh.has_multiplier = 1;
    sh.multiplier = 4;
    sh.has_kitty = 1;
    sh.kitty = BIN(cards_board);
    s.engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL;
    s.game = "doudizhu";
    s.stake = 10;
    s.state_case = CROUPIER__SNAPSHOT__STATE_SHEDDING;
    s.shedding = &sh;
    server_emit(cb, arg, "snapshot_shedding", &m, n);

    Croupier__HoldemSeatState p0 = CROUPIER__HOLDEM_SEAT_STATE__INIT;
    Croupier__HoldemSeatState p1 = CROUPIER__HOLDEM_SEAT_STATE__INIT;
    Croupier__HoldemSeatState *ps[] = {&p0, &p1};
    p0.seat = 0, p0.has_stack = 1, p0.stack = 1450, p0.has_bet = 1, p0.bet = 50;
    p1.seat = 1, p1.has_stack = 1, p1.stack = 0, p1.has_all_in = 1, p1.all_in = 1;
    Croupier__HoldemState ho = CROUPIER__HOLDEM_STATE__INIT;
    ho.street = CROUPIER__HOLDEM_STREET__HOLDEM_FLOP;
    ho.has_hole_cards = 1, ho.hole_cards = BIN(cards_hole);
    ho.has_board = 1, ho.board = BIN(cards_board);
    ho.has_pot = 1, ho.pot = 1000;
    ho.has_button_seat = 1, ho.button_seat = 1;
    ho.has_to_call = 1, ho.to_call = 850;
    ho.has_min_raise = 1, ho.min_raise = 1800;
    ho.n_players = 2;
    ho.players = ps;
    s.engine = CROUPIER__ENGINE__ENGINE_HOLDEM;
    s.game = "holdem";
    s.stake = 50;
    s.state_case = CROUPIER__SNAPSHOT__STATE_HOLDEM;
    s.holdem = &ho;
    server_emit(cb, arg, "snapshot_holdem", &m, n);

    Croupier__BlackjackHand h0 = CROUPIER__BLACKJACK_HAND__INIT;
    Croupier__BlackjackHand h1 = CROUPIER__BLACKJACK_HAND__INIT;
    Croupier__BlackjackHand *hs[] = {&h0, &h1};
    h0.seat = 0, h0.has_cards = 1, h0.cards = BIN(cards_bj), h0.has_bet = 1, h0.bet = 25;
    h1.seat = 0, h1.has_hand = 1, h1.hand = 1, h1.has_cards = 1, h1.cards = BIN(cards_pair);
    h1.has_bet = 1, h1.bet = 50, h1.has_doubled = 1, h1.doubled = 1, h1.has_done = 1;
    h1.done = 1, h1.has_insured = 1, h1.insured = 0;
    Croupier__BlackjackState bj = CROUPIER__BLACKJACK_STATE__INIT;
    bj.phase = CROUPIER__BLACKJACK_PHASE__BJ_PLAYING;
    uint8_t up[] = {FRAME_CARD(14, 2)};
    bj.has_dealer_cards = 1, bj.dealer_cards = BIN(up);
    bj.n_hands = 2, bj.hands = hs;
    bj.has_min_bet = 1, bj.min_bet = 25, bj.has_max_bet = 1, bj.max_bet = 5000;
    s.engine = CROUPIER__ENGINE__ENGINE_PERSISTENT;
    s.game = "blackjack";
    s.stake = 25;
    s.has_turn_seat = 0;
    s.state_case = CROUPIER__SNAPSHOT__STATE_BLACKJACK;
    s.blackjack = &bj;
    server_emit(cb, arg, "snapshot_blackjack", &m, n);

    Croupier__GameState gs = CROUPIER__GAME_STATE__INIT;
    gs.body = BIN(game_body);
    s.engine = CROUPIER__ENGINE__ENGINE_GAME;
    s.game = "zhajinhua";
    s.stake = 5;
    s.state_case = CROUPIER__SNAPSHOT__STATE_GAME_STATE;
    s.game_state = &gs;
    server_emit(cb, arg, "snapshot_game", &m, n);
}

int samples_server(samples_server_cb cb, void *arg)
{
    int n = 0;
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    {
        Croupier__LoginResult r = CROUPIER__LOGIN_RESULT__INIT;
        r.player_id = 42;
        r.session_id = 0xABCDEF;
        r.has_chips = 1, r.chips = 12345;
        r.has_seated = 1, r.seated = 1;
        r.has_server_time_ms = 1, r.server_time_ms = 1767225600123ull;
        m.request_id = 1;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT;
        m.login_result = &r;
        server_emit(cb, arg, "login_result", &m, &n);
    }
    {
        Croupier__Joined j = CROUPIER__JOINED__INIT;
        fill_joined(&j);
        m.request_id = 3;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_JOINED;
        m.joined = &j;
        server_emit(cb, arg, "joined", &m, &n);
    }
    {
        Croupier__Result r = CROUPIER__RESULT__INIT;
        m.request_id = 100;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
        m.result = &r;
        server_emit(cb, arg, "result_ok", &m, &n);
        Croupier__Error e = CROUPIER__ERROR__INIT;
        e.code = CROUPIER__ERROR_CODE__NOT_YOUR_TURN;
        e.message = "seat 2 is to act";
        e.has_retriable = 1;
        r.error = &e;
        server_emit(cb, arg, "result_error", &m, &n);
    }
    {
        Croupier__Error e = CROUPIER__ERROR__INIT;
        e.code = CROUPIER__ERROR_CODE__FRAME_TOO_LARGE;
        e.message = "frame of 70000 bytes, cap 65536";
        m.request_id = 0;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_ERROR;
        m.error = &e;
        server_emit(cb, arg, "error", &m, &n);
    }
    server_snapshots(cb, arg, &n);
    m.request_id = 0;
    m.has_event_seq = 1;
    {
        Croupier__Deal d = CROUPIER__DEAL__INIT;
        d.has_seat = 1, d.seat = 0;
        d.has_cards = 1, d.cards = BIN(cards_hole);
        d.round_id = "game-1:3:7:1";
        m.event_seq = 1;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
        m.deal = &d;
        server_emit(cb, arg, "deal_own", &m, &n);
        Croupier__Deal d2 = CROUPIER__DEAL__INIT;
        d2.has_seat = 1, d2.seat = 1, d2.has_count = 1, d2.count = 2;
        m.event_seq = 2;
        m.deal = &d2;
        server_emit(cb, arg, "deal_face_down", &m, &n);
        Croupier__Deal d3 = CROUPIER__DEAL__INIT;
        d3.has_cards = 1, d3.cards = BIN(cards_board);
        m.event_seq = 3;
        m.deal = &d3;
        server_emit(cb, arg, "deal_board", &m, &n);
    }
    {
        Croupier__Turn t = CROUPIER__TURN__INIT;
        t.seat = 1, t.time_left_ms = 15000;
        t.has_to_call = 1, t.to_call = 50, t.has_min_amount = 1, t.min_amount = 100;
        t.has_max_amount = 1, t.max_amount = 900;
        m.event_seq = 4;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
        m.turn = &t;
        server_emit(cb, arg, "turn", &m, &n);
    }
    {
        Croupier__HoldemAction h = CROUPIER__HOLDEM_ACTION__INIT;
        h.move = CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE, h.has_amount = 1, h.amount = 300;
        Croupier__Action a = CROUPIER__ACTION__INIT;
        a.kind_case = CROUPIER__ACTION__KIND_HOLDEM, a.holdem = &h;
        Croupier__Play p = CROUPIER__PLAY__INIT;
        p.seat = 1, p.action = &a;
        m.event_seq = 5;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
        m.play = &p;
        server_emit(cb, arg, "play_holdem", &m, &n);
        Croupier__SheddingAction s = CROUPIER__SHEDDING_ACTION__INIT;
        s.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, s.has_cards = 1;
        s.cards = BIN(cards_pair);
        a.kind_case = CROUPIER__ACTION__KIND_SHEDDING, a.shedding = &s;
        p.has_cards_left = 1, p.cards_left = 4, p.has_timed_out = 1, p.timed_out = 1;
        m.event_seq = 6;
        server_emit(cb, arg, "play_shedding", &m, &n);
        Croupier__GameAction g = CROUPIER__GAME_ACTION__INIT;
        g.body = BIN(game_body);
        a.kind_case = CROUPIER__ACTION__KIND_GAME, a.game = &g;
        p.has_cards_left = 0, p.has_timed_out = 0;
        m.event_seq = 61;
        server_emit(cb, arg, "play_game", &m, &n);
    }
    {
        Croupier__GameEvent ge = CROUPIER__GAME_EVENT__INIT;
        ge.body = BIN(game_body);
        m.event_seq = 62;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT;
        m.game_event = &ge;
        server_emit(cb, arg, "game_event", &m, &n);
    }
    {
        Croupier__SeatDelta d0 = CROUPIER__SEAT_DELTA__INIT;
        Croupier__SeatDelta d1 = CROUPIER__SEAT_DELTA__INIT;
        Croupier__SeatDelta *ds[] = {&d0, &d1};
        d0.seat = 0, d0.player_id = 42, d0.delta = 290;
        d0.has_shown_cards = 1, d0.shown_cards = BIN(cards_hole);
        d1.seat = 1, d1.player_id = 43, d1.delta = -300;
        Croupier__RoundEnd r = CROUPIER__ROUND_END__INIT;
        r.round_id = "game-1:3:7:1";
        r.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
        r.n_deltas = 2, r.deltas = ds;
        r.has_rake = 1, r.rake = 10;
        m.event_seq = 7;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROUND_END;
        m.round_end = &r;
        server_emit(cb, arg, "round_end_completed", &m, &n);
        d0.delta = 0, d0.has_shown_cards = 0, d1.delta = 0, r.rake = 0;
        r.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED;
        r.has_void_reason = 1, r.void_reason = CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT;
        r.detail = "server drain bound passed; stakes refunded";
        m.event_seq = 8;
        server_emit(cb, arg, "round_end_voided", &m, &n);
    }
    {
        Croupier__TableClosing t = CROUPIER__TABLE_CLOSING__INIT;
        t.reason = CROUPIER__CLOSING_REASON__CLOSING_DRAINING;
        t.detail = "server restarting";
        t.has_after_ms = 1, t.after_ms = 600000;
        m.event_seq = 9;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING;
        m.table_closing = &t;
        server_emit(cb, arg, "table_closing", &m, &n);
    }
    {
        Croupier__Joined j = CROUPIER__JOINED__INIT;
        fill_joined(&j);
        Croupier__Moved mv = CROUPIER__MOVED__INIT;
        mv.to = &j;
        mv.has_reason = 1, mv.reason = CROUPIER__CLOSING_REASON__CLOSING_DRAINING;
        m.event_seq = 10;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_MOVED;
        m.moved = &mv;
        server_emit(cb, arg, "moved", &m, &n);
    }
    m.has_event_seq = 0;
    m.event_seq = 0;
    {
        Croupier__GoAway g = CROUPIER__GO_AWAY__INIT;
        g.reason = CROUPIER__GO_AWAY_REASON__GOAWAY_SHUTDOWN;
        g.reconnect_delay_ms = 1234;
        g.detail = "gateway draining";
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY;
        m.go_away = &g;
        server_emit(cb, arg, "go_away", &m, &n);
    }
    {
        Croupier__Pong p = CROUPIER__PONG__INIT;
        p.nonce = 99, p.has_server_time_ms = 1, p.server_time_ms = 1767225600999ull;
        m.request_id = 12;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_PONG;
        m.pong = &p;
        server_emit(cb, arg, "pong", &m, &n);
    }
    {
        Croupier__TableAd a = CROUPIER__TABLE_AD__INIT, b = CROUPIER__TABLE_AD__INIT;
        a.desk_id = 17, a.server_id = "holdem:3", a.game = "holdem", a.stake = 50;
        a.seats = 6, a.seats_free = 5;
        b.desk_id = UINT64_MAX, b.server_id = "holdem:0", b.game = "holdem", b.stake = 2;
        b.seats = 9, b.seats_free = 9;
        Croupier__TableAd *ads[] = {&a, &b};
        Croupier__TableList tl = CROUPIER__TABLE_LIST__INIT;
        tl.n_tables = 2, tl.tables = ads;
        m.request_id = 13;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_LIST;
        m.table_list = &tl;
        server_emit(cb, arg, "table_list", &m, &n);
        tl.n_tables = 0, tl.tables = NULL;
        server_emit(cb, arg, "table_list_empty", &m, &n);
    }
    {
        /* Tournaments (docs/protocol.md "Tournaments"). */
        Croupier__TournamentSummary a = CROUPIER__TOURNAMENT_SUMMARY__INIT;
        Croupier__TournamentSummary b = CROUPIER__TOURNAMENT_SUMMARY__INIT;
        a.id = 12, a.name = "Sunday 10k", a.format = CROUPIER__TOURNAMENT_FORMAT__TOUR_MTT;
        a.status = CROUPIER__TOURNAMENT_STATUS__TOUR_RUNNING;
        a.has_buy_in = 1, a.buy_in = 100, a.has_fee = 1, a.fee = 10;
        a.has_entrants = 1, a.entrants = 120, a.has_max_entrants = 1, a.max_entrants = 1000;
        a.has_start_at_unix_ms = 1, a.start_at_unix_ms = 1767225600000ull;
        a.has_players_left = 1, a.players_left = 57, a.has_prize_pool = 1, a.prize_pool = 12000;
        b.id = 13, b.name = "SNG 9", b.format = CROUPIER__TOURNAMENT_FORMAT__TOUR_SNG;
        b.status = CROUPIER__TOURNAMENT_STATUS__TOUR_REGISTERING;
        Croupier__TournamentSummary *ts[] = {&a, &b};
        Croupier__TournamentList tl = CROUPIER__TOURNAMENT_LIST__INIT;
        tl.n_tournaments = 2, tl.tournaments = ts, tl.has_total = 1, tl.total = 2;
        m.request_id = 14;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT_LIST;
        m.tournament_list = &tl;
        server_emit(cb, arg, "tournament_list", &m, &n);
        tl.n_tournaments = 0, tl.tournaments = NULL;
        server_emit(cb, arg, "tournament_list_empty", &m, &n);

        Croupier__TournamentPayout p1 = CROUPIER__TOURNAMENT_PAYOUT__INIT;
        Croupier__TournamentPayout p2 = CROUPIER__TOURNAMENT_PAYOUT__INIT;
        p1.place_from = 1, p1.place_to = 1, p1.amount = 2520;
        p2.place_from = 17, p2.place_to = 18, p2.amount = 310;
        Croupier__TournamentPayout *ps[] = {&p1, &p2};
        Croupier__TournamentEntry you = CROUPIER__TOURNAMENT_ENTRY__INIT;
        you.state = CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_PLAYING;
        you.has_stack = 1, you.stack = 4350, you.has_table = 1, you.table = 3;
        you.has_seat = 1, you.seat = 6, you.has_entries = 1, you.entries = 2;
        Croupier__TournamentInfo ti = CROUPIER__TOURNAMENT_INFO__INIT;
        ti.id = 12, ti.name = "Sunday 10k", ti.format = CROUPIER__TOURNAMENT_FORMAT__TOUR_MTT;
        ti.status = CROUPIER__TOURNAMENT_STATUS__TOUR_RUNNING;
        ti.has_buy_in = 1, ti.buy_in = 100, ti.has_fee = 1, ti.fee = 10;
        ti.has_starting_stack = 1, ti.starting_stack = 3000;
        ti.has_min_entrants = 1, ti.min_entrants = 20, ti.has_max_entrants = 1;
        ti.max_entrants = 1000, ti.has_entries = 1, ti.entries = 120;
        ti.has_players_left = 1, ti.players_left = 57, ti.has_prize_pool = 1;
        ti.prize_pool = 12000, ti.has_average_stack = 1, ti.average_stack = 6315;
        ti.has_level = 1, ti.level = 5, ti.has_level_number = 1, ti.level_number = 5;
        ti.has_small_blind = 1, ti.small_blind = 100, ti.has_big_blind = 1, ti.big_blind = 200;
        ti.has_ante = 1, ti.ante = 200, ti.has_big_blind_ante = 1, ti.big_blind_ante = 1;
        ti.has_level_ends_in_ms = 1, ti.level_ends_in_ms = 123456;
        ti.has_late_registration_levels = 1, ti.late_registration_levels = 6;
        ti.has_registration_open = 1, ti.registration_open = 1;
        ti.n_payouts = 2, ti.payouts = ps, ti.you = &you;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT;
        m.tournament = &ti;
        server_emit(cb, arg, "tournament_info", &m, &n);
        Croupier__TournamentInfo tc = CROUPIER__TOURNAMENT_INFO__INIT;
        tc.id = 13, tc.name = "SNG 9", tc.format = CROUPIER__TOURNAMENT_FORMAT__TOUR_SNG;
        tc.status = CROUPIER__TOURNAMENT_STATUS__TOUR_CANCELLED, tc.detail = "server maintenance";
        m.tournament = &tc;
        server_emit(cb, arg, "tournament_info_cancelled", &m, &n);

        Croupier__TournamentEvent ev = CROUPIER__TOURNAMENT_EVENT__INIT;
        ev.tournament = 12, ev.kind = CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_LEVEL_UP;
        ev.has_level = 1, ev.level = 6, ev.has_level_number = 1, ev.level_number = 6;
        ev.has_small_blind = 1, ev.small_blind = 150, ev.has_big_blind = 1, ev.big_blind = 300;
        ev.log_id = "1767225600000-3";
        m.request_id = 0;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT_EVENT;
        m.tournament_event = &ev;
        server_emit(cb, arg, "tournament_event_level", &m, &n);
        Croupier__TournamentEvent out = CROUPIER__TOURNAMENT_EVENT__INIT;
        out.tournament = 12, out.kind = CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_ELIMINATED;
        out.has_player = 1, out.player = 42, out.has_place = 1, out.place = 17;
        out.has_prize = 1, out.prize = 310;
        m.tournament_event = &out;
        server_emit(cb, arg, "tournament_event_eliminated", &m, &n);
    }
    {
        /* Replays (docs/protocol.md "Replays"). */
        static uint8_t hole[] = {14 << 2 | 3, 13 << 2 | 3},
                       flop[] = {2 << 2, 7 << 2 | 1, 9 << 2 | 2};
        static uint8_t commit[32] = {0x9c, 0x1f};
        Croupier__ReplaySeat s0 = CROUPIER__REPLAY_SEAT__INIT, s1 = CROUPIER__REPLAY_SEAT__INIT;
        s0.seat = 0, s0.has_player_id = 1, s0.player_id = 42, s0.has_stack = 1, s0.stack = 1000;
        s0.has_delta = 1, s0.delta = 20, s0.has_cards = 1, s0.cards = BIN(hole);
        s1.seat = 3, s1.has_player_id = 1, s1.player_id = 43, s1.has_bot = 1, s1.bot = 1;
        s1.has_delta = 1, s1.delta = -20, s1.has_hidden = 1, s1.hidden = 2;
        Croupier__ReplaySeat *rs[] = {&s0, &s1};
        Croupier__ReplayEvent e0 = CROUPIER__REPLAY_EVENT__INIT, e1 = CROUPIER__REPLAY_EVENT__INIT,
                              e2 = CROUPIER__REPLAY_EVENT__INIT, e3 = CROUPIER__REPLAY_EVENT__INIT;
        e0.kind = CROUPIER__REPLAY_EVENT_KIND__REPLAY_DEAL, e0.has_seat = 1, e0.seat = 0;
        e0.has_cards = 1, e0.cards = BIN(hole);
        e1.kind = CROUPIER__REPLAY_EVENT_KIND__REPLAY_DEAL, e1.has_seat = 1, e1.seat = 3;
        e1.has_count = 1, e1.count = 2;
        e2.kind = CROUPIER__REPLAY_EVENT_KIND__REPLAY_ACTION, e2.has_seat = 1, e2.seat = 3;
        e2.action = "call", e2.has_amount = 1, e2.amount = 10;
        e3.kind = CROUPIER__REPLAY_EVENT_KIND__REPLAY_DEAL, e3.has_cards = 1, e3.cards = BIN(flop);
        Croupier__ReplayEvent *ev[] = {&e0, &e1, &e2, &e3};
        Croupier__Replay r = CROUPIER__REPLAY__INIT;
        r.round_id = "holdem:3:7:4294967297:12", r.game = "holdem", r.engine = "holdem";
        r.has_stake = 1, r.stake = 10, r.has_outcome = 1;
        r.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
        r.has_your_seat = 1, r.your_seat = 0, r.n_seats = 2, r.seats = rs;
        r.n_events = 4, r.events = ev, r.policy = "showdown";
        r.has_deck_commitment = 1, r.deck_commitment = BIN(commit);
        Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
        m.has_request_id = 1, m.request_id = 15;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_REPLAY;
        m.replay = &r;
        server_emit(cb, arg, "replay", &m, &n);
        /* Blackjack's: the round's shoe with its cards, and the shoe it retired, opened. */
        static uint8_t bj_cards[] = {(14 << 2) | 3, (10 << 2) | 1, (2 << 2) | 0};
        Croupier__ReplayShoe shoe = CROUPIER__REPLAY_SHOE__INIT;
        shoe.shoe = 4, shoe.first = 49, shoe.has_cards = 1, shoe.cards = BIN(bj_cards);
        shoe.commitment = "9c1f000000000000000000000000000000000000000000000000000000000000";
        Croupier__ReplayShoe *shoes[] = {&shoe};
        Croupier__ReplayShoeReveal rv = CROUPIER__REPLAY_SHOE_REVEAL__INIT;
        rv.shoe = 4, rv.commitment = shoe.commitment, rv.deck = "00010203";
        rv.nonce = "51e0000000000000000000000000000000000000000000000000000000000000";
        rv.has_dealt = 1, rv.dealt = 52;
        Croupier__ReplayShoeReveal *rvs[] = {&rv};
        Croupier__Replay bj = CROUPIER__REPLAY__INIT;
        bj.round_id = "persistent:1:1:4294967297:9", bj.game = "blackjack", bj.policy = "all";
        bj.n_shoes = 1, bj.shoes = shoes, bj.n_shoe_reveal = 1, bj.shoe_reveal = rvs;
        m.replay = &bj;
        server_emit(cb, arg, "replay_blackjack", &m, &n);
        Croupier__ReplayShared sh = CROUPIER__REPLAY_SHARED__INIT;
        sh.code = "04291735", sh.round_id = "holdem:3:7:4294967297:12";
        sh.has_expires_unix_ms = 1, sh.expires_unix_ms = 1767830400000ull;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_REPLAY_SHARED;
        m.replay_shared = &sh;
        server_emit(cb, arg, "replay_shared", &m, &n);
        Croupier__WatchEnded we = CROUPIER__WATCH_ENDED__INIT;
        we.code = CROUPIER__ERROR_CODE__NO_SUCH_TABLE, we.detail = "the table closed";
        m.has_request_id = 0, m.request_id = 0;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_WATCH_ENDED;
        m.watch_ended = &we;
        server_emit(cb, arg, "watch_ended", &m, &n);
    }
    return n;
}

/* ---- gate <-> game ----------------------------------------------------------------------- */

static void rpc_player(Croupier__RpcFrame *f, uint64_t request_id)
{
    f->request_id = request_id;
    f->has_trace_id = 1, f->trace_id = 0x0123456789ABCDEFull;
    f->has_deadline_unix_ms = 1, f->deadline_unix_ms = 1767225601500ull;
    f->has_player_id = 1, f->player_id = 42;
    f->has_session_id = 1, f->session_id = 0xABCDEF;
    f->has_client_request_id = 1, f->client_request_id = request_id + 1000;
}

int samples_rpc(samples_rpc_cb cb, void *arg)
{
    int n = 0;
    {
        Croupier__LinkHello h = CROUPIER__LINK_HELLO__INIT;
        h.version = 1, h.gate_id = "gate-0", h.has_max_frame = 1, h.max_frame = 65536;
        h.has_push_to = 1, h.push_to = 1;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.request_id = 1;
        f.body_case = CROUPIER__RPC_FRAME__BODY_HELLO, f.hello = &h;
        cb(arg, "hello", &f), n++;
    }
    {
        char *games[] = {"doudizhu", "bigtwo", "runfast", "tractor"};
        Croupier__LinkHelloAck a = CROUPIER__LINK_HELLO_ACK__INIT;
        a.version = 1, a.server_id = "game-traditional-3";
        a.engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL;
        a.n_games = 4, a.games = games;
        a.has_lease_epoch = 1, a.lease_epoch = 17, a.has_draining = 1;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.request_id = 1;
        f.body_case = CROUPIER__RPC_FRAME__BODY_HELLO_ACK, f.hello_ack = &a;
        cb(arg, "hello_ack", &f), n++;
    }
    {
        Croupier__Join j = CROUPIER__JOIN__INIT;
        j.engine = CROUPIER__ENGINE__ENGINE_HOLDEM, j.game = "holdem", j.stake = 50;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        rpc_player(&f, 2);
        f.body_case = CROUPIER__RPC_FRAME__BODY_JOIN, f.join = &j;
        cb(arg, "join", &f), n++;
    }
    {
        Croupier__Leave l = CROUPIER__LEAVE__INIT;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        rpc_player(&f, 3);
        f.body_case = CROUPIER__RPC_FRAME__BODY_LEAVE, f.leave = &l;
        cb(arg, "leave", &f), n++;
    }
    {
        Croupier__BlackjackAction b = CROUPIER__BLACKJACK_ACTION__INIT;
        b.move = CROUPIER__BLACKJACK_MOVE__BJ_DOUBLE;
        Croupier__Action a = CROUPIER__ACTION__INIT;
        a.kind_case = CROUPIER__ACTION__KIND_BLACKJACK, a.blackjack = &b;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        rpc_player(&f, 4);
        f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION, f.action = &a;
        cb(arg, "action", &f), n++;
    }
    {
        Croupier__Resume r = CROUPIER__RESUME__INIT;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        rpc_player(&f, 5);
        f.body_case = CROUPIER__RPC_FRAME__BODY_RESUME, f.resume = &r;
        cb(arg, "resume", &f), n++;
    }
    {
        Croupier__Joined j = CROUPIER__JOINED__INIT;
        fill_joined(&j);
        Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
        sm.request_id = 1002;
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_JOINED, sm.joined = &j;
        Croupier__Reply r = CROUPIER__REPLY__INIT;
        r.code = CROUPIER__ERROR_CODE__OK, r.payload = &sm;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.request_id = 2, f.has_player_id = 1, f.player_id = 42;
        f.body_case = CROUPIER__RPC_FRAME__BODY_REPLY, f.reply = &r;
        cb(arg, "reply_ok", &f), n++;
        Croupier__Error e = CROUPIER__ERROR__INIT;
        e.code = CROUPIER__ERROR_CODE__DRAINING;
        e.message = "server draining";
        e.has_retriable = 1, e.retriable = 1;
        r.code = e.code, r.error = &e, r.payload = NULL;
        cb(arg, "reply_error", &f), n++;
    }
    {
        Croupier__Turn t = CROUPIER__TURN__INIT;
        t.seat = 3, t.time_left_ms = 20000;
        Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
        sm.has_event_seq = 1, sm.event_seq = 5;
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN, sm.turn = &t;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.has_player_id = 1, f.player_id = 42;
        f.body_case = CROUPIER__RPC_FRAME__BODY_PUSH, f.push = &sm;
        cb(arg, "push", &f), n++;
    }
    {
        /* One push, many players (docs/protocol.md): player 42 and the two push_to names. */
        Croupier__GameAction ga = CROUPIER__GAME_ACTION__INIT;
        uint8_t body[] = {0x08, 0x01};
        ga.body.data = body, ga.body.len = sizeof body;
        Croupier__Action a = CROUPIER__ACTION__INIT;
        a.kind_case = CROUPIER__ACTION__KIND_GAME, a.game = &ga;
        Croupier__Play pl = CROUPIER__PLAY__INIT;
        pl.seat = 2, pl.action = &a;
        Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
        sm.has_event_seq = 1, sm.event_seq = 6;
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY, sm.play = &pl;
        uint64_t to[] = {43, 1000000007};
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.has_player_id = 1, f.player_id = 42;
        f.n_push_to = 2, f.push_to = to;
        f.body_case = CROUPIER__RPC_FRAME__BODY_PUSH, f.push = &sm;
        cb(arg, "push_to", &f), n++;
    }
    {
        Croupier__RpcPing p = CROUPIER__RPC_PING__INIT;
        p.nonce = 7;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.request_id = 9;
        f.body_case = CROUPIER__RPC_FRAME__BODY_PING, f.ping = &p;
        cb(arg, "ping", &f), n++;
        Croupier__RpcPong q = CROUPIER__RPC_PONG__INIT;
        q.nonce = 7, q.has_draining = 1, q.draining = 1, q.has_human_desks = 1;
        q.human_desks = 3;
        f.body_case = CROUPIER__RPC_FRAME__BODY_PONG, f.pong = &q;
        cb(arg, "pong", &f), n++;
    }
    {
        uint64_t players[] = {42, 43};
        Croupier__DeskClosing d = CROUPIER__DESK_CLOSING__INIT;
        d.desk_id = 7, d.reason = CROUPIER__CLOSING_REASON__CLOSING_DRAINING;
        d.n_player_ids = 2, d.player_ids = players, d.detail = "drain";
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.body_case = CROUPIER__RPC_FRAME__BODY_DESK_CLOSING, f.desk_closing = &d;
        cb(arg, "desk_closing", &f), n++;
    }
    {
        Croupier__Joined j = CROUPIER__JOINED__INIT;
        fill_joined(&j);
        Croupier__Moved mv = CROUPIER__MOVED__INIT;
        mv.to = &j;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.has_player_id = 1, f.player_id = 42;
        f.body_case = CROUPIER__RPC_FRAME__BODY_MOVED, f.moved = &mv;
        cb(arg, "moved", &f), n++;
    }
    {
        Croupier__PlayerGone g = CROUPIER__PLAYER_GONE__INIT;
        g.has_timed_out = 1, g.timed_out = 1;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.has_player_id = 1, f.player_id = 42, f.has_session_id = 1, f.session_id = 5;
        f.body_case = CROUPIER__RPC_FRAME__BODY_PLAYER_GONE, f.player_gone = &g;
        cb(arg, "player_gone", &f), n++;
    }
    {
        Croupier__WatchTable w = CROUPIER__WATCH_TABLE__INIT;
        w.desk_id = 4294967297ull, w.spectators = 3;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        rpc_player(&f, 40);
        f.body_case = CROUPIER__RPC_FRAME__BODY_WATCH, f.watch = &w;
        cb(arg, "watch", &f), n++;
        Croupier__RpcFrame c = CROUPIER__RPC_FRAME__INIT;
        w.spectators = 0;
        c.body_case = CROUPIER__RPC_FRAME__BODY_WATCH, c.watch = &w;
        cb(arg, "watch_count", &c), n++;
    }
    {
        Croupier__Deal d = CROUPIER__DEAL__INIT;
        d.has_seat = 1, d.seat = 2, d.has_count = 1, d.count = 2;
        d.round_id = "holdem:3:7:4294967297:12";
        Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
        m.has_event_seq = 1, m.event_seq = 9;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL, m.deal = &d;
        Croupier__WatchPush wp = CROUPIER__WATCH_PUSH__INIT;
        wp.desk_id = 4294967297ull, wp.msg = &m;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.body_case = CROUPIER__RPC_FRAME__BODY_WATCH_PUSH, f.watch_push = &wp;
        cb(arg, "watch_push", &f), n++;
    }
    return n;
}
