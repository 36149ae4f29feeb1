/*
 * tk_engine.c -- the kit engine on the main loop (docs/architecture.md §12 "Desks", "Flags"):
 * the engine_ops_t entry points TK_ENGINE binds (create, destroy, join, adopt, stop_intake,
 * games, flags, check_options), the wallet look-up that chooses a join's buy-in before the join
 * goes to the lobby desk, tk_engine_open_table, the service token of seat accounts and op ids,
 * and the house's one funding. Internal to the kit: tk_int.h has the contract; tk.h is the
 * public one.
 */
#include "tk_int.h"

/* ---- engine (main loop) ------------------------------------------------------------------ */

/* The joining player's wallet balance arrived: choose the buy-in, or refuse. */
static void tk_balance_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    tk_join_t *j = arg;
    tk_engine_t *eng = gs_engine_state(j->gs);
    if (eng == NULL || eng->destroying) {
        gs_request_free(j->req);
        tk_join_free(j);
        return;
    }
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        tk_count_refusal(eng, CROUPIER__ERROR_CODE__UNAVAILABLE);
        gs_reply(j->gs, j->req, CROUPIER__ERROR_CODE__UNAVAILABLE, "wallet unavailable", NULL);
        tk_join_free(j);
        return;
    }
    long long balance = reply->type == REDIS_REPLY_STRING ? strtoll(reply->str, NULL, 10) : 0;
    int64_t stake = j->req->frame->join->stake, want, least;
    tk_buyin_range(eng, j->req->frame->join->game, stake, &want, &least);
    j->amount = balance < want ? balance : want;
    if (j->amount < least) {
        char msg[128];
        snprintf(msg, sizeof msg, "wallet %lld is below the table minimum %" PRId64, balance,
                 least);
        tk_count_refusal(eng, CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS);
        gs_reply(j->gs, j->req, CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS, msg, NULL);
        tk_join_free(j);
        return;
    }
    rt_msg_t m = {.type = TK_MSG_JOIN, .ptr = j, .free_fn = tk_join_dropped};
    rt_post(gs_rt(j->gs), eng->lobby, &m);
}

/* Whether a table of (engine, game, stake) is one this engine runs; the refusal and its reason
 * otherwise. */
static Croupier__ErrorCode tk_engine_serves(const tk_engine_t *eng, Croupier__Engine engine,
                                            const char *game, int64_t stake, const char **why)
{
    if (!config_list_has(eng->games, game)) {
        *why = "this server does not run that game";
        return CROUPIER__ERROR_CODE__NO_SUCH_GAME;
    }
    if (engine != eng->game->proto_engine && engine != CROUPIER__ENGINE__ENGINE_UNSPECIFIED) {
        *why = "the game is not played on that engine";
        return CROUPIER__ERROR_CODE__WRONG_ENGINE;
    }
    if (stake < (eng->game->min_stake > 1 ? eng->game->min_stake : 1) || stake > TK_MAX_STAKE) {
        *why = "stake out of range";
        return CROUPIER__ERROR_CODE__BAD_REQUEST;
    }
    return CROUPIER__ERROR_CODE__OK;
}

/* Main loop: hands a request to the lobby desk as message type (a dropped one is answered
 * UNAVAILABLE). */
static tk_join_t *tk_join_new(tk_engine_t *eng, gs_request_t *req, tk_room_t *room)
{
    tk_join_t *tj = xcalloc(1, sizeof *tj);
    tj->gs = eng->gs;
    tj->req = req;
    tj->room = room;
    return tj;
}

static void tk_engine_to_lobby(tk_engine_t *eng, int type, gs_request_t *req, tk_room_t *room)
{
    tk_join_t *tj = tk_join_new(eng, req, room);
    rt_msg_t m = {.type = type, .ptr = tj, .free_fn = tk_join_dropped};
    rt_post(gs_rt(eng->gs), eng->lobby, &m);
}

