/*
 * frame.c -- the codec's core (frame.h is the contract, frame_int.h what its files share):
 * limits and errors (fail, frame_fail_at and the path of a check), card and UTF-8 checks, the
 * budget allocator, the wire pass over strings before unpacking, encoding (frame_encode,
 * frame_write, frame_pack_*), decoding (frame_unpack_checked, frame_unpack_*, a table-kit game's
 * own messages, frame_free_*) and reading frames from a buffer (frame_peek, frame_read_*).
 *
 * Decoding is steps 1-3 of docs/protocol.md "What "valid" means" here (the cap, the wire pass,
 * the budgeted unpack), then the descriptor walk and the message rules of frame_check.c
 * (frame_walk_message, check_any). docs/protocol.md "Framing" has the frame and the decoder's
 * results.
 */
#include "frame_int.h"

const frame_limits_t frame_limits_default = {
    .max_frame = FRAME_DEFAULT_MAX,
    .budget_factor = FRAME_DEFAULT_BUDGET_FACTOR,
    .budget_floor = FRAME_DEFAULT_BUDGET_FLOOR,
    .max_string = FRAME_DEFAULT_MAX_STRING,
};

const frame_limits_t *frame_limits_or_default(const frame_limits_t *lim)
{
    return lim != NULL ? lim : &frame_limits_default;
}

