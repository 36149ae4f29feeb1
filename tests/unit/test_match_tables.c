/*
 * Match halls at the traditional-engine servers (docs/tournaments.md "Match halls: the
 * director" and "Tables at the servers"; docs/rules/match-halls.md): real croupier-director and
 * croupier-game --engine traditional processes against a real redis-server on loopback. Nobody
 * connects: every seat is played by the kit's automatic move, so the deals are real deals of the
 * game, dealt and played at the servers, whose results the director scores.
 *
 *   - a Dou Dizhu 打立出局 -> 定局积分 match of 24 played to its end while one server drains (its
 *     tables handed over between deals) and another is SIGKILLed (its claims expire, the deal in
 *     play is dealt again elsewhere): every stage score recomputed independently from the deals'
 *     hand histories (result x base, carried over by the rules), places and prizes those of the
 *     pure module over the stages the director kept, paid once, money exact;
 *   - a Guandan Swiss match of 8 (2 tables of 4, 2 rounds of 1 deal): the partnerships' results
 *     equal and opposite in every deal, the match points of every round those the rules give
 *     for the round scores the histories show.
 */
#include <check.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "deck.h"
#include "match.h"
#include "match_json.h"
#include "replay.h"
#include "support.h"
#include "testenv.h"
#include "tour_payout.h"

static testenv_t env;
static redisContext *R;
static ts_proc_t *director;

#define rnum(...) ts_rnum(R, __VA_ARGS__) /* support.h */

#define rstr(...) ts_rstr(R, __VA_ARGS__)

static void setup(void)
{
    ck_assert_int_eq(testenv_start(&env, NULL), 0);
    R = redisConnect("127.0.0.1", ts_redis_port(env.redis));
    ck_assert(R != NULL && R->err == 0);
    char *args[] = {"--claim-ttl-ms", "1500", "--scan-ms", "100", NULL};
    testenv_server_t d;
    ck_assert_int_eq(testenv_start_director(&env, &d, "dir-a", args), 0);
    director = d.proc;
}

static void teardown(void)
{
    if (director != NULL) {
        ts_proc_signal(director, SIGKILL);
        ts_proc_wait(director, 5000, NULL);
        ts_proc_free(director);
        director = NULL;
    }
    redisFree(R);
    testenv_stop(&env);
}

/* A traditional server that hosts match tables; absent players' moves after trustee_ms. */
static void game_start_trustee(testenv_server_t *s, const char *trustee_ms)
{
    char *args[] = {"--trad-trustee-ms",
                    (char *)trustee_ms,
                    "--trad-gap-ms",
                    "0",
                    "--trad-tour-host-ttl-ms",
                    "1200",
                    "--trad-tour-join-ms", /* nobody comes: no deal waits for anyone */
                    "0",
                    "--drain-max-seconds",
                    "20",
                    NULL};
    ck_assert_int_eq(testenv_start_game(&env, s, "traditional", 20, args, NULL), 0);
}

static void game_start(testenv_server_t *s)
{
    game_start_trustee(s, "2");
}

static void dump_logs(ts_proc_t *game)
{
    ts_proc_t *procs[] = {game, director};
    for (size_t i = 0; i < 2; i++) {
        char *log = procs[i] != NULL ? ts_proc_log(procs[i]) : NULL;
        size_t n = log != NULL ? strlen(log) : 0;
        fprintf(stderr, "---- %s (last 6000 bytes)\n%s\n", i == 0 ? "game" : "director",
                log != NULL ? log + (n > 6000 ? n - 6000 : 0) : "(none)");
        free(log);
    }
}

static uint64_t match_create(const char *structure)
{
    return ts_tour_create(R, "test", "match", structure, 1, 0);
}

static void register_all(uint64_t id, uint64_t first, int n)
{
    for (int p = 0; p < n; p++) {
        uint64_t player = first + (uint64_t)p;
        rnum("SET {croupier:money}:wallet:%" PRIu64 " 1000", player);
        redisReply *r = redisCommand(R,
                                     "XADD {croupier:tour:%" PRIu64 "}:in * op register req "
                                     "r%" PRIu64 " player %" PRIu64,
                                     id, player, player);
        ck_assert(r != NULL && r->type == REDIS_REPLY_STRING);
        freeReplyObject(r);
        r = redisCommand(R, "BLPOP {croupier:tour:%" PRIu64 "}:reply:r%" PRIu64 " 10", id, player);
        ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ARRAY, "no answer to register %" PRIu64,
                      player);
        ck_assert_msg(strstr(r->element[1]->str, "\"code\":\"OK\"") != NULL, "%s",
                      r->element[1]->str);
        freeReplyObject(r);
    }
}