void tk_engine_join(void *e, gs_request_t *req)
{
    tk_engine_t *eng = e;
    const Croupier__Join *j = req->frame->join;
    const Croupier__RoomJoin *rj = req->frame->room;
    const char *why = NULL;
    tk_room_t *room = NULL;
    Croupier__ErrorCode code = tk_engine_serves(eng, j->engine, j->game, j->stake, &why);
    if (code == CROUPIER__ERROR_CODE__OK && eng->rc == NULL &&
        eng->game->money != TK_MONEY_WALLET) {
        code = CROUPIER__ERROR_CODE__UNAVAILABLE;
        why = "wallet store not configured";
    }
    if (code == CROUPIER__ERROR_CODE__OK && rj != NULL && rj->create != NULL)
        code = tk_room_prepare(eng, j, rj->create, &room, &why);
    if (code != CROUPIER__ERROR_CODE__OK) {
        tk_count_refusal(eng, code);
        gs_reply(eng->gs, req, code, why, NULL);
        return;
    }
    if (eng->game->money == TK_MONEY_WALLET) {
        tk_engine_to_lobby(eng, TK_MSG_JOIN, req, room); /* no buy-in: straight to the lobby */
        return;
    }
    tk_join_t *tj = tk_join_new(eng, req, room);
    char player[24], key[128];
    tk_player_name(req->player_id, player, sizeof player);
    money_key_wallet(player, key, sizeof key);
    if (rconn_command(eng->rc, tk_balance_cb, tj, "GET %s", key) != 0) {
        tk_count_refusal(eng, CROUPIER__ERROR_CODE__UNAVAILABLE);
        gs_reply(eng->gs, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "wallet store unreachable", NULL);
        tk_join_free(tj);
    }
}

void tk_engine_adopt(void *e, gs_request_t *req)
{
    tk_engine_t *eng = e;
    const Croupier__Adopt *a = req->frame->adopt;
    const char *why = NULL;
    Croupier__ErrorCode code = tk_engine_serves(eng, a->engine, a->game, a->stake, &why);
    if (code == CROUPIER__ERROR_CODE__OK && eng->jobs == NULL) {
        code = CROUPIER__ERROR_CODE__UNAVAILABLE;
        why = "no money store for table handoffs";
    }
    if (code != CROUPIER__ERROR_CODE__OK) {
        tk_count_refusal(eng, code);
        gs_reply(eng->gs, req, code, why, NULL);
        return;
    }
    tk_engine_to_lobby(eng, TK_MSG_ADOPT, req, NULL);
}

int tk_engine_open_table(tk_engine_t *eng, const char *game, int64_t stake, int bots)
{
    if (!config_list_has(eng->games, game) || stake < 1 || bots < 0)
        return -EINVAL;
    tk_open_t *o = xcalloc(1, sizeof *o);
    snprintf(o->game, sizeof o->game, "%s", game);
    o->stake = stake;
    o->bots = bots;
    rt_msg_t m = {.type = TK_MSG_OPEN, .ptr = o, .free_fn = free};
    return rt_post(gs_rt(eng->gs), eng->lobby, &m);
}

const char *tk_engine_games(void *e)
{
    tk_engine_t *eng = e;
    return eng->games;
}

void tk_engine_stop_intake(void *e)
{
    tk_engine_t *eng = e;
    if (eng->ads != NULL)
        lobby_pub_withdraw_all(eng->ads);
}

void tk_engine_destroy(void *e)
{
    tk_engine_t *eng = e;
    if (eng == NULL)
        return;
    eng->destroying = true;
    money_jobs_destroy(eng->jobs); /* the runtime is gone: its results are only freed */
    mcluster_destroy(eng->ho_m);   /* the jobs thread is joined: nobody uses them any more */
    rcluster_destroy(eng->ho_rc);
    rcluster_script_destroy(eng->room_script);
    tk_tour_engine_destroy(eng);
    tk_house_acct_destroy(eng->hacct);
    pthread_mutex_destroy(&eng->jobs_mu);
    lobby_pub_destroy(eng->ads); /* before the connection it writes through */
    rconn_destroy(eng->rc);
    free(eng);
}

/* The kit's flags of every engine: name suffix, help, setting, bounds; `need` says which games
 * get the flag (0: all, 1: games with bots, 2: games with bots or a house, 3: games that play
 * tournament tables, 4: games that may be watched, 5: games with the house in the round). */
