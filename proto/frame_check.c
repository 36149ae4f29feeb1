/*
 * frame_check.c -- what a message must be once unpacked (steps 4 and 5 of docs/protocol.md
 * "What "valid" means"): the descriptor walk (every enum value defined, a required enum not
 * *_UNSPECIFIED, oneof cases, required pointers, card lists and opaque bytes; frame_walk_message),
 * then the rules of each message (rules_client, frame_rules_server, rules_rpc, the room rules), and
 * the public checks frame_check_client / _server / _rpc. Internal to the codec: frame_int.h has
 * the contract.
 *
 * Stateless: everything a check needs comes in its arguments (the limits, where the error goes,
 * a walk_ctx_t). frame.c calls frame_walk_message and check_any after an unpack and before a pack;
 * frame_wire.c calls frame_rules_server on a ServerMessage body decoded alone, and frame_bytes_kind
 * and frame_enum_zero_is_unspecified so that its vouch accepts exactly what the walk accepts.
 */
#include "frame_int.h"

/* ---- the descriptor walk: enums, oneofs, cards, pointers -------------------------------- */

/* True when the enum's zero value is a "not set" marker (FOO_UNSPECIFIED). */
bool frame_enum_zero_is_unspecified(const ProtobufCEnumDescriptor *ed)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(ed, 0);
    if (v == NULL)
        return false;
    size_t n = strlen(v->name);
    return n >= 11 && strcmp(v->name + n - 11, "UNSPECIFIED") == 0;
}

static int check_cards(const ProtobufCBinaryData *b, const path_node_t *at, const char *field,
                       frame_error_t *err)
{
    if (b->len > FRAME_MAX_CARDS)
        return frame_fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                             ".%s: %zu cards, at most %d", field, b->len, FRAME_MAX_CARDS);
    if (b->len > 0 && b->data == NULL)
        return frame_fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: NULL data", field);
    for (size_t i = 0; i < b->len; i++)
        if (!frame_card_valid(b->data[i]))
            return frame_fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                                 ".%s: byte %zu is not a card code (0x%02x)", field, i, b->data[i]);
    return 0;
}

/* True for the envelopes of table-kit games, whose bytes field is a game's message. */
static bool is_game_envelope(const ProtobufCMessageDescriptor *d)
{
    return d == &croupier__game_action__descriptor || d == &croupier__game_state__descriptor ||
           d == &croupier__game_event__descriptor;
}

/* The card-field convention of a game's own messages (frame.h): `cards` or `*_cards`. */
static bool is_card_field_name(const char *name)
{
    size_t n = strlen(name);
    return strcmp(name, "cards") == 0 || (n > 6 && strcmp(name + n - 6, "_cards") == 0);
}

/* In the protocol every bytes field is a card list but the envelopes' bodies and the
 * deck_commitment of Deal, Snapshot and Replay (a SHA-256, docs/fairness.md), a Replay's
 * deck_leaves and a ReplayCardOpening's nonce (the per-card commitment); in a game's own
 * messages (game true) the fields named by the convention are. d is the field's message. */
bytes_kind_t frame_bytes_kind(const ProtobufCMessageDescriptor *d,
                              const ProtobufCFieldDescriptor *f, bool game)
{
    if ((d == &croupier__deal__descriptor || d == &croupier__snapshot__descriptor ||
         d == &croupier__replay__descriptor) &&
        strcmp(f->name, "deck_commitment") == 0)
        return BYTES_OPAQUE;
    /* The per-card commitment's leaves and a card's nonce (docs/fairness.md). */
    if ((d == &croupier__replay__descriptor && strcmp(f->name, "deck_leaves") == 0) ||
        (d == &croupier__replay_card_opening__descriptor && strcmp(f->name, "nonce") == 0))
        return BYTES_OPAQUE;
    if (game)
        return is_card_field_name(f->name) ? BYTES_CARDS : BYTES_OPAQUE;
    return is_game_envelope(d) ? BYTES_GAME_BODY : BYTES_CARDS;
}