static bool status_is(uint64_t id, const char *want)
{
    char *s = rstr("HGET {croupier:tour:%" PRIu64 "}:meta status", id);
    bool yes = s != NULL && strcmp(s, want) == 0;
    free(s);
    return yes;
}

/* The entries of the match's log named event. */
static long long log_count(uint64_t id, const char *event)
{
    redisReply *r = redisCommand(R, "XRANGE {croupier:tour:%" PRIu64 "}:log - +", id);
    ck_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
    long long n = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *f = r->element[i]->element[1];
        n += f->elements >= 2 && strcmp(f->element[1]->str, event) == 0;
    }
    freeReplyObject(r);
    return n;
}

static bool wait_finished(uint64_t id, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    while (!status_is(id, "finished") && ts_now_ms() < end)
        ts_sleep_ms(100);
    return status_is(id, "finished");
}

static match_stage_t *load_stage(uint64_t id, int k)
{
    char *txt = rstr("HGET {croupier:tour:%" PRIu64 "}:stages %d", id, k);
    ck_assert_ptr_nonnull(txt);
    match_stage_t *s = NULL;
    char err[256];
    ck_assert_msg(match_stage_from_json(txt, strlen(txt), &s, err, sizeof err) == 0, "%s", err);
    free(txt);
    return s;
}

/* A deal as its hand history says (docs/hand-history.md, its "match" object). */
typedef struct {
    uint32_t stage, round;
    int64_t base;
    size_t n;
    uint64_t player[4];
    int64_t result[4];
} hdeal_t;

#define MAX_DEALS 5000

/* The completed deals of match id in the history stream of game, in the order the director
 * recorded them. Checks each: a real deal of the game (a deck, its commitment), every seat once,
 * results summing to 0. Returns their number. */
static size_t read_deals(uint64_t id, const char *game, size_t seats, hdeal_t *out)
{
    redisReply *r = redisCommand(R, "XRANGE {croupier:history:%s}:stream - +", game);
    ck_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
    size_t n = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *f = r->element[i]->element[1];
        json_t *rec = NULL;
        for (size_t k = 0; k + 1 < f->elements; k += 2)
            if (strcmp(f->element[k]->str, "data") == 0)
                rec = json_loads(f->element[k + 1]->str, 0, NULL);
        json_t *mj = json_object_get(rec, "match");
        /* A deal voided at its server (the drain's bound, the fence) is dealt again: its record
         * says voided, and nothing of it was scored. */
        if (rec == NULL || (uint64_t)json_integer_value(json_object_get(mj, "id")) != id ||
            strcmp(json_string_value(json_object_get(rec, "outcome")), "voided") == 0) {
            json_decref(rec);
            continue;
        }
        ck_assert_str_eq(json_string_value(json_object_get(rec, "outcome")), "completed");
        ck_assert_str_eq(json_string_value(json_object_get(rec, "game")), game);
        ck_assert_ptr_nonnull(json_string_value(json_object_get(rec, "deck")));
        ck_assert_ptr_nonnull(json_string_value(json_object_get(rec, "deck_commitment")));
        ck_assert_ptr_null(json_object_get(rec, "tournament")); /* hold'em's, not a match's */
        ck_assert_uint_lt(n, MAX_DEALS);
        hdeal_t *d = &out[n++];
        memset(d, 0, sizeof *d);
        d->stage = (uint32_t)json_integer_value(json_object_get(mj, "stage"));
        d->round = (uint32_t)json_integer_value(json_object_get(mj, "round"));
        d->base = json_integer_value(json_object_get(mj, "base"));
        ck_assert_int_ge(d->base, 1);
        json_t *st = json_object_get(rec, "seats"), *results = json_object_get(rec, "results");
        ck_assert_uint_eq(json_array_size(st), seats);
        int64_t sum = 0;
        size_t a, b;
        json_t *s, *x;
        json_array_foreach(st, a, s)
        {
            d->player[d->n] = strtoull(json_string_value(json_object_get(s, "player")), NULL, 10);
            json_array_foreach(results, b, x)
            {
                if (json_integer_value(json_object_get(x, "seat")) ==
                    json_integer_value(json_object_get(s, "seat")))
                    d->result[d->n] = json_integer_value(json_object_get(x, "delta"));
            }
            sum += d->result[d->n];
            d->n++;
        }
        ck_assert_int_eq(sum, 0);
        json_decref(rec);
    }
    freeReplyObject(r);
    return n;
}

