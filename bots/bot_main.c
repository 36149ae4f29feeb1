/*
 * croupier-bot -- many bot players in one process (docs/architecture.md §1, §8): they log in
 * through the gateways, join tables, play, follow GoAway / Moved / TableClosing, and at the end
 * write a JSON report (bot_book.h). With --tournament they play that hold'em tournament
 * instead (docs/bots.md "Tournaments"; the report's "tournament" object, bot_tour.h) and the
 * process ends when every bot is done with it, or at --seconds. Exit status: 0 when no round was
 * torn and no unexpected error happened, 1 otherwise, 2 on a usage error.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "bot_book.h"
#include "bot_fleet.h"
#include "bot_strategy.h"
/* BOT_STRATEGY_NAMES: the games of the generated table (bots/meson.build). */
#define BOT_STRATEGY(game)
#include "bot_strategies_list.h"
#undef BOT_STRATEGY
#include "clock.h"
#include "config.h"
#include "log.h"
#include "version.h"

static struct {
    const char *gateways, *game, *engine, *report, *rounds_file, *secret_file, *log_level;
    long bots, stake, seconds, seed, player_base, request_timeout_ms, max_retries;
    long finish_timeout_ms, ramp_ms, progress_ms, ping_ms, keepalive_idle_ms, keepalive_timeout_ms,
        room_seats, room_deals;
    long think_percent, tournament;
} O;

static const config_flag_t flags[] = {
    {"gateways", CONFIG_STR, NULL, "gateways H:P[,H:P...] or @FILE (re-read at each reconnect)",
     &O.gateways, 0, 0},
    {"bots", CONFIG_INT, "10", "number of bots", &O.bots, 1, 100000},
    {"game", CONFIG_STR, "test", "game to play (bots know: " BOT_STRATEGY_NAMES ")", &O.game, 0, 0},
    {"engine", CONFIG_STR, NULL,
     "engine of the Join: traditional|holdem|persistent|game (game: a table-kit game, "
     "ENGINE_GAME; default: the game's)",
     &O.engine, 0, 0},
    {"stake", CONFIG_INT, "10", "stake of the Join (> 0)", &O.stake, 1, 1000000000},
    {"seconds", CONFIG_INT, "10", "how long to play before stopping", &O.seconds, 1, 31 * 86400},
    {"report", CONFIG_STR, NULL, "write the JSON report here", &O.report, 0, 0},
    {"rounds-file", CONFIG_STR, NULL,
     "write every round id seen to end here: \"ID finished|voided|nomoney|unseen\" a line",
     &O.rounds_file, 0, 0},
    {"token-secret-file", CONFIG_STR, NULL, "HMAC secret of the gateways' login tokens",
     &O.secret_file, 0, 0},
    {"seed", CONFIG_INT, "1", "seed of the bots' random choices", &O.seed, 0, 0},
    {"player-base", CONFIG_INT, "1000000", "bot i plays as player base+i", &O.player_base, 1,
     1000000000000000L},
    {"request-timeout-ms", CONFIG_INT, "3000", "deadline of one request attempt",
     &O.request_timeout_ms, 10, 600000},
    {"max-retries", CONFIG_INT, "3", "resends of a request (same id) / retriable refusals",
     &O.max_retries, 1, 100},
    {"finish-timeout-ms", CONFIG_INT, "15000", "bound of the stop (leave, wait for rounds)",
     &O.finish_timeout_ms, 100, 3600000},
    {"ping-ms", CONFIG_INT, "20000",
     "keepalive: a Ping after this long without sending (below the gateways' idle timeout)",
     &O.ping_ms, 100, 3600000},
    {"keepalive-idle-ms", CONFIG_INT, "3000",
     "a Ping (probe) after this long without receiving anything from the gateway (0: no probe)",
     &O.keepalive_idle_ms, 0, 3600000},
    {"keepalive-timeout-ms", CONFIG_INT, "5000",
     "no frame this long after a probe: the gateway is silent, move to another one",
     &O.keepalive_timeout_ms, 100, 3600000},
    {"ramp-ms", CONFIG_INT, "0", "spread the first connects over this (0 = min(2000, 10 x bots))",
     &O.ramp_ms, 0, 600000},
    {"progress-ms", CONFIG_INT, "1000", "log a progress line this often (0 = never)",
     &O.progress_ms, 0, 3600000},
    {"room-seats", CONFIG_INT, "0",
     "play private rooms in groups of this many bots (the first creates, the others join by "
     "code; --bots a multiple of it); 0: matchmade tables",
     &O.room_seats, 0, 9},
    {"room-deals", CONFIG_INT, "4", "deals of each room the bots create", &O.room_deals, 1, 64},
    {"think-percent", CONFIG_INT, "100",
     "pace: every move delay of the strategies scaled by this percentage (100: their own pace)",
     &O.think_percent, 1, 1000},
    {"tournament", CONFIG_INT, "0",
     "play this hold'em tournament (its id; --game holdem): register, take the tournament seat, "
     "play until out or over; 0: cash tables",
     &O.tournament, 0, LONG_MAX},
    {"log-level", CONFIG_STR, "info", "debug|info|warn|error", &O.log_level, 0, 0},
    {0},
};