static const struct {
    const char *suffix, *help;
    size_t off;
    long min, max;
    int need;
} tk_flag_spec[] = {
    {"seats", "seats per table", offsetof(tk_settings_t, seats), 2, TK_MAX_SEATS, 0},
    {"action-ms", "time for one turn (ms)", offsetof(tk_settings_t, action_ms), 1, 3600000, 0},
    {"time-bank-ms", "extra time per seat, spent beyond the turn time (ms)",
     offsetof(tk_settings_t, time_bank_ms), 0, 3600000, 0},
    {"gap-ms", "pause between rounds (ms)", offsetof(tk_settings_t, gap_ms), 0, 600000, 0},
    {"idle-ms", "an empty table is closed after this long (ms)", offsetof(tk_settings_t, idle_ms),
     1, 86400000, 0},
    {"buyin", "largest buy-in, in stakes", offsetof(tk_settings_t, buyin), 1, 1000000, 0},
    {"min-buyin", "smallest buy-in, in stakes", offsetof(tk_settings_t, min_buyin), 1, 1000000, 0},
    {"rake-bp",
     "rake in basis points of the pot (of each winner's win in a game that rakes winners)",
     offsetof(tk_settings_t, rake_bp), 0, 10000, 0},
    {"rake-cap", "rake cap in chips per round (per winner in a game that rakes winners; 0 = none)",
     offsetof(tk_settings_t, rake_cap), 0, 1000000, 0},
    {"bot-ms", "a server bot's move delay (ms)", offsetof(tk_settings_t, bot_ms), 0, 600000, 1},
    {"bot-fill-ms", "a table with a human and empty seats gets bots after this long (ms; -1 never)",
     offsetof(tk_settings_t, bot_fill_ms), -1, 86400000, 1},
    {"trustee-ms", "delay of the automatic move for a player on trustee (ms)",
     offsetof(tk_settings_t, trustee_ms), 1, 600000, 0},
    {"house-fund", "chips the house wallet is funded with once per service (0: never)",
     offsetof(tk_settings_t, house_fund), 0, 1000000000000000L, 2},
    {"move-wait-ms",
     "at a drain, a table moves as a whole when a server adopts it within this long (ms; 0: "
     "3000; -1: never, each player is re-seated alone)",
     offsetof(tk_settings_t, move_wait_ms), -1, 600000, 0},
    {"room-wait-ms",
     "a private room not full this long after its creation is disbanded (ms; 0: 1800000)",
     offsetof(tk_settings_t, room_wait_ms), 0, 86400000, 0},
    {"room-keep-ms",
     "a private room's record (its scoreboard) is kept this long after its end (ms; 0: 86400000)",
     offsetof(tk_settings_t, room_keep_ms), 0, 2592000000L, 0},
    {"tour-tables",
     "tournament tables this server plays at most (docs/tournaments.md \"Tables at the "
     "servers\"; 0: none)",
     offsetof(tk_settings_t, tour_tables), 0, 100000, 3},
    {"tour-host-ttl-ms",
     "a tournament table's claim lapses this long after its server stopped renewing it (ms)",
     offsetof(tk_settings_t, tour_host_ttl_ms), 300, 600000, 3},
    {"tour-join-ms",
     "a match's deal waits at most this long for its players to come to the table (ms; "
     "docs/tournaments.md \"Match halls: the tables at the servers\")",
     offsetof(tk_settings_t, tour_join_ms), 0, 60000, 3},
    {"spectators",
     "spectators per table at most (docs/spectators.md; 0: 100; -1: the tables may not be "
     "watched)",
     offsetof(tk_settings_t, spectators), -1, 100000, 4},
    {"house-float",
     "with --money-by-entity: what a funding of the house's seat account in the epoch adds "
     "beyond the round's need, in stakes (0: 10 full tables at the largest buy-in; docs/queues.md)",
     offsetof(tk_settings_t, house_float), 0, 100000000, 5},
};
#define TK_NFLAGS (sizeof tk_flag_spec / sizeof tk_flag_spec[0])
/* Every flag's name has its place in tk_engine_def_t.names (the kit's and the house's). */
_Static_assert(TK_NFLAGS + 1 <=
                   sizeof((tk_engine_def_t *)0)->names / sizeof((tk_engine_def_t *)0)->names[0],
               "tk_engine_def_t.names is too small for the kit's flags");