static long long wallet(uint64_t player)
{
    return rnum("GET {croupier:money}:wallet:%" PRIu64, player);
}

static json_t *entry_of(uint64_t id, uint64_t player)
{
    char *txt = rstr("HGET {croupier:tour:%" PRIu64 "}:entries %" PRIu64, id, player);
    ck_assert_ptr_nonnull(txt);
    json_t *j = json_loads(txt, 0, NULL);
    free(txt);
    ck_assert_ptr_nonnull(j);
    return j;
}

/* The places and prizes of the finished match: the pure module's over the stages the director
 * kept, paid once; wallets + fees + nothing left in the pool = what was seeded. */
static void check_places(uint64_t id, const match_stage_t *const *stages, size_t nstages,
                         uint64_t first, uint32_t n, int64_t pool)
{
    match_standing_t sd[64];
    size_t nsd = 0;
    ck_assert_int_eq(match_standings(stages, nstages, sd, 64, &nsd), 0);
    ck_assert_uint_eq(nsd, n);
    tour_payout_config_t pc = tour_payout_config_default();
    int64_t prizes[64];
    size_t nplaces = 0;
    ck_assert_int_eq(tour_payout_table(&pc, n, pool, prizes, 64, &nplaces), 0);
    match_award_t aw[64];
    ck_assert_int_eq(match_prizes(prizes, nplaces, sd, nsd, aw), 0);
    int64_t paid = 0;
    for (size_t i = 0; i < nsd; i++) {
        json_t *e = entry_of(id, aw[i].player);
        ck_assert_int_eq(json_integer_value(json_object_get(e, "place")), aw[i].place);
        ck_assert_int_eq(json_integer_value(json_object_get(e, "prize")), aw[i].amount);
        json_decref(e);
        paid += aw[i].amount;
    }
    ck_assert_int_eq(paid, pool);
    long long money = rnum("GET {croupier:money}:rake:tournament");
    for (uint32_t i = 0; i < n; i++)
        money += wallet(first + i);
    ck_assert_int_eq(money, 1000LL * n);
    ck_assert_int_eq(rnum("EXISTS {croupier:money}:tourpool:%" PRIu64, id), 0);
}

/* 24 players: 打立出局 to 9 with a base growing every second, then 定局积分 (3 tables, the 3
 * firsts to the final) of 2 deals a round. */
#define DDZ24                                                                                      \
    "{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":100,\"fee\":10,"                       \
    "\"min_entrants\":24,\"max_entrants\":24,\"stages\":["                                         \
    "{\"format\":\"rising\",\"seats\":3,\"start_score\":1000,\"base_score\":10,"                   \
    "\"growth_pct\":20,\"growth_ms\":1000,\"out_pct\":2000,\"advance\":9},"                        \
    "{\"format\":\"fixed\",\"seats\":3,\"deals_per_round\":2}]}"

static hdeal_t deals[MAX_DEALS];