/* Checks a bytes field that is not a card list: data present, at most max bytes. */
static int check_opaque(const ProtobufCBinaryData *b, size_t max, const path_node_t *at,
                        const char *field, frame_error_t *err)
{
    if (b->len > max)
        return frame_fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                             ".%s: %zu bytes, at most %zu", field, b->len, max);
    if (b->len > 0 && b->data == NULL)
        return frame_fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: NULL data", field);
    return 0;
}

/* Checks one value of field f of a message of type d (element k of a repeated field, or the
 * single value). */
static int walk_value(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f,
                      const void *elems, size_t k, const path_node_t *at, unsigned depth,
                      const walk_ctx_t *w)
{
    frame_error_t *err = w->err;
    switch (f->type) {
    case PROTOBUF_C_TYPE_ENUM: {
        int v = ((const int *)elems)[k];
        if (protobuf_c_enum_descriptor_get_value(f->descriptor, v) == NULL)
            return frame_fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                                 ".%s: %d is not a %s value", f->name, v,
                                 ((const ProtobufCEnumDescriptor *)f->descriptor)->short_name);
        if (v == 0 && f->label == PROTOBUF_C_LABEL_REQUIRED &&
            frame_enum_zero_is_unspecified(f->descriptor))
            return frame_fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: unspecified",
                                 f->name);
        return 0;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = ((char *const *)elems)[k];
        if (s == NULL)
            return frame_fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: NULL string",
                                 f->name);
        if (w->strings_checked)
            return 0;
        size_t n = strlen(s);
        if (n > w->lim->max_string)
            return frame_fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                                 ".%s: string of %zu bytes, at most %zu", f->name, n,
                                 w->lim->max_string);
        if (!frame_utf8_valid((const uint8_t *)s, n))
            return frame_fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: not valid UTF-8",
                                 f->name);
        return 0;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        /* Card lists, but for the envelopes' bodies and a game's opaque fields (frame_bytes_kind).
         */
        const ProtobufCBinaryData *b = &((const ProtobufCBinaryData *)elems)[k];
        switch (frame_bytes_kind(d, f, w->game)) {
        case BYTES_GAME_BODY:
            return check_opaque(b, FRAME_GAME_BODY_MAX, at, f->name, err);
        case BYTES_OPAQUE:
            return check_opaque(b, w->lim->max_string, at, f->name, err);
        default:
            return check_cards(b, at, f->name, err);
        }
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *sub = ((ProtobufCMessage *const *)elems)[k];
        if (sub == NULL)
            return frame_fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ".%s: missing",
                                 f->name);
        path_node_t node = {at, f->name};
        return frame_walk_message(sub, &node, depth + 1, w);
    }
    default:
        return 0;
    }
}

/*
 * True when case `which` (not 0, not f's own id) names a field of the oneof that f belongs to
 * (the fields sharing f's case member). One lookup by number instead of a scan of every field.
 */