const config_flag_t *tk_engine_flags(tk_engine_def_t *def)
{
    if (def->flags != NULL)
        return def->flags;
    const tk_game_t *gm = def->game;
    size_t nextra = 0, n = 0;
    while (gm->extra_flags != NULL && gm->extra_flags[nextra].name != NULL)
        nextra++;
    config_flag_t *f = xcalloc(TK_NFLAGS + 1 + nextra + 1, sizeof *f);
    static char defaults[(TK_NFLAGS + 1) * 8][24]; /* up to 8 kit engines */
    static int used;
    *def->settings = gm->defaults;
    const char *prefix = gm->flag_prefix != NULL ? gm->flag_prefix : gm->engine;
    for (size_t i = 0; i < TK_NFLAGS; i++) {
        int need = tk_flag_spec[i].need;
        if ((need == 1 && !gm->bots) || (need == 2 && !gm->bots && !gm->house) ||
            (need == 3 && !gm->tournaments) || (need == 4 && !gm->watchable) ||
            (need == 5 && !gm->house))
            continue;
        snprintf(def->names[n], sizeof def->names[n], "%s-%s", prefix, tk_flag_spec[i].suffix);
        long dv = *(const long *)((const char *)&gm->defaults + tk_flag_spec[i].off);
        if (tk_flag_spec[i].off == offsetof(tk_settings_t, trustee_ms) && dv <= 0)
            dv = TK_TRUSTEE_MS;
        char *d = used < (int)(sizeof defaults / sizeof defaults[0]) ? defaults[used++] : NULL;
        if (d != NULL)
            snprintf(d, sizeof defaults[0], "%ld", dv);
        long lo = tk_flag_spec[i].min, hi = tk_flag_spec[i].max;
        if (tk_flag_spec[i].off == offsetof(tk_settings_t, seats)) {
            lo = gm->min_seats;
            hi = gm->max_seats;
        }
        f[n] = (config_flag_t){.name = def->names[n],
                               .type = CONFIG_INT,
                               .def = d,
                               .help = tk_flag_spec[i].help,
                               .out = (char *)def->settings + tk_flag_spec[i].off,
                               .min = lo,
                               .max = hi};
        n++;
    }
    if (gm->bots || gm->house) {
        snprintf(def->names[n], sizeof def->names[n], "%s-house", prefix);
        f[n] = (config_flag_t){.name = def->names[n],
                               .type = CONFIG_STR,
                               .def = gm->defaults.house,
                               .help = "the house wallet (server bots play for it)",
                               .out = &def->settings->house};
        n++;
    }
    for (size_t i = 0; i < nextra; i++)
        f[n++] = gm->extra_flags[i];
    def->flags = f;
    return f;
}

int tk_engine_check_options(tk_engine_def_t *def, const char *options, const char *games, char *err,
                            size_t errlen)
{
    if (def->game->check_options != NULL)
        return def->game->check_options(options, games, err, errlen);
    if (options == NULL || options[0] == '\0')
        return 0;
    snprintf(err, errlen, "the %s engine takes no rule options", def->game->engine);
    return -1;
}

/*
 * Whether the game's tables run with the money by entity (docs/queues.md "The game server's
 * money by entity"): there a round's settlement is one script in the server epoch's slot, so
 * every account a round settles must be an account of that epoch. Seat-account tables
 * (TK_MONEY_STACK) qualify, with server bots (their seats bought in from the house wallet by
 * transfer), top-ups (transfers too) and a house in the round (tk_round_end_house: the house
 * settles through a seat account of its own in the epoch, tk_int.h tk_house_acct_t). Play money
 * settles the players' wallets, each in its own slot: not one script there. Returns NULL, or
 * the reason (a static string).
 */
const char *tk_engine_entity_refusal(const tk_engine_def_t *def)
{
    if (def->game->money == TK_MONEY_WALLET)
        return "settles play money on the players' wallets, and a round over several wallets' "
               "slots is not one script: run it without --money-by-entity";
    return NULL;
}

/*
 * The service as seat accounts and op ids name it: the name itself when it has at most 20
 * characters, else "h" and the 8 hex digits of its FNV-1a hash, so that the longest account
 * (ts.<svc>.<slot>.<epoch>.<desk hex>.<seat>) stays within MONEY_NAME_MAX and the longest op
 * id within the 96 characters money.h allows, whatever the service is called.
 */
static void tk_service_token(const char *svc, char *out, size_t len)
{
    if (strlen(svc) <= 20) {
        snprintf(out, len, "%s", svc);
        return;
    }
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)svc; *p != '\0'; p++)
        h = (h ^ *p) * 16777619u;
    snprintf(out, len, "h%08" PRIx32, h);
}

/* Funds the house wallet once per service (tk_settings_t.house_fund): a cash-out with a fixed
 * operation id, so restarts and other replicas do not fund it again. */
