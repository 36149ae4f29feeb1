/*
 * match -- the stages of a match hall (比赛场) for the shedding games: the state every format
 * shares (players, tables, elimination events), the deal results of Dou Dizhu, Guandan and Run
 * Fast, the carry-over of scores between stages, the standings (places, ties) and the prizes.
 * The rules are docs/rules/match-halls.md; the formats are match_rising.h (打立出局),
 * match_fixed.h (定局积分) and match_swiss.h (Swiss); match_json.h saves and loads a stage.
 *
 * Pure and deterministic like the rest of tournament/: no I/O, no clock (the caller passes the
 * stage time in milliseconds), no randomness of its own (the caller passes a tour_rng_fn, for
 * example tour_rng_splitmix64 with a seed it records). A stage is a plain struct the caller
 * owns (match_stage_create / match_stage_destroy); its arrays are owned by the stage.
 *
 * Players are addressed by index into st->players (sorted by id at creation; match_stage_find
 * maps an id to its index), tables by their number (1..st->ntables, reused once a table is
 * free; st->tables[number - 1]). Every function returns 0 or a negative errno: -EINVAL for bad
 * input (nothing changed), -ESTALE for a report about a deal or a table that is not in play
 * (a repeated or late report; nothing changed), -ENOSPC when an output array is too small.
 */
#ifndef CROUPIER_MATCH_H
#define CROUPIER_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tour_seating.h" /* tour_rng_fn, tour_rng_splitmix64, tour_rng_below */

#define MATCH_MIN_SEATS 2
#define MATCH_MAX_SEATS 4
#define MATCH_MAX_PLAYERS 1000000
/* Any score, base or line is kept within +-MATCH_MAX_SCORE: sums of many stay in int64_t. */
#define MATCH_MAX_SCORE (INT64_C(1) << 40)
#define MATCH_MAX_ROUNDS 64
#define MATCH_MAX_DEALS 1000
/* A deal result (stake units) is within +-MATCH_MAX_RESULT. */
#define MATCH_MAX_RESULT 1000000
#define MATCH_NONE UINT32_MAX

typedef enum { MATCH_RISING = 1, MATCH_FIXED = 2, MATCH_SWISS = 3 } match_format_t;

typedef enum { MATCH_WAITING = 0, MATCH_PLAYING = 1, MATCH_OUT = 2 } match_pstate_t;

/* A stage's settings (docs/rules/match-halls.md, one table per format). Fields a format does
 * not use are ignored (and saved as they are). match_stage_config_default() fills the
 * defaults of a format; match_stage_config_check() validates. */
typedef struct {
    match_format_t format;
    uint32_t seats;           /* MATCH_MIN_SEATS..MATCH_MAX_SEATS; 4 = Guandan's partnerships */
    int64_t start_score;      /* everyone's score when this is the match's first stage */
    bool teams;               /* seats 0 + 2 against 1 + 3 (needs 4 seats) */
    int64_t base_score;       /* 1..MATCH_MAX_SCORE: b0 (rising) or every deal's base */
    uint32_t growth_pct;      /* rising: g, 0..1000 */
    int64_t growth_ms;        /* rising: T, 1..2^40 */
    uint32_t out_pct;         /* rising: p, 0..100000 */
    uint32_t advance;         /* rising: N >= seats (required); Swiss: 0 = last stage */
    uint32_t deals_per_round; /* fixed, Swiss: 1..MATCH_MAX_DEALS */
    uint32_t seconds_pct;     /* fixed: 0..100 */
    uint32_t rounds;          /* Swiss: 1..MATCH_MAX_ROUNDS */
    int32_t mp_win, mp_draw, mp_loss, mp_absent, mp_bye; /* Swiss: 0..100 each */
    bool duplicate;                                      /* Swiss */
    bool absent_out;              /* absent at a stage end with players going on: out */
    uint32_t carry_sqrt_permille; /* into the next stage: 0..1000000 */
    uint32_t carry_neg_permille;  /* into the next stage: 0..1000000 */
} match_stage_config_t;