static bool oneof_case_known(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f,
                             uint32_t which)
{
    const ProtobufCFieldDescriptor *g = protobuf_c_message_descriptor_get_field(d, which);
    return g != NULL && (g->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
           g->quantifier_offset == f->quantifier_offset;
}

/*
 * Generic checks of a message, driven by its descriptor: every enum value is defined (and
 * required enums are not *_UNSPECIFIED), every oneof case names one of its fields, strings are
 * UTF-8 and within max_string, bytes fields hold card codes, message and string pointers that
 * must be there are. Works the same on unpacked and hand-built messages.
 */
int frame_walk_message(const ProtobufCMessage *m, const path_node_t *at, unsigned depth,
                       const walk_ctx_t *w)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    if (d == NULL || d->magic != PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC)
        return frame_fail_at(w->err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ": not a message");
    if (depth > FRAME_MAX_DEPTH)
        return frame_fail_at(w->err, CROUPIER__ERROR_CODE__BAD_REQUEST, at, ": nested too deep");
    const char *base = (const char *)m;
    /* The oneofs whose case was already found valid (a message of the protocol has at most
     * two), so the case is looked up once per oneof, not once per member. */
    unsigned oneof_ok[2] = {0, 0}, n_oneof_ok = 0;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const void *member = base + f->offset;
        const void *elems = member;
        size_t count = 1;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            count = *(const size_t *)(base + f->quantifier_offset);
            elems = *(void *const *)member;
            if (count > 0 && elems == NULL)
                return frame_fail_at(w->err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                                     ".%s: NULL array", f->name);
        } else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            uint32_t which = *(const uint32_t *)(base + f->quantifier_offset);
            if (which != f->id) {
                if (which == 0 || (n_oneof_ok > 0 && oneof_ok[0] == f->quantifier_offset) ||
                    (n_oneof_ok > 1 && oneof_ok[1] == f->quantifier_offset))
                    continue;
                if (!oneof_case_known(d, f, which))
                    return frame_fail_at(w->err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                                         ": oneof case %u is not a field", which);
                if (n_oneof_ok < 2)
                    oneof_ok[n_oneof_ok++] = f->quantifier_offset;
                continue;
            }
        } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL) {
            if (f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING) {
                const void *ptr = *(void *const *)member;
                if (ptr == NULL || ptr == f->default_value)
                    continue;
            } else if (!*(const protobuf_c_boolean *)(base + f->quantifier_offset)) {
                continue;
            }
        }
        for (size_t k = 0; k < count; k++) {
            int rc = walk_value(d, f, elems, k, at, depth, w);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/* ---- per-message rules ------------------------------------------------------------------ */

/*
 * The rules below name the field they refuse by a path given in two parts, path and sub,
 * printed one after the other ("RpcFrame.push" ".play.action"): nothing is formatted unless a
 * rule fails.
 */
static int check_game_name(const char *g, const char *path, const char *sub, frame_error_t *err)
{
    size_t n = strlen(g);
    if (n == 0 || n > 32)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s%s.game: 1..32 bytes", path,
                          sub);
    for (size_t i = 0; i < n; i++) {
        char c = g[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s%s.game: only a-z, 0-9, '_' and '-'", path, sub);
    }
    return 0;
}

static int check_join(const Croupier__Join *j, const char *path, const char *sub,
                      frame_error_t *err)
{
    int rc = check_game_name(j->game, path, sub, err);
    if (rc < 0)
        return rc;
    if (j->stake <= 0)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s%s.stake: must be > 0", path,
                          sub);
    return 0;
}

static int check_shedding(const Croupier__SheddingAction *a, const char *path, const char *sub,
                          frame_error_t *err)
{
    switch (a->move) {
    case CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY:
        if (!a->has_cards || a->cards.len == 0)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s%s.shedding.cards: PLAY needs at least one card", path, sub);
        if (a->has_bid)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s%s.shedding.bid: only with BID", path, sub);
        return 0;
    case CROUPIER__SHEDDING_MOVE__SHEDDING_PASS:
    case CROUPIER__SHEDDING_MOVE__SHEDDING_BID:
        if (a->has_cards)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s%s.shedding.cards: only with PLAY", path, sub);
        if ((a->move == CROUPIER__SHEDDING_MOVE__SHEDDING_BID) != (bool)a->has_bid)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s%s.shedding.bid: required with BID and only with BID", path, sub);
        return 0;
    default:
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s%s.shedding.move: unspecified",
                          path, sub);
    }
}

static int check_holdem(const Croupier__HoldemAction *a, const char *path, const char *sub,
                        frame_error_t *err)
{
    bool sized = a->move == CROUPIER__HOLDEM_MOVE__HOLDEM_BET ||
                 a->move == CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE;
    if (sized && (!a->has_amount || a->amount <= 0))
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "%s%s.holdem.amount: required for BET/RAISE and > 0", path, sub);
    if (!sized && a->has_amount)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "%s%s.holdem.amount: only with BET/RAISE", path, sub);
    return 0;
}

static int check_blackjack(const Croupier__BlackjackAction *a, const char *path, const char *sub,
                           frame_error_t *err)
{
    bool bet = a->move == CROUPIER__BLACKJACK_MOVE__BJ_BET;
    bool ins = a->move == CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE;
    if (bet && (!a->has_amount || a->amount <= 0))
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "%s%s.blackjack.amount: required for BET and > 0", path, sub);
    if (!bet && a->has_amount)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "%s%s.blackjack.amount: only with BET", path, sub);
    if (ins != (bool)a->has_insure)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "%s%s.blackjack.insure: required with INSURANCE and only with it", path,
                          sub);
    if (a->has_hand && a->hand >= 8)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s%s.blackjack.hand: at most 7",
                          path, sub);
    return 0;
}