START_TEST(test_match_tables_ddz_through_a_drain_and_a_crash)
{
    testenv_server_t a, b, c = {0};
    game_start(&a);
    game_start(&b);
    const uint64_t first = 3001;
    uint64_t id = match_create(DDZ24);
    register_all(id, first, 24);
    long long end = ts_now_ms() + 20000;
    while (log_count(id, "match_deal") < 6 && ts_now_ms() < end)
        ts_sleep_ms(20);
    if (log_count(id, "match_deal") < 6)
        dump_logs(a.proc);
    ck_assert_int_ge(log_count(id, "match_deal"), 6);
    ck_assert(ts_proc_log_has(a.proc, "\"tk_tour_table_claimed\"") ||
              ts_proc_log_has(b.proc, "\"tk_tour_table_claimed\""));
    /* Where a table is played names a traditional server and the match's game. */
    redisReply *x = redisCommand(R, "HVALS {croupier:tour:%" PRIu64 "}:where", id);
    ck_assert(x != NULL && x->type == REDIS_REPLY_ARRAY && x->elements > 0);
    for (size_t k = 0; k < x->elements; k++) {
        json_t *w = json_loads(x->element[k]->str, 0, NULL);
        ck_assert_msg(w != NULL, "where: %s", x->element[k]->str);
        ck_assert(strncmp(json_string_value(json_object_get(w, "server")), "traditional:", 12) ==
                  0);
        ck_assert_str_eq(json_string_value(json_object_get(w, "game")), "doudizhu");
        json_decref(w);
    }
    freeReplyObject(x);

    /* c comes up; a drains (tables handed over between deals); then b dies mid-deal. */
    game_start(&c);
    long long before = log_count(id, "match_deal");
    testenv_stop_server(&a);
    ck_assert_msg(!status_is(id, "finished"), "finished before the crash step");
    end = ts_now_ms() + 20000;
    while (log_count(id, "match_deal") < before + 4 && !status_is(id, "finished") &&
           ts_now_ms() < end)
        ts_sleep_ms(20);
    ts_proc_signal(b.proc, SIGKILL);
    ts_proc_wait(b.proc, 5000, NULL);
    if (!wait_finished(id, 90000))
        dump_logs(c.proc);
    ck_assert_msg(status_is(id, "finished"), "not finished after the drain and the crash");
    ck_assert(ts_proc_log_has(c.proc, "\"tk_tour_table_claimed\""));

    /* Every deal recorded once: one history record per match_deal. */
    size_t nd = read_deals(id, "doudizhu", 3, deals);
    ck_assert_int_eq((long long)nd, log_count(id, "match_deal"));
    size_t scored = 0; /* deals that moved scores (a landlord won or lost) */
    for (size_t k = 0; k < nd; k++)
        scored += deals[k].result[0] != 0 || deals[k].result[1] != 0;
    ck_assert_uint_gt(scored, nd / 2);
    /* The stage scores, from the histories alone. */
    match_stage_t *s0 = load_stage(id, 0), *s1 = load_stage(id, 1);
    ck_assert(s0->over && s1->over);
    ck_assert_uint_eq(s0->n, 24);
    ck_assert_uint_eq(s1->n, 9);
    for (uint32_t i = 0; i < s0->n; i++) {
        int64_t want = 1000;
        for (size_t k = 0; k < nd; k++)
            for (size_t x = 0; x < deals[k].n; x++)
                if (deals[k].stage == 0 && deals[k].player[x] == s0->players[i].id)
                    want += deals[k].result[x] * deals[k].base;
        ck_assert_msg(s0->players[i].score == want, "player %" PRIu64 ": %" PRId64 " != %" PRId64,
                      s0->players[i].id, s0->players[i].score, want);
    }
    for (uint32_t i = 0; i < s1->n; i++) {
        int64_t j = match_stage_find(s0, s1->players[i].id);
        ck_assert_int_ge(j, 0);
        int64_t want = match_carry(s0->players[j].score, s0->cfg.carry_sqrt_permille,
                                   s0->cfg.carry_neg_permille);
        for (size_t k = 0; k < nd; k++)
            for (size_t x = 0; x < deals[k].n; x++)
                if (deals[k].stage == 1 && deals[k].player[x] == s1->players[i].id)
                    want += deals[k].result[x] * deals[k].base;
        ck_assert_int_eq(s1->players[i].score, want);
    }
    const match_stage_t *stages[2] = {s0, s1};
    check_places(id, stages, 2, first, 24, 2400);
    match_stage_destroy(s0);
    match_stage_destroy(s1);
    /* The tables let go of their claims at the end. */
    long long deadline = ts_now_ms() + 5000;
    while (rnum("EXISTS {croupier:tour:%" PRIu64 "}:host:1", id) == 1 && ts_now_ms() < deadline)
        ts_sleep_ms(50);
    ck_assert_int_eq(rnum("EXISTS {croupier:tour:%" PRIu64 "}:host:1", id), 0);
    testenv_stop_server(&b);
    testenv_stop_server(&c);
}
END_TEST

#define GD8                                                                                        \
    "{\"format\":\"match\",\"game\":\"guandan\",\"buy_in\":100,\"fee\":10,"                        \
    "\"min_entrants\":8,\"max_entrants\":8,\"stages\":["                                           \
    "{\"format\":\"swiss\",\"seats\":4,\"rounds\":2,\"deals_per_round\":1}]}"