typedef struct {
    uint64_t id;         /* > 0, unique in the stage */
    int64_t score;       /* the stage score */
    int64_t prev_score;  /* the score before his last deal (the rising cut's tie-break) */
    int64_t round_score; /* fixed, Swiss: the score of the current round */
    uint64_t draw;       /* the seeded draw: lower first; unique in the stage */
    match_pstate_t state;
    bool absent;          /* set by the director (match_stage_set_absent) */
    uint32_t table;       /* table number while PLAYING, else 0 */
    uint32_t seat;        /* seat while PLAYING */
    uint64_t wait_since;  /* rising: the moment he began waiting (a counter, lower = earlier) */
    uint32_t deals;       /* deals he finished in this stage */
    int32_t mp;           /* Swiss: match points */
    uint32_t byes;        /* Swiss: byes had */
    uint32_t out_event;   /* when OUT: the elimination event (1, 2, ...; later = better) */
    bool round_absent;    /* Swiss: reported absent for the current round (mp_absent) */
    uint32_t round_place; /* fixed: his place at his table once its round is done, else 0 */
} match_player_t;

typedef struct {
    bool active;                    /* seated (a deal or a round in play) */
    uint64_t deal;                  /* rising: the id of the deal in play (unique in the stage) */
    int64_t base;                   /* the base score of the deal in play */
    uint32_t deals_done;            /* fixed, Swiss: deals finished in this round */
    uint32_t seat[MATCH_MAX_SEATS]; /* player indices */
} match_table_t;

typedef struct {
    match_stage_config_t cfg;
    uint32_t n;
    match_player_t *players; /* n, sorted by id */
    uint32_t ntables;        /* tables allocated: every table number 1..ntables */
    match_table_t *tables;
    uint32_t nqueue;         /* rising: the waiting players in waiting order */
    uint32_t *queue;         /* capacity n */
    uint64_t next_deal;      /* rising: the next deal id (1, 2, ...) */
    uint64_t moments;        /* rising: deal ends and pairings so far (wait_since values) */
    uint32_t remaining;      /* players not out */
    uint32_t playing_tables; /* active tables */
    uint32_t events;         /* elimination events so far */
    uint32_t round;          /* fixed, Swiss: the round seated or played last (0: none yet) */
    bool finishing;          /* rising: no table is formed any more */
    bool over;               /* the stage is over (standings final) */
    uint64_t round_seed;     /* Swiss duplicate: the current round's deal seed */
    /* Swiss: hist[r * n + i] = table number * MATCH_MAX_SEATS + seat of player i in round
     * r + 1, or MATCH_NONE for a bye. Rounds 1..round. */
    uint32_t *hist;
    uint32_t _table_hint; /* where to look for a free table first (not saved) */
} match_stage_t;

match_stage_config_t match_stage_config_default(match_format_t format, uint32_t seats);

/* 0 or -EINVAL with a sentence in err (may be NULL) naming the bad setting. */
int match_stage_config_check(const match_stage_config_t *c, char *err, size_t errlen);

/*
 * A new stage of n players (ids > 0, distinct; scores within +-MATCH_MAX_SCORE: the carried
 * scores, or NULL for cfg->start_score each: the match's first stage), everyone WAITING, each
 * with a draw number from rng (distinct). The players are sorted by id. Returns 0 and *out
 * (match_stage_destroy), or -EINVAL (bad config, n == 0 or above MATCH_MAX_PLAYERS, a bad id
 * or score; a fixed or Swiss stage of fewer than seats players, a fixed stage whose n is not a
 * multiple of seats; a rising stage with n <= advance is accepted: it ends at its first
 * pairing, everyone going on).
 */
int match_stage_create(const match_stage_config_t *cfg, const uint64_t *ids, const int64_t *scores,
                       uint32_t n, tour_rng_fn rng, void *rng_arg, match_stage_t **out);
void match_stage_destroy(match_stage_t *st); /* NULL is a no-op */

/*
 * The next stage of a match: the players of `done` (a stage over) who go on, each with his
 * carried score (match_carry with done's carry settings), in a new stage of cfg. Returns 0 and
 * *out, or -EINVAL (done not over, nobody going on, or what match_stage_create refuses: a
 * fixed stage needs whole tables).
 */
int match_stage_next(const match_stage_t *done, const match_stage_config_t *cfg, tour_rng_fn rng,
                     void *rng_arg, match_stage_t **out);

/* The index of player id, or -1. */
int64_t match_stage_find(const match_stage_t *st, uint64_t id);

/* The director's report that a player left (absent) or came back. -EINVAL for an unknown id. */
int match_stage_set_absent(match_stage_t *st, uint64_t id, bool absent);

/* Player index i goes out in event ev (used by the formats). */
void match_stage_put_out(match_stage_t *st, uint32_t i, uint32_t ev);