int frame_fail(frame_error_t *err, Croupier__ErrorCode code, const char *fmt, ...)
{
    if (err != NULL) {
        err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->detail, sizeof err->detail, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

void frame_error_reset(frame_error_t *err)
{
    if (err != NULL) {
        err->code = CROUPIER__ERROR_CODE__OK;
        err->alloc_bytes = 0;
        err->detail[0] = '\0';
    }
}

/* Longest path text kept (the walks used to build it level by level in buffers of this size). */
#define PATH_TEXT_MAX 256

/* Writes the dotted path of n into buf (at most PATH_TEXT_MAX - 1 characters, cut like the
 * level-by-level snprintf it replaces). */
static void path_text(const path_node_t *n, char buf[PATH_TEXT_MAX])
{
    const char *names[FRAME_MAX_DEPTH + 8];
    size_t k = 0;
    for (; n != NULL && k < sizeof names / sizeof names[0]; n = n->up)
        names[k++] = n->name;
    size_t used = 0;
    buf[0] = '\0';
    while (k > 0 && used < PATH_TEXT_MAX - 1) {
        const char *name = names[--k];
        if (used > 0)
            buf[used++] = '.';
        size_t len = strlen(name);
        if (len > PATH_TEXT_MAX - 1 - used)
            len = PATH_TEXT_MAX - 1 - used;
        memcpy(buf + used, name, len);
        used += len;
        buf[used] = '\0';
    }
    buf[used] = '\0';
}

int frame_fail_at(frame_error_t *err, Croupier__ErrorCode code, const path_node_t *at,
                  const char *fmt, ...)
{
    if (err != NULL) {
        char path[PATH_TEXT_MAX];
        path_text(at, path);
        err->code = code;
        size_t n = strlen(path);
        if (n > sizeof err->detail - 1)
            n = sizeof err->detail - 1;
        memcpy(err->detail, path, n);
        err->detail[n] = '\0';
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->detail + n, sizeof err->detail - n, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

bool frame_card_valid(uint8_t code)
{
    unsigned rank = code >> 2, suit = code & 3u;
    if (rank >= 2 && rank <= 14)
        return true;
    return rank == 15 && suit <= 1;
}

/*
 * Strict UTF-8 (RFC 3629): shortest forms only, no UTF-16 surrogates, nothing above
 * U+10FFFF. NUL is refused too: protobuf-c hands strings out NUL-terminated, so a NUL inside
 * would silently cut the string short for every reader.
 */
bool frame_utf8_valid(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        if (c == 0)
            return false;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp, min;
        if ((c & 0xE0) == 0xC0) {
            n = 1, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (len - i - 1 < n)
            return false;
        for (size_t k = 1; k <= n; k++) {
            uint8_t cc = s[i + k];
            if ((cc & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += n + 1;
    }
    return true;
}

const char *frame_result_name(frame_result_t r)
{
    switch (r) {
    case FRAME_OK:
        return "ok";
    case FRAME_NEED_MORE:
        return "need_more";
    case FRAME_TOO_LARGE:
        return "too_large";
    case FRAME_MALFORMED:
        return "malformed";
    }
    return "unknown";
}

const char *frame_error_code_name(int code)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&croupier__error_code__descriptor, code);
    return v != NULL ? v->name : "UNKNOWN";
}

/* ---- the budget allocator --------------------------------------------------------------- */

/*
 * protobuf-c allocates everything an unpack makes (the message structs, repeated arrays,
 * strings, unknown fields, its own scratch slabs) through a ProtobufCAllocator. This one counts
 * the bytes handed out and refuses once the total would pass the budget; protobuf-c then frees
 * what it made and returns NULL. The count is cumulative (frees don't give budget back), which
 * is simpler and stricter.
 *
 * The memory comes from an arena: a chain of blocks handed out by bumping a pointer, where
 * frees do nothing and the whole chain is freed at once. protobuf-c (1.4.x) allocates the
 * message itself first, so it sits right after the first block's header, and frame_free(m)
 * finds the arena from m alone (frame_unpack_checked checks that the message is where it should
 * be). A small message is one malloc and one free instead of one per sub-message and string, and
 * freeing it walks no descriptor.
 */
typedef struct arena_block {
    struct arena_block *next; /* the blocks after the first (first block: all others) */
    size_t cap, used;
    bool heap; /* from malloc (false: a caller's frame_scratch_t) */
    /* then the data, aligned for any type */
} arena_block_t;

#define ARENA_ALIGN 16
#define ARENA_HEADER ((sizeof(arena_block_t) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))
/* Data bytes of the first block (most frames of the protocol fit) and of later ones. */
#define ARENA_FIRST 512
#define ARENA_MORE 4096

typedef struct budget {
    size_t left;
    size_t used;
    bool exhausted;
    arena_block_t *first;     /* NULL until the first allocation */
    arena_block_t *cur;       /* the block allocations come from */
    frame_scratch_t *scratch; /* the first block's memory when not NULL */
} budget_t;

_Static_assert(sizeof(frame_scratch_t) > 256, "frame_scratch_t holds a first block");

static arena_block_t *arena_block_new(size_t data)
{
    arena_block_t *blk = malloc(ARENA_HEADER + data);
    if (blk == NULL)
        return NULL;
    blk->next = NULL;
    blk->cap = data;
    blk->used = 0;
    blk->heap = true;
    return blk;
}

/* The first block of an arena in a caller's scratch memory. */
static arena_block_t *arena_block_scratch(frame_scratch_t *s)
{
    arena_block_t *blk = (arena_block_t *)(void *)s->mem;
    blk->next = NULL;
    blk->cap = sizeof s->mem - ARENA_HEADER;
    blk->used = 0;
    blk->heap = false;
    return blk;
}

static void arena_release(arena_block_t *first)
{
    while (first != NULL) {
        arena_block_t *next = first->next;
        if (first->heap)
            free(first);
        first = next;
    }
}

static void *budget_alloc(void *data, size_t size)
{
    budget_t *b = data;
    if (size > b->left) {
        b->exhausted = true;
        return NULL;
    }
    size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (need < size)
        return NULL;
    arena_block_t *blk = b->cur;
    if (blk == NULL || blk->cap - blk->used < need) {
        size_t cap = b->first == NULL ? ARENA_FIRST : ARENA_MORE;
        if (need > cap)
            cap = need;
        if (b->first == NULL && b->scratch != NULL && need <= sizeof b->scratch->mem - ARENA_HEADER)
            blk = arena_block_scratch(b->scratch);
        else
            blk = arena_block_new(cap);
        if (blk == NULL)
            return NULL;
        if (b->first == NULL) {
            b->first = blk;
        } else {
            blk->next = b->first->next;
            b->first->next = blk;
        }
        b->cur = blk;
    }
    void *p = (char *)blk + ARENA_HEADER + blk->used;
    blk->used += need;
    b->left -= size;
    b->used += size;
    return p;
}

/* Frees inside an arena are no-ops: the arena goes as a whole. */
static void budget_free(void *data, void *p)
{
    (void)data;
    (void)p;
}

/* Frees a message unpacked by frame_unpack_checked (the arena whose first block it starts). */
void frame_arena_free_message(ProtobufCMessage *m)
{
    arena_release((arena_block_t *)(void *)((char *)m - ARENA_HEADER));
}

/* ---- the wire pass: strings ------------------------------------------------------------- */

/* Reads a varint at *pos; returns false if it runs past end or past 10 bytes. */
bool frame_wire_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (*pos >= len)
            return false;
        uint8_t b = p[(*pos)++];
        v |= (uint64_t)(b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
            *out = v;
            return true;
        }
    }
    return false;
}

/*
 * Walks the raw protobuf bytes of a message of type desc and checks every known string field
 * (valid UTF-8, no NUL, at most max_string bytes) and, recursively, every known sub-message,
 * before protobuf-c sees them: after unpack the length of a string with a NUL inside is lost.
 * Structure errors found on the way are reported as MALFORMED_FRAME; unknown fields are only
 * skipped (protobuf-c keeps them, inside the allocation budget).
 */
static int wire_check(const ProtobufCMessageDescriptor *desc, const uint8_t *p, size_t len,
                      const path_node_t *at, unsigned depth, const frame_limits_t *lim,
                      frame_error_t *err)
{
    if (depth > FRAME_MAX_DEPTH)
        return frame_fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at, ": nested too deep");
    size_t pos = 0;
    while (pos < len) {
        uint64_t tag, n;
        if (!frame_wire_varint(p, len, &pos, &tag))
            return frame_fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at, ": truncated tag");
        uint64_t id = tag >> 3;
        /* Field 0 and numbers above 2^29-1 don't exist; protobuf-c takes an overlong-encoded
         * tag 0 as an unknown field it then re-encodes as a tag it refuses itself. */
        if (id == 0 || id > 536870911u)
            return frame_fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at,
                                 ": field number %" PRIu64 " out of range", id);
        switch (tag & 7) {
        case 0:
            if (!frame_wire_varint(p, len, &pos, &n))
                return frame_fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at,
                                     ": truncated varint");
            break;
        case 1:
        case 5: {
            size_t w = (tag & 7) == 1 ? 8 : 4;
            if (len - pos < w)
                return frame_fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at,
                                     ": truncated fixed field");
            pos += w;
            break;
        }
        case 2: {
            if (!frame_wire_varint(p, len, &pos, &n) || n > len - pos)
                return frame_fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at,
                                     ": truncated length-delimited field");
            const ProtobufCFieldDescriptor *f =
                id <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(desc, (unsigned)id)
                                 : NULL;
            if (f != NULL && f->type == PROTOBUF_C_TYPE_STRING) {
                if (n > lim->max_string)
                    return frame_fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                                         ".%s: string of %" PRIu64 " bytes, at most %zu", f->name,
                                         n, lim->max_string);
                if (!frame_utf8_valid(p + pos, (size_t)n))
                    return frame_fail_at(err, CROUPIER__ERROR_CODE__BAD_REQUEST, at,
                                         ".%s: not valid UTF-8 (or holds NUL)", f->name);
            } else if (f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                path_node_t sub = {at, f->name};
                int rc = wire_check(f->descriptor, p + pos, (size_t)n, &sub, depth + 1, lim, err);
                if (rc < 0)
                    return rc;
            }
            pos += (size_t)n;
            break;
        }
        default:
            return frame_fail_at(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, at,
                                 ": unsupported wire type %u", (unsigned)(tag & 7));
        }
    }
    return 0;
}