static int check_action(const Croupier__Action *a, const char *path, const char *sub,
                        frame_error_t *err)
{
    switch (a->kind_case) {
    case CROUPIER__ACTION__KIND_SHEDDING:
        return check_shedding(a->shedding, path, sub, err);
    case CROUPIER__ACTION__KIND_HOLDEM:
        return check_holdem(a->holdem, path, sub, err);
    case CROUPIER__ACTION__KIND_BLACKJACK:
        return check_blackjack(a->blackjack, path, sub, err);
    case CROUPIER__ACTION__KIND_GAME:
        return 0; /* the game's own body: capped by the walk, decoded by the game */
    default:
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s%s: no move", path, sub);
    }
}

static int check_error_msg(const Croupier__Error *e, const char *path, const char *sub,
                           frame_error_t *err)
{
    if (e->code == CROUPIER__ERROR_CODE__OK)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "%s%s.code: an error cannot be OK", path, sub);
    return 0;
}

/* ListTables: the filters it names follow the Join rules (a game name, a stake > 0). */
static int check_list_tables(const Croupier__ListTables *l, frame_error_t *err)
{
    if (l->game != NULL) {
        int rc = check_game_name(l->game, "ClientMessage.list_tables", "", err);
        if (rc < 0)
            return rc;
    }
    if (l->has_stake && l->stake <= 0)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "ClientMessage.list_tables.stake: must be > 0");
    return 0;
}

/* TableList: every ad names its server, a valid game, a stake > 0 and 1..seats free seats. */
static int check_table_list(const Croupier__TableList *tl, const char *path, frame_error_t *err)
{
    for (size_t i = 0; i < tl->n_tables; i++) {
        const Croupier__TableAd *t = tl->tables[i];
        if (t->server_id[0] == '\0')
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s.table_list.tables[%zu].server_id: empty", path, i);
        if (check_game_name(t->game, path, "", NULL) < 0)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s.table_list.tables[%zu].game: 1..32 of a-z, 0-9, '_' and '-'",
                              path, i);
        if (t->stake <= 0)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s.table_list.tables[%zu].stake: must be > 0", path, i);
        if (t->seats_free == 0 || t->seats_free > t->seats)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s.table_list.tables[%zu].seats_free: must be 1..seats", path, i);
    }
    return 0;
}

/* ListTournaments: a limit, when given, is 1..FRAME_TOUR_LIST_MAX. (A tournament id of 0 in the
 * other tournament requests is a user's input: the gateway answers it BAD_REQUEST.) */
static int check_list_tournaments(const Croupier__ListTournaments *l, frame_error_t *err)
{
    if (l->has_limit && (l->limit == 0 || l->limit > FRAME_TOUR_LIST_MAX))
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "ClientMessage.list_tournaments.limit: 1..%d", FRAME_TOUR_LIST_MAX);
    return 0;
}

/* TournamentList: every tournament has an id; at most FRAME_TOUR_LIST_MAX of them. */
static int check_tournament_list(const Croupier__TournamentList *tl, const char *path,
                                 frame_error_t *err)
{
    if (tl->n_tournaments > FRAME_TOUR_LIST_MAX)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "%s.tournament_list.tournaments: at most %d", path, FRAME_TOUR_LIST_MAX);
    for (size_t i = 0; i < tl->n_tournaments; i++)
        if (tl->tournaments[i]->id == 0)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s.tournament_list.tournaments[%zu].id: must be non-zero", path, i);
    return 0;
}

/* TournamentInfo: an id; payout rows of places 1 <= from <= to and amounts >= 0; item prizes of
 * places >= 1 with an item of 1..64 bytes (docs/tournaments.md "Items"). */
static int check_tournament_info(const Croupier__TournamentInfo *t, const char *path,
                                 frame_error_t *err)
{
    if (t->id == 0)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "%s.tournament.id: must be non-zero", path);
    for (size_t i = 0; i < t->n_payouts; i++) {
        const Croupier__TournamentPayout *p = t->payouts[i];
        if (p->place_from == 0 || p->place_to < p->place_from || p->amount < 0)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s.tournament.payouts[%zu]: places 1 <= from <= to, amount >= 0",
                              path, i);
    }
    for (size_t i = 0; i < t->n_item_prizes; i++) {
        const Croupier__TournamentItemPrize *p = t->item_prizes[i];
        size_t n = strlen(p->item);
        if (p->place == 0 || n == 0 || n > 64)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s.tournament.item_prizes[%zu]: place >= 1, item 1..64 bytes", path,
                              i);
    }
    return 0;
}