/*
 * Deal results (docs/rules/match-halls.md "Deal results"), in stake units, per seat.
 * Dou Dizhu: units = bid x 2 per bomb or rocket x 2 for a spring (>= 1); landlord seat 0..2.
 * Guandan: order[0..3] = seats in finishing order (a permutation of 0..3; seats 0 + 2 against
 * 1 + 3). Return 0 or -EINVAL.
 */
int match_result_doudizhu(uint32_t landlord, bool landlord_won, int64_t units, int64_t out[3]);
int match_result_guandan(const uint32_t order[4], int64_t out[4]);

/* Checks a table's deal results: n values within +-MATCH_MAX_RESULT summing to 0, and with
 * teams, partners equal. Returns 0 or -EINVAL. */
int match_result_check(const int64_t *res, uint32_t n, bool teams);

/*
 * The carried score of a stage score s (docs/rules/match-halls.md "Carry-over"): s > 0 ->
 * floor(sqrt(s) x sqrt_permille / 1000), exactly; s < 0 -> s x neg_permille / 1000 rounded
 * toward 0; 0 -> 0. The result is clamped to +-MATCH_MAX_SCORE.
 */
int64_t match_carry(int64_t s, uint32_t sqrt_permille, uint32_t neg_permille);

/* One line of the standings. */
typedef struct {
    uint64_t player;
    uint32_t place; /* 1-based; tied players share the best of their places */
    int64_t score;
    uint64_t draw;
    bool out;
} match_standing_t;

/*
 * The stage's standings, best first (docs/rules/match-halls.md "Ties at the cuts and places"):
 * the players not out in the format's ranking (rising: higher score, then the draw; fixed:
 * score, round score, draw; Swiss: match_swiss_rank), then the players out: later events first,
 * inside an event the higher score first; equal scores in one event share a place. Places start at
 * first_place. With only_out, only the players out are listed (for the stages before the last).
 * Returns 0 with *nout, or -ENOSPC.
 */
int match_stage_standings(const match_stage_t *st, uint32_t first_place, bool only_out,
                          match_standing_t *out, size_t cap, size_t *nout);

/*
 * The standings of a whole match: stages[0..nstages-1] in the order played, the last one over
 * (or in play). Its standings come first from place 1; then the players out in each earlier
 * stage, the later stage first (they went further), with their places following on. Returns 0
 * with *nout, -ENOSPC, or -EINVAL (nstages 0).
 */
int match_standings(const match_stage_t *const *stages, size_t nstages, match_standing_t *out,
                    size_t cap, size_t *nout);

/* An award of a place's prize. */
typedef struct {
    uint64_t player;
    uint32_t place;
    int64_t amount;
} match_award_t;

/*
 * Prizes by place: prizes[k] is place k + 1's (nplaces of them, non-negative). Tied players
 * (equal place) split the prizes of the places they occupy equally, the odd chips one each in
 * ascending draw number (tour_payout_busts). out[i] is standings[i]'s. Returns 0, -EINVAL
 * (places not 1.. in order, a negative prize) or -EOVERFLOW.
 */
int match_prizes(const int64_t *prizes, size_t nplaces, const match_standing_t *standings, size_t n,
                 match_award_t *out);

/* A table formed by a pairing or a round's seating: the director starts its deal(s). */
typedef struct {
    uint32_t table; /* table number */
    uint64_t deal;  /* rising: the deal id to report; fixed, Swiss: 0 (deals are numbered
                     * 1..deals_per_round in the round) */
    int64_t base;   /* the base score of the deal(s) */
    uint64_t player[MATCH_MAX_SEATS]; /* by seat */
} match_new_table_t;

/*
 * Fixed and Swiss rounds: deal number `deal` (1..deals_per_round, the next one of the table)
 * of `table` ended with res[seat]. The scores and round scores move by res x base; after the
 * round's last deal the table is done (table_done() of the format runs). Returns 0, -ESTALE (not
 * the table's next deal: a repeated report), -EINVAL (bad results). Used by match_fixed and
 * match_swiss; *table_done says whether this was the table's last deal.
 */
int match_stage_round_deal(match_stage_t *st, uint32_t table, uint32_t deal, const int64_t *res,
                           bool *table_done);

/* The ranking comparator shared by the formats' sorts: pointer to the stage for qsort_r. */
int match_cmp_score_draw(const void *a, const void *b, void *st);

#endif