START_TEST(test_match_tables_guandan_swiss)
{
    testenv_server_t a;
    game_start(&a);
    const uint64_t first = 4001;
    uint64_t id = match_create(GD8);
    register_all(id, first, 8);
    if (!wait_finished(id, 60000))
        dump_logs(a.proc);
    ck_assert_msg(status_is(id, "finished"), "not finished");
    size_t nd = read_deals(id, "guandan", 4, deals);
    ck_assert_uint_eq(nd, 4); /* 2 rounds x 2 tables x 1 deal */
    ck_assert_int_eq((long long)nd, log_count(id, "match_deal"));
    match_stage_t *s = load_stage(id, 0);
    ck_assert(s->over);
    for (size_t k = 0; k < nd; k++) {
        /* Seats 0 + 2 against 1 + 3: partners equal, opponents opposite. */
        ck_assert_int_eq(deals[k].result[0], deals[k].result[2]);
        ck_assert_int_eq(deals[k].result[1], deals[k].result[3]);
        ck_assert_int_eq(deals[k].result[0], -deals[k].result[1]);
        ck_assert_int_ne(deals[k].result[0], 0);
    }
    /* Every player's score is the sum of his results x base; his match points mp_absent (0) for
     * each round: nobody here played himself, the trustee played every seat, and the servers
     * reported every player absent (docs/rules/match-halls.md "Disconnects"). */
    for (uint32_t i = 0; i < s->n; i++) {
        int64_t score = 0;
        for (size_t k = 0; k < nd; k++)
            for (size_t x = 0; x < deals[k].n; x++)
                if (deals[k].player[x] == s->players[i].id)
                    score += deals[k].result[x] * deals[k].base;
        ck_assert_int_eq(s->players[i].score, score);
        ck_assert_int_eq(s->players[i].mp, 0);
    }
    const match_stage_t *stages[1] = {s};
    check_places(id, stages, 1, first, 8, 800);
    match_stage_destroy(s);
    testenv_stop_server(&a);
}
END_TEST

#define GD8DUP                                                                                     \
    "{\"format\":\"match\",\"game\":\"guandan\",\"buy_in\":100,\"fee\":10,"                        \
    "\"min_entrants\":8,\"max_entrants\":8,\"stages\":["                                           \
    "{\"format\":\"swiss\",\"seats\":4,\"rounds\":2,\"deals_per_round\":2,"                        \
    "\"duplicate\":true}]}"

/*
 * A duplicate Swiss (docs/rules/match-halls.md "Duplicate", docs/fairness.md "Duplicate deals"):
 * deal k of a round is dealt the same cards at both tables (the deck in the hand histories), and
 * every (round, deal) has its own cards; each deal's record names the round's seed. Each deal is
 * committed per card with its table's own nonce (the two tables' commitments differ), and each
 * player's replay of it opens his 27 cards, each at one of his seat's dealing positions, and
 * passes replay_check_cards() against the record's commitment; a share code's opens nothing.
 */