/* A room code: 6 digits (docs/protocol.md "Private rooms"). */
static int check_room_code(const char *code, const char *path, frame_error_t *err)
{
    size_t n = strlen(code);
    bool ok = n == 6;
    for (size_t i = 0; ok && i < n; i++)
        ok = code[i] >= '0' && code[i] <= '9';
    if (!ok)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "%s.code: a room code is 6 digits", path);
    return 0;
}

/* RoomRules: 1..64 deals, 2..9 seats when given, at most 8 options of 1..32 bytes. */
int frame_check_room_rules(const Croupier__RoomRules *r, const char *path, frame_error_t *err)
{
    if (r->deals < 1 || r->deals > 64)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s.deals: 1..64", path);
    if (r->has_seats && (r->seats < 2 || r->seats > 9))
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s.seats: 2..9", path);
    if (r->n_rule_options > 8)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s.rule_options: at most 8",
                          path);
    for (size_t i = 0; i < r->n_rule_options; i++) {
        const char *o = r->rule_options[i];
        size_t n = strlen(o);
        bool ok = n > 0 && n <= 32;
        for (size_t k = 0; ok && k < n; k++)
            ok = (o[k] >= 'a' && o[k] <= 'z') || (o[k] >= '0' && o[k] <= '9') || o[k] == '-' ||
                 o[k] == ':';
        if (!ok)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s.rule_options[%zu]: 1..32 of a-z, 0-9, '-' and ':'", path, i);
    }
    return 0;
}

/* Rules for ClientMessage beyond the generic walk. */
static int rules_client(const Croupier__ClientMessage *m, frame_error_t *err)
{
    if (m->request_id == 0)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "ClientMessage.request_id: must be non-zero");
    switch (m->body_case) {
    case CROUPIER__CLIENT_MESSAGE__BODY_LOGIN:
        if (m->login->token[0] == '\0')
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "ClientMessage.login.token: empty");
        return 0;
    case CROUPIER__CLIENT_MESSAGE__BODY_JOIN:
        return check_join(m->join, "ClientMessage.join", "", err);
    case CROUPIER__CLIENT_MESSAGE__BODY_ACTION:
        return check_action(m->action, "ClientMessage.action", "", err);
    case CROUPIER__CLIENT_MESSAGE__BODY_LIST_TABLES:
        return check_list_tables(m->list_tables, err);
    case CROUPIER__CLIENT_MESSAGE__BODY_CREATE_ROOM:
        /* Its rules and the codes below are a user's input: the gateway answers them
         * BAD_REQUEST (frame_check_room_rules) instead of closing the connection. */
        return check_join(
            &(Croupier__Join){.game = m->create_room->game, .stake = m->create_room->stake},
            "ClientMessage.create_room", "", err);
    case CROUPIER__CLIENT_MESSAGE__BODY_LIST_TOURNAMENTS:
        return check_list_tournaments(m->list_tournaments, err);
    case CROUPIER__CLIENT_MESSAGE__BODY_GET_TOURNAMENT:
    case CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT:
    case CROUPIER__CLIENT_MESSAGE__BODY_UNREGISTER_TOURNAMENT:
    case CROUPIER__CLIENT_MESSAGE__BODY_TAKE_TOURNAMENT_SEAT:
    case CROUPIER__CLIENT_MESSAGE__BODY_JOIN_ROOM:
    case CROUPIER__CLIENT_MESSAGE__BODY_GET_ROOM:
    /* A replay's ids and codes are a user's input too: the gateway answers them BAD_REQUEST
     * (gateway/gate_replay.c) and keeps the connection. */
    case CROUPIER__CLIENT_MESSAGE__BODY_GET_REPLAY:
    case CROUPIER__CLIENT_MESSAGE__BODY_SHARE_REPLAY:
    /* A Watch names a table or a player, one of them: a user's input, answered BAD_REQUEST by
     * the gateway (gateway/gate_watch.c), the connection kept. */
    case CROUPIER__CLIENT_MESSAGE__BODY_WATCH:
    case CROUPIER__CLIENT_MESSAGE__BODY_UNWATCH:
    case CROUPIER__CLIENT_MESSAGE__BODY_LEAVE:
    case CROUPIER__CLIENT_MESSAGE__BODY_RESUME:
    case CROUPIER__CLIENT_MESSAGE__BODY_PING:
        return 0;
    default:
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "ClientMessage: no body (or one this version does not know)");
    }
}