typedef struct {
    struct event_base *base;
    bot_fleet_t *fleet;
    bot_book_t *book;
    bot_tour_book_t *tour; /* --tournament only */
    struct event *end_timer, *progress, *sigint, *sigterm;
    bool stopping;
    int64_t start_ms;
} bot_main_t;

static void main_done(void *arg)
{
    bot_main_t *m = arg;
    event_base_loopbreak(m->base);
}

static void main_stop(bot_main_t *m)
{
    if (m->stopping)
        return;
    m->stopping = true;
    log_emit(LOG_INFO, "bot_stopping", NULL);
    bot_fleet_stop(m->fleet, main_done, m);
}

/* Every bot is done with its tournament: nothing is left to play. */
static void main_tour_done(void *arg)
{
    main_stop(arg);
}

static void main_end_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    main_stop(arg);
}

static void main_signal_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    log_emit(LOG_INFO, "bot_signal", "{s:i}", "signal", (int)fd);
    main_stop(arg);
}

static void main_progress_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    bot_main_t *m = arg;
    bot_book_rounds_t r;
    bot_book_rounds(m->book, &r);
    log_emit(LOG_INFO, "bot_progress", "{s:I,s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "ms",
             (json_int_t)(clock_mono_ms() - m->start_ms), "connected",
             (int)bot_fleet_connected(m->fleet), "finished", (json_int_t)r.finished, "voided",
             (json_int_t)r.voided, "torn", (json_int_t)r.torn, "crash_voided",
             (json_int_t)r.crash_voided, "actions",
             (json_int_t)bot_book_counter(m->book, BOT_C_ACTIONS_SENT), "goaways",
             (json_int_t)bot_book_counter(m->book, BOT_C_GOAWAYS), "reconnects",
             (json_int_t)bot_book_counter(m->book, BOT_C_RECONNECTS), "reconnects_after_loss",
             (json_int_t)bot_book_counter(m->book, BOT_C_RECONNECTS_LOST), "unexpected_errors",
             (json_int_t)bot_book_unexpected(m->book));
}

static int parse_engine(const char *s, Croupier__Engine *out)
{
    if (s == NULL)
        *out = CROUPIER__ENGINE__ENGINE_UNSPECIFIED;
    else if (strcmp(s, "traditional") == 0)
        *out = CROUPIER__ENGINE__ENGINE_TRADITIONAL;
    else if (strcmp(s, "holdem") == 0)
        *out = CROUPIER__ENGINE__ENGINE_HOLDEM;
    else if (strcmp(s, "persistent") == 0)
        *out = CROUPIER__ENGINE__ENGINE_PERSISTENT;
    else if (strcmp(s, "game") == 0)
        *out = CROUPIER__ENGINE__ENGINE_GAME;
    else
        return -EINVAL;
    return 0;
}