static void tk_fund_house(tk_engine_t *eng)
{
    money_writer_t *w = gs_money(eng->gs);
    if (eng->set.house_fund <= 0 || w == NULL || (!eng->game->bots && !eng->game->house))
        return;
    char op[MONEY_ID_MAX + 1];
    const char *svc = gs_service(eng->gs);
    snprintf(op, sizeof op, "%s.%s",
             eng->game->house_fund_op != NULL ? eng->game->house_fund_op : "tk-house-fund",
             svc != NULL ? svc : eng->game->engine);
    int rc =
        money_writer_submit_cashout(w, eng->house, eng->set.house_fund, op, tk_money_log_cb, NULL);
    if (rc != 0)
        log_emit(LOG_ERROR, "tk_house_fund_refused", "{s:s,s:i}", "house", eng->house, "errno",
                 -rc);
}

/* The engine's Redis connection came (back): the lobby ads are rewritten at once. */
static void tk_rconn_state_cb(rconn_t *rc, bool connected, void *arg)
{
    (void)rc;
    tk_engine_t *eng = arg;
    if (connected && eng->ads != NULL)
        lobby_pub_refresh(eng->ads);
}

/* games (croupier-game --games) is a subset of the game's list, each game once: 0, or -EINVAL. */
static int tk_games_check(const tk_game_t *gm, const char *games)
{
    char buf[128], seen[128] = "";
    if (strlen(games) >= sizeof buf)
        return -EINVAL;
    snprintf(buf, sizeof buf, "%s", games);
    int n = 0;
    char *save = NULL;
    for (char *g = strtok_r(buf, ",", &save); g != NULL; g = strtok_r(NULL, ",", &save), n++) {
        if (!config_list_has(gm->games, g) || config_list_has(seen, g))
            return -EINVAL;
        snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s%s", n > 0 ? "," : "", g);
    }
    return n > 0 ? 0 : -EINVAL;
}