/* Rules for ServerMessage beyond the generic walk. */
int frame_rules_server(const Croupier__ServerMessage *m, const char *path, frame_error_t *err)
{
    switch (m->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_RESULT:
        if (m->result->error != NULL)
            return check_error_msg(m->result->error, path, ".result.error", err);
        return 0;
    case CROUPIER__SERVER_MESSAGE__BODY_ERROR:
        return check_error_msg(m->error, path, ".error", err);
    case CROUPIER__SERVER_MESSAGE__BODY_PLAY:
        return check_action(m->play->action, path, ".play.action", err);
    case CROUPIER__SERVER_MESSAGE__BODY_JOINED:
        return check_join(&(Croupier__Join){.game = m->joined->game, .stake = m->joined->stake},
                          path, ".joined", err);
    case CROUPIER__SERVER_MESSAGE__BODY_MOVED:
        return check_join(
            &(Croupier__Join){.game = m->moved->to->game, .stake = m->moved->to->stake}, path,
            ".moved.to", err);
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END: {
        const Croupier__RoundEnd *r = m->round_end;
        bool voided = r->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED;
        bool has_reason = r->has_void_reason && r->void_reason != CROUPIER__VOID_REASON__VOID_NONE;
        if (voided != has_reason)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s.round_end.void_reason: required when voided, only then", path);
        if (r->round_id[0] == '\0')
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s.round_end.round_id: empty", path);
        if (r->has_rake && r->rake < 0)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s.round_end.rake: negative",
                              path);
        for (size_t i = 0; i < r->n_transfers; i++) {
            const Croupier__Transfer *x = r->transfers[i];
            if (x->amount <= 0 || (!x->has_from_seat && !x->has_to_seat) ||
                (x->has_from_seat && x->has_to_seat && x->from_seat == x->to_seat))
                return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                  "%s.round_end.transfers[%zu]: amount not > 0, or from and to "
                                  "the same",
                                  path, i);
        }
        return 0;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT: {
        const Croupier__Snapshot *sn = m->snapshot;
        static const Croupier__Snapshot__StateCase want[] = {
            [CROUPIER__ENGINE__ENGINE_TRADITIONAL] = CROUPIER__SNAPSHOT__STATE_SHEDDING,
            [CROUPIER__ENGINE__ENGINE_HOLDEM] = CROUPIER__SNAPSHOT__STATE_HOLDEM,
            [CROUPIER__ENGINE__ENGINE_PERSISTENT] = CROUPIER__SNAPSHOT__STATE_BLACKJACK,
            [CROUPIER__ENGINE__ENGINE_GAME] = CROUPIER__SNAPSHOT__STATE_GAME_STATE,
        };
        if (sn->state_case != CROUPIER__SNAPSHOT__STATE__NOT_SET &&
            (sn->engine < 0 || (size_t)sn->engine >= sizeof want / sizeof want[0] ||
             want[sn->engine] != sn->state_case))
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s.snapshot: state does not belong to its engine", path);
        return check_join(&(Croupier__Join){.game = sn->game, .stake = sn->stake}, path,
                          ".snapshot", err);
    }
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_LIST:
        return check_table_list(m->table_list, path, err);
    case CROUPIER__SERVER_MESSAGE__BODY_ROOM:
        if (m->room->state == CROUPIER__ROOM_STATE__ROOM_STATE_UNSPECIFIED)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s.room.state: unspecified",
                              path);
        return 0;
    case CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT_LIST:
        return check_tournament_list(m->tournament_list, path, err);
    case CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT:
        return check_tournament_info(m->tournament, path, err);
    case CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT_EVENT:
        if (m->tournament_event->tournament == 0)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "%s.tournament_event.tournament: must be non-zero", path);
        return 0;
    case CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT: /* body capped by the walk */
    case CROUPIER__SERVER_MESSAGE__BODY_REPLAY:     /* cards checked by the walk */
    case CROUPIER__SERVER_MESSAGE__BODY_REPLAY_SHARED:
    case CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT:
    case CROUPIER__SERVER_MESSAGE__BODY_WATCH_ENDED:
    case CROUPIER__SERVER_MESSAGE__BODY_DEAL:
    case CROUPIER__SERVER_MESSAGE__BODY_TURN:
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING:
    case CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY:
    case CROUPIER__SERVER_MESSAGE__BODY_PONG:
        return 0;
    default:
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "%s: no body (or one this version does not know)", path);
    }
}