/* ---- encoding ----------------------------------------------------------------------------- */

void frame_put_header(uint8_t out[FRAME_HEADER_SIZE], uint32_t len)
{
    out[0] = (uint8_t)(len >> 24);
    out[1] = (uint8_t)(len >> 16);
    out[2] = (uint8_t)(len >> 8);
    out[3] = (uint8_t)len;
}

/*
 * Checks msg and returns its packed size in *size. 0, -EINVAL or -EMSGSIZE. Runs before any
 * byte is written, so a refused message leaves the output untouched (and protobuf-c never
 * sees a NULL required pointer, which it would dereference).
 */
static int prepare(const ProtobufCMessage *msg, const frame_limits_t *lim, frame_error_t *err,
                   size_t *size)
{
    frame_error_reset(err);
    int rc = frame_check_any(msg, lim, err, false);
    if (rc < 0)
        return rc;
#ifndef NDEBUG
    /* The walk of frame_check_any() refuses everything protobuf_c_message_check() does (NULL
     * required messages and strings, NULL arrays and bytes data, at every level), so this
     * cannot fail; optimised builds (-Db_ndebug=true) skip the second walk of the message. */
    if (!protobuf_c_message_check(msg))
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s: protobuf-c check failed",
                          msg->descriptor->short_name);