int tk_engine_create(tk_engine_def_t *def, gs_t *gs, const char *games, void **out)
{
    const tk_game_t *gm = def->game;
    if (games != NULL && tk_games_check(gm, games) != 0) {
        log_emit(LOG_ERROR, "engine_bad_games", "{s:s,s:s,s:s}", "engine", gm->engine, "games",
                 games, "served", gm->games);
        return -EINVAL;
    }
    tk_engine_t *eng = xcalloc(1, sizeof *eng);
    snprintf(eng->games, sizeof eng->games, "%s", games != NULL ? games : gm->games);
    eng->gs = gs;
    eng->game = gm;
    /* The settings were parsed with the process's flags when the engine's flags were part of
     * the table (croupier-game); otherwise (tests, tools) the game's defaults apply. */
    eng->set = def->flags != NULL ? *def->settings : gm->defaults;
    if (eng->set.min_buyin > eng->set.buyin) {
        log_emit(LOG_ERROR, "tk_bad_settings", "{s:s,s:s}", "engine", gm->engine, "error",
                 "min-buyin is above buyin");
        free(eng);
        return -EINVAL;
    }
    if (eng->set.house != NULL && eng->set.house[0] != '\0')
        snprintf(eng->house, sizeof eng->house, "%s", eng->set.house);
    else if (gm->house_name != NULL)
        gm->house_name(gs_service(gs) != NULL ? gs_service(gs) : gm->engine, eng->house,
                       sizeof eng->house);
    else
        snprintf(eng->house, sizeof eng->house, "house-%s", gm->engine);
    tk_service_token(gs_service(gs) != NULL ? gs_service(gs) : gm->engine, eng->svc,
                     sizeof eng->svc);
    if ((gm->bots || gm->house) && !money_valid_player(eng->house)) {
        log_emit(LOG_ERROR, "tk_bad_settings", "{s:s,s:s}", "engine", gm->engine, "error",
                 "the house wallet name is not a valid wallet name");
        free(eng);
        return -EINVAL;
    }
    snprintf(eng->labels, sizeof eng->labels, "engine=\"%s\"", gm->engine);
    metrics_registry_t *reg = gs_metrics(gs);
    eng->m_tables = metrics_gauge(reg, "tk_tables", eng->labels, "Kit tables open");
    eng->m_opened =
        metrics_counter(reg, "tk_tables_opened_total", eng->labels, "Kit tables opened");
    eng->m_seated = metrics_gauge(reg, "tk_seated", eng->labels, "Players seated at kit tables");
    eng->m_spectators = metrics_gauge(reg, "tk_spectators", eng->labels,
                                      "Spectators of kit tables, apart from the seats "
                                      "(docs/spectators.md)");
    eng->m_timeouts = metrics_counter(reg, "tk_timeouts_total", eng->labels,
                                      "Turns and action-window decisions that timed out");
    eng->m_auto = metrics_counter(reg, "tk_auto_actions_total", eng->labels,
                                  "Automatic moves for players on trustee or leaving");
    char ml[128];
    const char *mh = "Whole-table moves (docs/protocol.md): tables that moved away, were adopted "
                     "here, whose offer was withdrawn, or whose adoption failed here";
    snprintf(ml, sizeof ml, "%s,outcome=\"moved_out\"", eng->labels);
    eng->m_moved_out = metrics_counter(reg, "tk_table_moves_total", ml, mh);
    snprintf(ml, sizeof ml, "%s,outcome=\"adopted\"", eng->labels);
    eng->m_moved_in = metrics_counter(reg, "tk_table_moves_total", ml, mh);
    snprintf(ml, sizeof ml, "%s,outcome=\"withdrawn\"", eng->labels);
    eng->m_move_withdrawn = metrics_counter(reg, "tk_table_moves_total", ml, mh);
    snprintf(ml, sizeof ml, "%s,outcome=\"adopt_failed\"", eng->labels);
    eng->m_move_failed = metrics_counter(reg, "tk_table_moves_total", ml, mh);
    pthread_mutex_init(&eng->jobs_mu, NULL);
    struct event_base *base = gs_base(gs);
    if (gs_redis_host(gs) != NULL) {
        rconn_opts_t ro = {.host = gs_redis_host(gs),
                           .port = gs_redis_port(gs),
                           .name = "tk",
                           .on_state = tk_rconn_state_cb,
                           .arg = eng,
                           .sentinels = gs_redis_sentinels(gs),
                           .master_name = gs_redis_master(gs),
                           .cluster = gs_redis_cluster(gs)};
        eng->rc = rconn_create(base, &ro);
        /* With the money by entity (money.h, money_set_entity) the handoff calls are
         * mcluster's (tk_move.c), on this jobs thread too, and the rooms' records are written in
         * their codes' slots over the same cluster client (lease/room.h, room_set_entity). */
        eng->jobs = money_jobs_create_sentinel(gs_redis_host(gs), gs_redis_port(gs),
                                               gs_redis_sentinels(gs), gs_redis_master(gs));
        money_jobs_set_cluster(eng->jobs, gs_redis_cluster(gs));
        money_jobs_set_min_replicas(eng->jobs, gs_redis_min_replicas(gs), gs_redis_wait_ms(gs));
        lobby_pub_opts_t lo = {.server_id = gs_server_id(gs), .engine = gm->proto_engine};
        if (eng->rc != NULL)
            eng->ads = lobby_pub_create(base, eng->rc, &lo);
    }
    tk_lobby_t *lb = xcalloc(1, sizeof *lb);
    lb->eng = eng;
    int rc = gs_desk_create(gs, &tk_lobby_ops, lb, 0, &eng->lobby);
    if (rc != 0) {
        free(lb);
        money_jobs_destroy(eng->jobs);
        pthread_mutex_destroy(&eng->jobs_mu);
        lobby_pub_destroy(eng->ads);
        rconn_destroy(eng->rc);
        free(eng);
        return rc;
    }
    tk_fund_house(eng);
    if (gm->house && money_entity())
        eng->hacct = tk_house_acct_create(); /* the house's seat account (tk_int.h) */
    if (tk_tour_engine_create(eng) != 0)
        log_emit(LOG_ERROR, "tk_tour_hosting_unavailable", "{s:s}", "engine", gm->engine);
    else if (eng->tour != NULL) {
        rt_msg_t m = {.type = TK_MSG_TOUR_SCAN};
        rt_post(gs_rt(gs), eng->lobby, &m);
    }
    if (gm->engine_started != NULL)
        gm->engine_started(eng);
    log_emit(LOG_INFO, "tk_engine_started", "{s:s,s:i,s:I,s:I,s:I}", "engine", gm->engine, "seats",
             (int)eng->set.seats, "action_ms", (json_int_t)eng->set.action_ms, "gap_ms",
             (json_int_t)eng->set.gap_ms, "idle_ms", (json_int_t)eng->set.idle_ms);
    *out = eng;
    return 0;
}