int main(int argc, char **argv)
{
    char err[256];
    const char *summary = "many bot players through the gateways; writes a JSON report";
    config_program_version = croupier_version;
    int rc = config_parse(flags, "croupier-bot", summary, argc, argv, err, sizeof err);
    if (rc == CONFIG_HELP)
        return 0;
    if (rc != CONFIG_OK) {
        fprintf(stderr, "croupier-bot: %s (see --help)\n", err);
        return 2;
    }
    log_level_t lvl;
    if (log_parse_level(O.log_level, &lvl) != 0) {
        fprintf(stderr, "croupier-bot: --log-level '%s' is not debug|info|warn|error\n",
                O.log_level);
        return 2;
    }
    log_set_level(lvl);
    log_set_process("bot");
    if (O.gateways == NULL || O.report == NULL || O.secret_file == NULL) {
        fprintf(stderr, "croupier-bot: --gateways, --report and --token-secret-file are "
                        "required (see --help)\n");
        return 2;
    }
    const bot_strategy_ops_t *strat = bot_strategy_find(O.game);
    if (strat == NULL) {
        fprintf(stderr, "croupier-bot: bots cannot play game '%s' (they know: %s)\n", O.game,
                bot_strategy_names());
        return 2;
    }
    Croupier__Engine engine;
    if (parse_engine(O.engine, &engine) != 0) {
        fprintf(stderr, "croupier-bot: --engine '%s' is not traditional|holdem|persistent|game\n",
                O.engine);
        return 2;
    }
    /* A hold'em tournament's tables are hold'em; a match hall's are a shedding game's. */
    bool tour_holdem = strcmp(strat->game, "holdem") == 0;
    bool tour_match = strcmp(strat->game, "doudizhu") == 0 || strcmp(strat->game, "guandan") == 0 ||
                      strcmp(strat->game, "runfast") == 0;
    Croupier__Engine tour_engine =
        tour_holdem ? CROUPIER__ENGINE__ENGINE_HOLDEM : CROUPIER__ENGINE__ENGINE_TRADITIONAL;
    if (O.tournament > 0 &&
        ((!tour_holdem && !tour_match) ||
         (engine != CROUPIER__ENGINE__ENGINE_UNSPECIFIED && engine != tour_engine))) {
        fprintf(stderr,
                "croupier-bot: --tournament %ld: a tournament's tables are hold'em (--game "
                "holdem) or a match hall's shedding game (--game doudizhu|guandan|runfast, "
                "--engine traditional), not --game %s --engine %s\n",
                O.tournament, O.game, O.engine);
        return 2;
    }
    if (O.tournament > 0 && O.room_seats > 0) {
        fprintf(stderr, "croupier-bot: --tournament and --room-seats exclude each other\n");
        return 2;
    }
    static token_secret_t secret;
    rc = token_secret_load(O.secret_file, &secret);
    if (rc != 0) {
        fprintf(stderr, "croupier-bot: cannot use --token-secret-file %s: %s\n", O.secret_file,
                rc == -EINVAL ? "shorter than 16 bytes" : strerror(-rc));
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int status = 1;
    bot_main_t m = {0};
    m.base = event_base_new();
    m.book = bot_book_create((uint32_t)O.bots);
    if (O.tournament > 0)
        m.tour = bot_tour_book_create((uint64_t)O.tournament, (uint32_t)O.bots);
    if (m.base == NULL || m.book == NULL || (O.tournament > 0 && m.tour == NULL)) {
        fprintf(stderr, "croupier-bot: out of resources\n");
        goto fail_base;
    }
    bot_fleet_config_t fc = {
        .base = m.base,
        .gateways = O.gateways,
        .bots = (uint32_t)O.bots,
        .strategy = strat,
        .engine = engine,
        .stake = O.stake,
        .secret = &secret,
        .player_base = (uint64_t)O.player_base,
        .seed = (uint64_t)O.seed,
        .request_timeout_ms = (int)O.request_timeout_ms,
        .max_retries = (int)O.max_retries,
        .ramp_ms = (int)O.ramp_ms,
        .think_percent = (int)O.think_percent,
        .finish_timeout_ms = (int)O.finish_timeout_ms,
        .ping_ms = (int)O.ping_ms,
        .keepalive_idle_ms = O.keepalive_idle_ms == 0 ? -1 : (int)O.keepalive_idle_ms,
        .keepalive_timeout_ms = (int)O.keepalive_timeout_ms,
        .book = m.book,
        .room_seats = (int)O.room_seats,
        .room_deals = (int)O.room_deals,
        .tournament = (uint64_t)O.tournament,
        .tour_book = m.tour,
        .all_done = O.tournament > 0 ? main_tour_done : NULL,
        .all_done_arg = &m,
    };
    if (O.room_seats == 1 || (O.room_seats > 0 && O.bots % O.room_seats != 0)) {
        fprintf(stderr, "croupier-bot: --room-seats %ld: 2..9, and --bots (%ld) a multiple of it\n",
                O.room_seats, O.bots);
        status = 2;
        goto fail_base;
    }
    if (bot_fleet_create(&fc, &m.fleet) != 0) {
        fprintf(stderr, "croupier-bot: bad --gateways '%s'\n", O.gateways);
        status = 2;
        goto fail_base;
    }
    m.start_ms = clock_mono_ms();
    m.end_timer = evtimer_new(m.base, main_end_cb, &m);
    struct timeval tv = {.tv_sec = O.seconds};
    evtimer_add(m.end_timer, &tv);
    m.sigint = evsignal_new(m.base, SIGINT, main_signal_cb, &m);
    m.sigterm = evsignal_new(m.base, SIGTERM, main_signal_cb, &m);
    evsignal_add(m.sigint, NULL);
    evsignal_add(m.sigterm, NULL);
    if (O.progress_ms > 0) {
        m.progress = event_new(m.base, -1, EV_PERSIST, main_progress_cb, &m);
        struct timeval pv = {.tv_sec = O.progress_ms / 1000,
                             .tv_usec = (O.progress_ms % 1000) * 1000};
        evtimer_add(m.progress, &pv);
    }
    log_emit(LOG_INFO, "bot_start", "{s:i,s:s,s:s,s:i,s:I}", "bots", (int)O.bots, "game", O.game,
             "gateways", O.gateways, "seconds", (int)O.seconds, "tournament",
             (json_int_t)O.tournament);
    bot_fleet_start(m.fleet);
    event_base_dispatch(m.base);

    bot_book_finish(m.book, clock_mono_ms());
    if (O.progress_ms > 0)
        main_progress_cb(-1, 0, &m);
    json_t *meta =
        json_pack("{s:i,s:s,s:s,s:i,s:i,s:I,s:I}", "bots", (int)O.bots, "game", O.game, "gateways",
                  O.gateways, "stake", (int)O.stake, "seconds", (int)O.seconds, "seed",
                  (json_int_t)O.seed, "duration_ms", (json_int_t)(clock_mono_ms() - m.start_ms));
    if (m.tour != NULL) {
        /* Refused registrations are expected (docs/bots.md "Tournaments"), but a fleet that
         * entered nothing tested nothing: then the run fails. */
        if (bot_tour_refusals_total(m.tour) >= (uint64_t)O.bots)
            bot_book_error(m.book, "tournament_not_entered", false);
        json_object_set_new(meta, "tournament", bot_tour_report(m.tour));
    }
    rc = bot_book_write_report(m.book, meta, O.report);
    json_decref(meta);
    if (rc != 0) {
        fprintf(stderr, "croupier-bot: cannot write --report %s: %s\n", O.report, strerror(-rc));
        goto fail_fleet;
    }
    if (O.rounds_file != NULL) {
        FILE *fp = fopen(O.rounds_file, "w");
        if (fp == NULL || (bot_book_write_round_ids(m.book, fp), fclose(fp)) != 0) {
            fprintf(stderr, "croupier-bot: cannot write --rounds-file %s\n", O.rounds_file);
            goto fail_fleet;
        }
    }
    bot_book_rounds_t r;
    bot_book_rounds(m.book, &r);
    log_emit(LOG_INFO, "bot_report", "{s:s,s:b,s:I,s:I,s:I,s:I}", "report", O.report, "ok",
             bot_book_ok(m.book), "finished", (json_int_t)r.finished, "voided",
             (json_int_t)r.voided, "torn", (json_int_t)r.torn, "unexpected_errors",
             (json_int_t)bot_book_unexpected(m.book));
    status = bot_book_ok(m.book) ? 0 : 1;
fail_fleet:
    if (m.progress != NULL)
        event_free(m.progress);
    if (m.sigint != NULL)
        event_free(m.sigint);
    if (m.sigterm != NULL)
        event_free(m.sigterm);
    if (m.end_timer != NULL)
        event_free(m.end_timer);
    bot_fleet_destroy(m.fleet);
fail_base:
    bot_tour_book_destroy(m.tour);
    bot_book_destroy(m.book);
    if (m.base != NULL)
        event_base_free(m.base);
    return status;
}