#endif
    *size = protobuf_c_message_get_packed_size(msg);
    if (*size > lim->max_frame || *size > UINT32_MAX) {
        frame_fail(err, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE, "%s: %zu bytes, cap %zu",
                   msg->descriptor->short_name, *size, lim->max_frame);
        return -EMSGSIZE;
    }
    return 0;
}

ssize_t frame_encode(const ProtobufCMessage *msg, const frame_limits_t *lim, uint8_t *buf,
                     size_t cap, frame_error_t *err)
{
    lim = frame_limits_or_default(lim);
    size_t size = 0;
    int rc = prepare(msg, lim, err, &size);
    if (rc < 0)
        return rc;
    if (cap < FRAME_HEADER_SIZE + size)
        return -ENOBUFS;
    frame_put_header(buf, (uint32_t)size);
    protobuf_c_message_pack(msg, buf + FRAME_HEADER_SIZE);
    return (ssize_t)(FRAME_HEADER_SIZE + size);
}

int frame_write(struct evbuffer *out, const ProtobufCMessage *msg, const frame_limits_t *lim,
                frame_error_t *err)
{
    lim = frame_limits_or_default(lim);
    size_t size = 0;
    int rc = prepare(msg, lim, err, &size);
    if (rc < 0)
        return rc;
    struct evbuffer_iovec v;
    if (evbuffer_reserve_space(out, (ev_ssize_t)(FRAME_HEADER_SIZE + size), &v, 1) != 1 ||
        v.iov_len < FRAME_HEADER_SIZE + size)
        return -ENOMEM;
    uint8_t *p = v.iov_base;
    frame_put_header(p, (uint32_t)size);
    protobuf_c_message_pack(msg, p + FRAME_HEADER_SIZE);
    v.iov_len = FRAME_HEADER_SIZE + size;
    if (evbuffer_commit_space(out, &v, 1) != 0)
        return -ENOMEM;
    return 0;
}

int frame_pack_client(struct evbuffer *out, const Croupier__ClientMessage *m,
                      const frame_limits_t *lim, frame_error_t *err)
{
    if (m == NULL)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "no message");
    return frame_write(out, &m->base, lim, err);
}

int frame_pack_server(struct evbuffer *out, const Croupier__ServerMessage *m,
                      const frame_limits_t *lim, frame_error_t *err)
{
    if (m == NULL)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "no message");
    return frame_write(out, &m->base, lim, err);
}

int frame_pack_rpc(struct evbuffer *out, const Croupier__RpcFrame *m, const frame_limits_t *lim,
                   frame_error_t *err)
{
    if (m == NULL)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "no message");
    return frame_write(out, &m->base, lim, err);
}

/* ---- decoding ----------------------------------------------------------------------------- */

/*
 * Runs a game's rules callback on m (frame_game_rules_cb): a refusal that left err's code OK
 * is a BAD_REQUEST, one that left no detail names the message type. Returns 0 or -EINVAL.
 */
static int run_game_rules(const ProtobufCMessage *m, frame_game_rules_cb rules, frame_error_t *err)
{
    if (rules == NULL)
        return 0;
    frame_error_t own;
    frame_error_t *e = err != NULL ? err : &own;
    e->code = CROUPIER__ERROR_CODE__OK;
    e->detail[0] = '\0';
    if (rules(m, e) == 0)
        return 0;
    if (e->code == CROUPIER__ERROR_CODE__OK)
        e->code = CROUPIER__ERROR_CODE__BAD_REQUEST;
    if (e->detail[0] == '\0')
        snprintf(e->detail, sizeof e->detail, "%s: refused by the game's rules",
                 m->descriptor->short_name);
    return -EINVAL;
}

/*
 * The whole decoding pipeline of one payload: cap, wire pass, budgeted unpack, walk and the
 * type's rules (rules: the protocol's, by descriptor; game: a game's own message, with the
 * card-field convention and game_rules). Returns the message (free with frame_free) or NULL
 * with err filled in.
 */