/* Rules for RpcFrame beyond the generic walk. */
static int rules_rpc(const Croupier__RpcFrame *m, frame_error_t *err)
{
    bool request = false, player = false, player_request = false;
    if (m->room != NULL && m->body_case != CROUPIER__RPC_FRAME__BODY_JOIN)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "RpcFrame.room: only with a Join");
    if (m->n_push_to > 0) {
        if (m->body_case != CROUPIER__RPC_FRAME__BODY_PUSH)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "RpcFrame.push_to: only with a push");
        if (frame_push_to_check(m->push_to, m->n_push_to, m->has_player_id ? m->player_id : 0) != 0)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "RpcFrame.push_to: at most %d players, none 0, none twice, none "
                              "player_id",
                              FRAME_PUSH_TO_MAX);
    }
    switch (m->body_case) {
    case CROUPIER__RPC_FRAME__BODY_HELLO:
        request = true;
        if (m->hello->version == 0 || m->hello->gate_id[0] == '\0')
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "RpcFrame.hello: version and gate_id required");
        break;
    case CROUPIER__RPC_FRAME__BODY_HELLO_ACK:
        if (m->hello_ack->version == 0 || m->hello_ack->server_id[0] == '\0')
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "RpcFrame.hello_ack: version and server_id required");
        break;
    case CROUPIER__RPC_FRAME__BODY_PING:
        request = true;
        break;
    case CROUPIER__RPC_FRAME__BODY_PONG:
        break;
    case CROUPIER__RPC_FRAME__BODY_JOIN: {
        request = player = player_request = true;
        int rc = check_join(m->join, "RpcFrame.join", "", err);
        if (rc < 0)
            return rc;
        if (m->room != NULL) {
            if ((m->room->code != NULL) == (m->room->create != NULL))
                return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                  "RpcFrame.room: a code or rules, one of them");
            rc = m->room->code != NULL
                     ? check_room_code(m->room->code, "RpcFrame.room", err)
                     : frame_check_room_rules(m->room->create, "RpcFrame.room.create", err);
            if (rc < 0)
                return rc;
        }
        break;
    }
    case CROUPIER__RPC_FRAME__BODY_ACTION: {
        request = player = player_request = true;
        int rc = check_action(m->action, "RpcFrame.action", "", err);
        if (rc < 0)
            return rc;
        break;
    }
    case CROUPIER__RPC_FRAME__BODY_LEAVE:
    case CROUPIER__RPC_FRAME__BODY_RESUME:
        request = player = player_request = true;
        break;
    case CROUPIER__RPC_FRAME__BODY_ADOPT: {
        request = player = player_request = true;
        const Croupier__Adopt *a = m->adopt;
        if (a->offer_id[0] == '\0' || strlen(a->offer_id) > 160)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "RpcFrame.adopt.offer_id: 1..160 characters");
        int rc =
            check_join(&(Croupier__Join){.engine = a->engine, .game = a->game, .stake = a->stake},
                       "RpcFrame.adopt", "", err);
        if (rc < 0)
            return rc;
        break;
    }
    case CROUPIER__RPC_FRAME__BODY_REPLY: {
        const Croupier__Reply *r = m->reply;
        if (m->request_id == 0)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "RpcFrame.request_id: a reply names its request");
        if (r->code == CROUPIER__ERROR_CODE__OK && r->error != NULL)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "RpcFrame.reply.error: present with code OK");
        if (r->error != NULL && r->error->code != r->code)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "RpcFrame.reply.error.code: differs from reply.code");
        if (r->payload != NULL)
            return frame_rules_server(r->payload, "RpcFrame.reply.payload", err);
        break;
    }
    case CROUPIER__RPC_FRAME__BODY_PUSH: {
        player = true;
        int rc = frame_rules_server(m->push, "RpcFrame.push", err);
        if (rc < 0)
            return rc;
        break;
    }
    case CROUPIER__RPC_FRAME__BODY_MOVED: {
        player = true;
        int rc =
            check_join(&(Croupier__Join){.game = m->moved->to->game, .stake = m->moved->to->stake},
                       "RpcFrame.moved.to", "", err);
        if (rc < 0)
            return rc;
        break;
    }
    case CROUPIER__RPC_FRAME__BODY_PLAYER_GONE:
        player = true;
        break;
    case CROUPIER__RPC_FRAME__BODY_DESK_CLOSING:
        break;
    case CROUPIER__RPC_FRAME__BODY_WATCH:
        /* A new spectator's request names him (a reply follows); a count change does not. */
        if (m->request_id != 0) {
            player = true;
            if (!m->has_deadline_unix_ms)
                return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                  "RpcFrame.watch: a request needs deadline_unix_ms");
            if (m->watch->spectators == 0)
                return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                  "RpcFrame.watch.spectators: a request counts its spectator");
        }
        break;
    case CROUPIER__RPC_FRAME__BODY_WATCH_PUSH: {
        if (m->request_id != 0)
            return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                              "RpcFrame.watch_push: one-way (request_id 0)");
        int rc = frame_rules_server(m->watch_push->msg, "RpcFrame.watch_push.msg", err);
        if (rc < 0)
            return rc;
        break;
    }
    default:
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "RpcFrame: no body (or one this version does not know)");
    }
    if (request && m->request_id == 0)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "RpcFrame.request_id: a request needs a non-zero id");
    if (player && (!m->has_player_id || m->player_id == 0))
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "RpcFrame.player_id: required");
    if (player_request && (!m->has_session_id || !m->has_deadline_unix_ms))
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "RpcFrame: a player request needs session_id and deadline_unix_ms");
    return 0;
}