START_TEST(test_match_tables_duplicate_swiss_deals_the_same_cards)
{
    testenv_server_t a;
    game_start(&a);
    uint64_t id = match_create(GD8DUP);
    register_all(id, 4101, 8);
    if (!wait_finished(id, 60000))
        dump_logs(a.proc);
    ck_assert_msg(status_is(id, "finished"), "not finished");
    redisReply *r = redisCommand(R, "XRANGE {croupier:history:guandan}:stream - +");
    ck_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
    char decks[3][3][2][2 * 108 + 1]; /* [round][deal][table] */
    int seen[3][3] = {{0}};
    char commits[3][3][2][2 * DECK_COMMIT_LEN + 1];
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *f = r->element[i]->element[1];
        json_t *rec = NULL;
        for (size_t k = 0; k + 1 < f->elements; k += 2)
            if (strcmp(f->element[k]->str, "data") == 0)
                rec = json_loads(f->element[k + 1]->str, 0, NULL);
        json_t *mj = json_object_get(rec, "match");
        if (rec == NULL || (uint64_t)json_integer_value(json_object_get(mj, "id")) != id ||
            strcmp(json_string_value(json_object_get(rec, "outcome")), "completed") != 0) {
            json_decref(rec);
            continue;
        }
        int rd = (int)json_integer_value(json_object_get(mj, "round"));
        int dl = (int)json_integer_value(json_object_get(mj, "deal"));
        ck_assert(rd >= 1 && rd <= 2 && dl >= 1 && dl <= 2);
        ck_assert_ptr_nonnull(json_string_value(json_object_get(mj, "seed")));
        const char *deck = json_string_value(json_object_get(rec, "deck"));
        ck_assert(deck != NULL && strlen(deck) == 2 * 108);
        ck_assert_int_lt(seen[rd][dl], 2);
        /* Per card: the codes' leaves under the nonce give the commitment. */
        ck_assert_int_eq(json_integer_value(json_object_get(rec, "deck_scheme")), 2);
        uint8_t codes[DECK_MAX_CARDS], nonce[DECK_NONCE_LEN], commit[DECK_COMMIT_LEN],
            got[DECK_COMMIT_LEN];
        ck_assert_int_eq(
            deck_unhex(json_string_value(json_object_get(rec, "deck_codes")), codes, sizeof codes),
            108);
        ck_assert_int_eq(
            deck_unhex(json_string_value(json_object_get(rec, "deck_nonce")), nonce, sizeof nonce),
            DECK_NONCE_LEN);
        const char *chex = json_string_value(json_object_get(rec, "deck_commitment"));
        ck_assert_int_eq(deck_unhex(chex, commit, sizeof commit), DECK_COMMIT_LEN);
        deck_commitment_cards(codes, 108, nonce, got);
        ck_assert_mem_eq(got, commit, DECK_COMMIT_LEN);
        snprintf(commits[rd][dl][seen[rd][dl]], sizeof commits[0][0][0], "%s", chex);
        /* Each player's own check of his replay (replay_build() for him, as GetReplay). */
        size_t si;
        const json_t *seat;
        json_array_foreach(json_object_get(rec, "seats"), si, seat)
        {
            uint64_t player =
                strtoull(json_string_value(json_object_get(seat, "player")), NULL, 10);
            int me = (int)json_integer_value(json_object_get(seat, "seat"));
            char err[200] = "";
            Croupier__Replay *rp = replay_build(rec, player, err, sizeof err);
            ck_assert_msg(rp != NULL, "%s", err);
            ck_assert_uint_eq(rp->n_openings, 27);
            for (size_t o = 0; o < rp->n_openings; o++)
                ck_assert_int_eq((int)(rp->openings[o]->position % 4), me);
            ck_assert_msg(replay_check_cards(rp, commit, err, sizeof err) == 0, "%s", err);
            croupier__replay__free_unpacked(rp, NULL);
        }
        Croupier__Replay *rp = replay_build(rec, 0, NULL, 0); /* a share code's */
        ck_assert_ptr_nonnull(rp);
        ck_assert_uint_eq(rp->n_openings, 0);
        croupier__replay__free_unpacked(rp, NULL);
        snprintf(decks[rd][dl][seen[rd][dl]++], sizeof decks[0][0][0], "%s", deck);
        json_decref(rec);
    }
    freeReplyObject(r);
    for (int rd = 1; rd <= 2; rd++)
        for (int dl = 1; dl <= 2; dl++) {
            ck_assert_int_eq(seen[rd][dl], 2); /* both tables played it */
            ck_assert_str_eq(decks[rd][dl][0], decks[rd][dl][1]);
            ck_assert_str_ne(commits[rd][dl][0], commits[rd][dl][1]); /* each table's nonce */
        }
    ck_assert_str_ne(decks[1][1][0], decks[1][2][0]);
    ck_assert_str_ne(decks[1][1][0], decks[2][1][0]);
    testenv_stop_server(&a);
}
END_TEST

#define DDZ6                                                                                       \
    "{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":100,\"fee\":10,"                       \
    "\"min_entrants\":6,\"max_entrants\":6,\"stages\":["                                           \
    "{\"format\":\"fixed\",\"seats\":3,\"deals_per_round\":2}]}"

/*
 * A running match cancelled while its tables deal (docs/tournaments.md "Match halls: cancelling
 * a running match"): slow deals (the trustee moves every 300 ms); once both tables have dealt,
 * the operator cancels. The deals in play are voided at the server at its next renew (a voided
 * record each, nothing scored), the tables let go; every player still in gets his buy-in and an
 * equal share of the rest, paid once: wallets + fees as seeded.
 */