static ProtobufCMessage *unpack_core(const ProtobufCMessageDescriptor *desc, const uint8_t *payload,
                                     size_t len, const frame_limits_t *lim, frame_error_t *err,
                                     bool rules, bool game, frame_game_rules_cb game_rules,
                                     frame_scratch_t *scratch)
{
    lim = frame_limits_or_default(lim);
    frame_error_reset(err);
    if (len > lim->max_frame) {
        frame_fail(err, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE, "%s: %zu bytes, cap %zu",
                   desc->short_name, len, lim->max_frame);
        return NULL;
    }
    if (len > 0 && payload == NULL) {
        frame_fail(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME, "no payload");
        return NULL;
    }
    path_node_t root = {NULL, desc->short_name};
    if (wire_check(desc, payload, len, &root, 0, lim, err) < 0)
        return NULL;

    budget_t b = {.left = lim->budget_floor, .used = 0, .exhausted = false, NULL, NULL, scratch};
    if (lim->budget_factor > 0 && len > (SIZE_MAX - b.left) / lim->budget_factor)
        b.left = SIZE_MAX;
    else
        b.left += lim->budget_factor * len;
    ProtobufCAllocator alloc = {budget_alloc, budget_free, &b};
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, &alloc, len, payload);
    if (err != NULL)
        err->alloc_bytes = b.used;
    if (m != NULL && (b.first == NULL || (char *)m != (char *)b.first + ARENA_HEADER)) {
        /* A protobuf-c that does not allocate the message first: refused rather than freed
         * wrongly later (the unit tests fail at once on such a version). */
        arena_release(b.first);
        frame_fail(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME,
                   "%s: protobuf-c did not allocate the message first", desc->short_name);
        return NULL;
    }
    if (m == NULL) {
        arena_release(b.first);
        if (b.exhausted)
            frame_fail(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME,
                       "%s: needs more than the allocation budget (%zu bytes for %zu)",
                       desc->short_name, b.used + b.left, len);
        else
            frame_fail(err, CROUPIER__ERROR_CODE__MALFORMED_FRAME,
                       "%s: not a valid protobuf message (or a required field is missing)",
                       desc->short_name);
        return NULL;
    }
    /* Every string in m passed the wire pass above under the same limits. */
    walk_ctx_t w = {lim, err, true, game};
    int rc = rules ? frame_check_any(m, lim, err, true) : frame_walk_message(m, &root, 0, &w);
    if (rc == 0 && game)
        rc = run_game_rules(m, game_rules, err);
    if (rc < 0) {
        frame_arena_free_message(m);
        return NULL;
    }
    return m;
}

/* unpack_core() for the protocol's messages (rules: the type's own, by descriptor). */
ProtobufCMessage *frame_unpack_checked(const ProtobufCMessageDescriptor *desc,
                                       const uint8_t *payload, size_t len,
                                       const frame_limits_t *lim, frame_error_t *err, bool rules,
                                       frame_scratch_t *scratch)
{
    return unpack_core(desc, payload, len, lim, err, rules, false, NULL, scratch);
}

/*
 * The budgeted unpack alone (step 3), into scratch, for bytes frame_wire_vouch() accepted as
 * desc under lim: the wire pass and the descriptor walk of unpack_core() would only repeat the
 * vouch's checks (frame_wire.c's scan of a pushed body that has rules of its own). NULL when
 * protobuf-c refuses (the budget, measured as unpack_core() does, can be tighter than the
 * vouch's estimate for the whole frame): the caller then takes the usual decode.
 */
ProtobufCMessage *frame_unpack_vouched(const ProtobufCMessageDescriptor *desc,
                                       const uint8_t *payload, size_t len,
                                       const frame_limits_t *lim, frame_scratch_t *scratch)
{
    lim = frame_limits_or_default(lim);
    if (len > lim->max_frame || (len > 0 && payload == NULL))
        return NULL;
    budget_t b = {.left = lim->budget_floor, .used = 0, .exhausted = false, NULL, NULL, scratch};
    if (lim->budget_factor > 0 && len > (SIZE_MAX - b.left) / lim->budget_factor)
        b.left = SIZE_MAX;
    else
        b.left += lim->budget_factor * len;
    ProtobufCAllocator alloc = {budget_alloc, budget_free, &b};
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, &alloc, len, payload);
    if (m == NULL || b.first == NULL || (char *)m != (char *)b.first + ARENA_HEADER) {
        arena_release(b.first); /* as unpack_core(): a message not allocated first is refused */
        return NULL;
    }
    return m;
}