/*
 * Generic walk plus the rules of the message's own type (found by its descriptor).
 * strings_checked: m was just unpacked from bytes that passed the wire pass (its strings are
 * known good). Returns 0 or -EINVAL with err filled in.
 */
int frame_check_any(const ProtobufCMessage *m, const frame_limits_t *lim, frame_error_t *err,
                    bool strings_checked)
{
    if (m == NULL)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "no message");
    path_node_t root = {NULL, m->descriptor->short_name};
    walk_ctx_t w = {lim, err, strings_checked, false};
    int rc = frame_walk_message(m, &root, 0, &w);
    if (rc < 0)
        return rc;
    if (m->descriptor == &croupier__client_message__descriptor)
        return rules_client((const Croupier__ClientMessage *)m, err);
    if (m->descriptor == &croupier__server_message__descriptor)
        return frame_rules_server((const Croupier__ServerMessage *)m, "ServerMessage", err);
    if (m->descriptor == &croupier__rpc_frame__descriptor)
        return rules_rpc((const Croupier__RpcFrame *)m, err);
    return 0;
}

int frame_check_client(const Croupier__ClientMessage *m, const frame_limits_t *lim,
                       frame_error_t *err)
{
    frame_error_reset(err);
    return frame_check_any(m != NULL ? &m->base : NULL, frame_limits_or_default(lim), err, false);
}

int frame_check_server(const Croupier__ServerMessage *m, const frame_limits_t *lim,
                       frame_error_t *err)
{
    frame_error_reset(err);
    return frame_check_any(m != NULL ? &m->base : NULL, frame_limits_or_default(lim), err, false);
}

int frame_check_rpc(const Croupier__RpcFrame *m, const frame_limits_t *lim, frame_error_t *err)
{
    frame_error_reset(err);
    return frame_check_any(m != NULL ? &m->base : NULL, frame_limits_or_default(lim), err, false);
}