START_TEST(test_match_tables_cancel_voids_the_deals_in_play)
{
    testenv_server_t a;
    game_start_trustee(&a, "300");
    const uint64_t first = 4201;
    uint64_t id = match_create(DDZ6);
    register_all(id, first, 6);
    /* Both tables deal (their `where` written with their first deal). */
    long long end = ts_now_ms() + 20000;
    while (rnum("HLEN {croupier:tour:%" PRIu64 "}:where", id) < 2 && ts_now_ms() < end)
        ts_sleep_ms(50);
    ck_assert_int_eq(rnum("HLEN {croupier:tour:%" PRIu64 "}:where", id), 2);
    ts_sleep_ms(300);
    long long deals_before = log_count(id, "match_deal");
    redisReply *r = redisCommand(R,
                                 "XADD {croupier:tour:%" PRIu64 "}:in * op cancel req c1 reason "
                                 "maintenance",
                                 id);
    ck_assert(r != NULL && r->type == REDIS_REPLY_STRING);
    freeReplyObject(r);
    r = redisCommand(R, "BLPOP {croupier:tour:%" PRIu64 "}:reply:c1 10", id);
    ck_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
    ck_assert_msg(strstr(r->element[1]->str, "\"code\":\"OK\"") != NULL, "%s", r->element[1]->str);
    freeReplyObject(r);
    ck_assert(status_is(id, "cancelled"));
    /* The tables let go (their claims released) within a few renews. */
    end = ts_now_ms() + 5000;
    while (ts_now_ms() < end && (rnum("EXISTS {croupier:tour:%" PRIu64 "}:host:1", id) ||
                                 rnum("EXISTS {croupier:tour:%" PRIu64 "}:host:2", id)))
        ts_sleep_ms(50);
    if (rnum("EXISTS {croupier:tour:%" PRIu64 "}:host:1", id) ||
        rnum("EXISTS {croupier:tour:%" PRIu64 "}:host:2", id))
        dump_logs(a.proc);
    ck_assert_int_eq(rnum("EXISTS {croupier:tour:%" PRIu64 "}:host:1", id), 0);
    ck_assert_int_eq(rnum("EXISTS {croupier:tour:%" PRIu64 "}:host:2", id), 0);
    ck_assert_int_eq(log_count(id, "match_deal"), deals_before); /* nothing scored since */
    /* Voided records: a deal in play at each table when the cancel came (a deal that ended in
     * between was refused at its report, voided the same way). */
    redisReply *h = redisCommand(R, "XRANGE {croupier:history:doudizhu}:stream - +");
    ck_assert(h != NULL && h->type == REDIS_REPLY_ARRAY);
    int voided = 0;
    for (size_t i = 0; i < h->elements; i++) {
        const redisReply *f = h->element[i]->element[1];
        for (size_t k = 0; k + 1 < f->elements; k += 2) {
            if (strcmp(f->element[k]->str, "data") != 0)
                continue;
            json_t *rec = json_loads(f->element[k + 1]->str, 0, NULL);
            json_t *mj = json_object_get(rec, "match");
            const char *oc = json_string_value(json_object_get(rec, "outcome"));
            if ((uint64_t)json_integer_value(json_object_get(mj, "id")) == id && oc != NULL &&
                strcmp(oc, "voided") == 0)
                voided++;
            json_decref(rec);
        }
    }
    freeReplyObject(h);
    ck_assert_int_ge(voided, 2);
    /* Nobody is out after a round of two deals not played out: all six still in, each his
     * buy-in back (the pool is theirs alone), the fees the house's. */
    long long money = rnum("GET {croupier:money}:rake:tournament");
    ck_assert_int_eq(money, 60);
    for (int p = 0; p < 6; p++) {
        json_t *e = entry_of(id, first + (uint64_t)p);
        ck_assert_str_eq(json_string_value(json_object_get(e, "state")), "cancelled");
        ck_assert_int_eq(json_integer_value(json_object_get(e, "prize")), 100);
        json_decref(e);
        ck_assert_int_eq(wallet(first + (uint64_t)p), 1000 - 110 + 100);
        money += wallet(first + (uint64_t)p);
    }
    ck_assert_int_eq(money, 6000);
    ck_assert_int_eq(log_count(id, "cancelled"), 1);
    testenv_stop_server(&a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("match_tables");
    TCase *tc = tcase_create("match_tables");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_match_tables_ddz_through_a_drain_and_a_crash);
    tcase_add_test(tc, test_match_tables_guandan_swiss);
    tcase_add_test(tc, test_match_tables_duplicate_swiss_deals_the_same_cards);
    tcase_add_test(tc, test_match_tables_cancel_voids_the_deals_in_play);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