/* ---- a table-kit game's own messages -------------------------------------------------------- */

ProtobufCMessage *frame_unpack_game(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                                    size_t len, const frame_limits_t *lim,
                                    frame_game_rules_cb rules, frame_error_t *err)
{
    frame_error_reset(err);
    if (desc == NULL || desc->magic != PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC) {
        frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "no message type");
        return NULL;
    }
    if (len > FRAME_GAME_BODY_MAX) {
        frame_fail(err, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE, "%s: %zu bytes, at most %d",
                   desc->short_name, len, FRAME_GAME_BODY_MAX);
        return NULL;
    }
    return unpack_core(desc, data, len, lim, err, false, true, rules, NULL);
}

int frame_check_game(const ProtobufCMessage *m, const frame_limits_t *lim,
                     frame_game_rules_cb rules, frame_error_t *err)
{
    frame_error_reset(err);
    if (m == NULL || m->descriptor == NULL)
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "no message");
    path_node_t root = {NULL, m->descriptor->short_name};
    walk_ctx_t w = {frame_limits_or_default(lim), err, false, true};
    int rc = frame_walk_message(m, &root, 0, &w);
    if (rc < 0)
        return rc;
    return run_game_rules(m, rules, err);
}

ssize_t frame_pack_game(const ProtobufCMessage *m, const frame_limits_t *lim,
                        frame_game_rules_cb rules, uint8_t *buf, size_t cap, frame_error_t *err)
{
    lim = frame_limits_or_default(lim);
    int rc = frame_check_game(m, lim, rules, err);
    if (rc < 0)
        return rc;
#ifndef NDEBUG
    /* As in prepare(): the walk refuses everything this check does. */
    if (!protobuf_c_message_check(m))
        return frame_fail(err, CROUPIER__ERROR_CODE__BAD_REQUEST, "%s: protobuf-c check failed",
                          m->descriptor->short_name);
#endif
    size_t size = protobuf_c_message_get_packed_size(m);
    size_t max = lim->max_frame < FRAME_GAME_BODY_MAX ? lim->max_frame : FRAME_GAME_BODY_MAX;
    if (size > max) {
        frame_fail(err, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE, "%s: %zu bytes, at most %zu",
                   m->descriptor->short_name, size, max);
        return -EMSGSIZE;
    }
    if (cap < size)
        return -ENOBUFS;
    if (size > 0)
        protobuf_c_message_pack(m, buf);
    return (ssize_t)size;
}

int frame_pack_game_body(const ProtobufCMessage *m, const frame_limits_t *lim,
                         frame_game_rules_cb rules, ProtobufCBinaryData *body, frame_error_t *err)
{
    uint8_t *buf = xmalloc(FRAME_GAME_BODY_MAX);
    ssize_t n = frame_pack_game(m, lim, rules, buf, FRAME_GAME_BODY_MAX, err);
    if (n < 0) {
        free(buf);
        return (int)n;
    }
    body->len = (size_t)n;
    body->data = xrealloc(buf, n > 0 ? (size_t)n : 1);
    return 0;
}

ProtobufCMessage *frame_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *payload,
                               size_t len, const frame_limits_t *lim, frame_error_t *err)
{
    return frame_unpack_checked(desc, payload, len, lim, err, false, NULL);
}

void frame_free(ProtobufCMessage *m)
{
    if (m != NULL)
        frame_arena_free_message(m);
}

Croupier__ClientMessage *frame_unpack_client(const uint8_t *payload, size_t len,
                                             const frame_limits_t *lim, frame_error_t *err)
{
    return (Croupier__ClientMessage *)frame_unpack_checked(&croupier__client_message__descriptor,
                                                           payload, len, lim, err, true, NULL);
}

Croupier__ServerMessage *frame_unpack_server(const uint8_t *payload, size_t len,
                                             const frame_limits_t *lim, frame_error_t *err)
{
    return (Croupier__ServerMessage *)frame_unpack_checked(&croupier__server_message__descriptor,
                                                           payload, len, lim, err, true, NULL);
}

Croupier__RpcFrame *frame_unpack_rpc(const uint8_t *payload, size_t len, const frame_limits_t *lim,
                                     frame_error_t *err)
{
    return (Croupier__RpcFrame *)frame_unpack_checked(&croupier__rpc_frame__descriptor, payload,
                                                      len, lim, err, true, NULL);
}

Croupier__ClientMessage *frame_unpack_client_scratch(const uint8_t *payload, size_t len,
                                                     const frame_limits_t *lim, frame_error_t *err,
                                                     frame_scratch_t *scratch)
{
    return (Croupier__ClientMessage *)frame_unpack_checked(&croupier__client_message__descriptor,
                                                           payload, len, lim, err, true, scratch);
}

void frame_free_client(Croupier__ClientMessage *m)
{
    if (m != NULL)
        frame_free(&m->base);
}

void frame_free_server(Croupier__ServerMessage *m)
{
    if (m != NULL)
        frame_free(&m->base);
}

void frame_free_rpc(Croupier__RpcFrame *m)
{
    if (m != NULL)
        frame_free(&m->base);
}

frame_result_t frame_peek(struct evbuffer *in, const frame_limits_t *lim, const uint8_t **payload,
                          size_t *len, size_t *want)
{
    lim = frame_limits_or_default(lim);
    size_t have = evbuffer_get_length(in);
    uint8_t h[FRAME_HEADER_SIZE];
    if (have < FRAME_HEADER_SIZE) {
        if (want != NULL)
            *want = FRAME_HEADER_SIZE;
        return FRAME_NEED_MORE;
    }
    if (evbuffer_copyout(in, h, sizeof h) != (ev_ssize_t)sizeof h)
        return FRAME_NEED_MORE;
    size_t n = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
    if (len != NULL)
        *len = n;
    if (n > lim->max_frame)
        return FRAME_TOO_LARGE;
    if (have < FRAME_HEADER_SIZE + n) {
        if (want != NULL)
            *want = FRAME_HEADER_SIZE + n;
        return FRAME_NEED_MORE;
    }
    const uint8_t *p = evbuffer_pullup(in, (ev_ssize_t)(FRAME_HEADER_SIZE + n));
    if (p == NULL)
        return FRAME_NEED_MORE;
    if (payload != NULL)
        *payload = p + FRAME_HEADER_SIZE;
    return FRAME_OK;
}

void frame_consume(struct evbuffer *in, size_t len)
{
    evbuffer_drain(in, FRAME_HEADER_SIZE + len);
}

/* peek + unpack + consume for one message type; see frame_read_client in frame.h. */
static frame_result_t read_one(struct evbuffer *in, const frame_limits_t *lim,
                               const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out,
                               frame_error_t *err)
{
    lim = frame_limits_or_default(lim);
    const uint8_t *payload = NULL;
    size_t len = 0;
    frame_error_reset(err);
    frame_result_t r = frame_peek(in, lim, &payload, &len, NULL);
    if (r == FRAME_TOO_LARGE) {
        frame_fail(err, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE, "frame of %zu bytes, cap %zu", len,
                   lim->max_frame);
        return r;
    }
    if (r != FRAME_OK)
        return r;
    ProtobufCMessage *m = frame_unpack_checked(desc, payload, len, lim, err, true, NULL);
    frame_consume(in, len);
    if (m == NULL)
        return FRAME_MALFORMED;
    *out = m;
    return FRAME_OK;
}

frame_result_t frame_read_client(struct evbuffer *in, const frame_limits_t *lim,
                                 Croupier__ClientMessage **out, frame_error_t *err)
{
    ProtobufCMessage *m = NULL;
    frame_result_t r = read_one(in, lim, &croupier__client_message__descriptor, &m, err);
    if (r == FRAME_OK)
        *out = (Croupier__ClientMessage *)m;
    return r;
}

frame_result_t frame_read_server(struct evbuffer *in, const frame_limits_t *lim,
                                 Croupier__ServerMessage **out, frame_error_t *err)
{
    ProtobufCMessage *m = NULL;
    frame_result_t r = read_one(in, lim, &croupier__server_message__descriptor, &m, err);
    if (r == FRAME_OK)
        *out = (Croupier__ServerMessage *)m;
    return r;
}

frame_result_t frame_read_rpc(struct evbuffer *in, const frame_limits_t *lim,
                              Croupier__RpcFrame **out, frame_error_t *err)
{
    ProtobufCMessage *m = NULL;
    frame_result_t r = read_one(in, lim, &croupier__rpc_frame__descriptor, &m, err);
    if (r == FRAME_OK)
        *out = (Croupier__RpcFrame *)m;
    return r;
}
