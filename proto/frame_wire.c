/*
 * frame_wire.c -- the wire format without decoding, for a relay (docs/protocol.md "Relaying
 * without decoding"): a field's bytes (frame_wire_field), a payload forwarded with its
 * request_id replaced (frame_write_forward) or prefixed (frame_write_prefixed), the
 * bounds-checked reader (frame_wire_init, frame_wire_next), the vouch that says the full
 * decoder would accept the bytes (frame_wire_vouch) and the scan of an RpcFrame
 * (frame_scan_rpc). Internal to the codec: frame_int.h has the contract.
 *
 * The vouch and the scan must accept only what frame_unpack_checked() (frame.c) and the checks of
 * frame_check.c accept: they call the same helpers (frame_wire_varint, frame_bytes_kind,
 * frame_enum_zero_is_unspecified, frame_rules_server) rather than restate them, and anything
 * unusual is -EAGAIN ("decode it to know").
 */
#include "frame_int.h"

/* ---- forwarding checked bytes ------------------------------------------------------------- */

/*
 * Steps over one field at *pos of a serialized message: its number in *id, its wire type in
 * *type, where its value starts in *value and its value's length in *value_len (for varints
 * and fixed fields, the bytes of the value). Returns false on malformed bytes.
 */
static bool wire_next(const uint8_t *p, size_t len, size_t *pos, uint64_t *id, unsigned *type,
                      size_t *value, size_t *value_len)
{
    uint64_t tag, n;
    if (!frame_wire_varint(p, len, pos, &tag) || (tag >> 3) == 0)
        return false;
    *id = tag >> 3;
    *type = (unsigned)(tag & 7);
    size_t start = *pos;
    switch (*type) {
    case 0:
        if (!frame_wire_varint(p, len, pos, &n))
            return false;
        break;
    case 1:
    case 5: {
        size_t w = *type == 1 ? 8 : 4;
        if (len - *pos < w)
            return false;
        *pos += w;
        break;
    }
    case 2:
        if (!frame_wire_varint(p, len, pos, &n) || n > len - *pos)
            return false;
        start = *pos;
        *pos += (size_t)n;
        break;
    default:
        return false;
    }
    *value = start;
    *value_len = *pos - start;
    return true;
}

int frame_wire_field(const uint8_t *msg, size_t len, uint32_t field, const uint8_t **value,
                     size_t *value_len)
{
    size_t pos = 0, found = 0, at = 0, at_len = 0;
    if (len > 0 && msg == NULL)
        return -EINVAL;
    while (pos < len) {
        uint64_t id;
        unsigned type;
        size_t v, vlen;
        if (!wire_next(msg, len, &pos, &id, &type, &v, &vlen))
            return -EINVAL;
        if (id != field)
            continue;
        if (type != 2)
            return -EINVAL;
        if (++found > 1)
            return -EEXIST;
        at = v;
        at_len = vlen;
    }
    if (found == 0)
        return -ENOENT;
    *value = msg + at;
    *value_len = at_len;
    return 0;
}

/* Writes v as a varint at p; returns the number of bytes (at most 10). */
static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/*
 * The common case (the field does not occur in msg) is one reservation and two copies; when it
 * does, the fields around each occurrence are copied piece by piece.
 */
int frame_write_forward(struct evbuffer *out, const uint8_t *msg, size_t len, uint32_t field,
                        uint64_t value, const frame_limits_t *lim)
{
    lim = frame_limits_or_default(lim);
    if (len > 0 && msg == NULL)
        return -EINVAL;
    /* One pass: is msg well-formed, how many bytes do the occurrences of field take? */
    size_t pos = 0, dropped = 0;
    while (pos < len) {
        size_t start = pos, v, vlen;
        uint64_t id;
        unsigned type;
        if (!wire_next(msg, len, &pos, &id, &type, &v, &vlen))
            return -EINVAL;
        if (field != 0 && id == field)
            dropped += pos - start;
    }
    uint8_t tail[16];
    size_t tail_len = 0;
    if (field != 0) {
        tail_len = put_varint(tail, (uint64_t)field << 3);
        tail_len += put_varint(tail + tail_len, value);
    }
    size_t size = len - dropped + tail_len;
    if (size > lim->max_frame || size > UINT32_MAX)
        return -EMSGSIZE;
    struct evbuffer_iovec iv;
    if (evbuffer_reserve_space(out, (ev_ssize_t)(FRAME_HEADER_SIZE + size), &iv, 1) != 1 ||
        iv.iov_len < FRAME_HEADER_SIZE + size)
        return -ENOMEM;
    uint8_t *p = iv.iov_base;
    frame_put_header(p, (uint32_t)size);
    p += FRAME_HEADER_SIZE;
    if (dropped == 0) {
        if (len > 0)
            memcpy(p, msg, len);
        p += len;
    } else {
        pos = 0;
        while (pos < len) {
            size_t start = pos, v, vlen;
            uint64_t id = 0;
            unsigned type;
            if (!wire_next(msg, len, &pos, &id, &type, &v, &vlen))
                return -EINVAL; /* cannot happen: the first pass read the same bytes */
            if (id == field)
                continue;
            memcpy(p, msg + start, pos - start);
            p += pos - start;
        }
    }
    memcpy(p, tail, tail_len);
    iv.iov_len = FRAME_HEADER_SIZE + size;
    if (evbuffer_commit_space(out, &iv, 1) != 0)
        return -ENOMEM;
    return 0;
}

/* ---- reading the wire format without decoding ---------------------------------------------- */

void frame_wire_init(frame_wire_reader_t *r, const uint8_t *msg, size_t len)
{
    r->p = msg;
    r->len = msg != NULL ? len : 0;
    r->pos = 0;
}

/* frame_wire_varint(), with the one- and two-byte values (tags, lengths, most ids) read inline:
 * the same value and position for those, the rest (and every error) left to it. */
static inline bool wire_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *out)
{
    size_t i = *pos;
    if (i < len && p[i] < 0x80) {
        *out = p[i];
        *pos = i + 1;
        return true;
    }
    if (i < len && len - i >= 2 && p[i + 1] < 0x80) {
        *out = (uint64_t)(p[i] & 0x7F) | (uint64_t)p[i + 1] << 7;
        *pos = i + 2;
        return true;
    }
    return frame_wire_varint(p, len, pos, out);
}

/* frame_wire_next(), inlined into the vouch and the scan (the relay's hot path). */
static inline int wire_read(frame_wire_reader_t *r, frame_wire_value_t *v)
{
    if (r->pos >= r->len)
        return 0;
    size_t pos = r->pos;
    uint64_t tag, n;
    if (r->p[pos] < 0x80)
        tag = r->p[pos++]; /* fields 1-15: one-byte tags */
    else if (!wire_varint(r->p, r->len, &pos, &tag))
        return -EINVAL;
    uint64_t id = tag >> 3;
    unsigned type = (unsigned)(tag & 7);
    if (id == 0 || id > 536870911u)
        return -EINVAL;
    size_t start = pos;
    switch (type) {
    case 0:
        if (!wire_varint(r->p, r->len, &pos, &n))
            return -EINVAL;
        v->num = n;
        break;
    case 1:
    case 5: {
        size_t w = type == 1 ? 8 : 4;
        if (r->len - pos < w)
            return -EINVAL;
        n = 0;
        for (size_t i = w; i-- > 0;)
            n = n << 8 | r->p[pos + i];
        v->num = n;
        pos += w;
        break;
    }
    case 2:
        if (!wire_varint(r->p, r->len, &pos, &n) || n > r->len - pos)
            return -EINVAL;
        v->num = n;
        start = pos;
        pos += (size_t)n;
        break;
    default:
        return -EINVAL;
    }
    v->field = (uint32_t)id;
    v->type = (uint8_t)type;
    v->data = r->p + start;
    v->len = pos - start;
    v->start = r->pos;
    r->pos = pos;
    return 1;
}

int frame_wire_next(frame_wire_reader_t *r, frame_wire_value_t *v)
{
    return wire_read(r, v);
}

size_t frame_wire_put_varint(uint8_t *p, uint64_t v)
{
    return put_varint(p, v);
}

/* The wire type a field of type t has when not packed. */
static unsigned wire_type_of(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        return 5;
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 1;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_MESSAGE:
        return 2;
    default:
        return 0;
    }
}

/* Top-level fields frame_scan_rpc_cached() keeps from its vouch (an RpcFrame has a few). */
#define VOUCH_TOP_MAX 16

/* What one vouch pass carries: the limits, the estimated unpack size, half the budget. */
typedef struct vouch {
    const frame_limits_t *lim;
    size_t cost;
    size_t budget;
    /* The top level of frame_scan_rpc_cached(), read once: cache_field (0: none) is the
     * sub-message the cache may hold. Met with the cache's bytes (skip_msg, skip_len) it is not
     * vouched again and adds skip_cost (skipped points at it); met with others it is vouched
     * here and its cost is left in mark_cost (marked points at it). */
    uint32_t cache_field;
    const uint8_t *skip_msg;
    size_t skip_len, skip_cost;
    const uint8_t *skipped, *marked;
    size_t mark_cost;
    /* The top-level fields read, in order (NULL: not kept); more than VOUCH_TOP_MAX fail. */
    frame_wire_value_t *top;
    unsigned ntop;
    /* The top-level message's required fields as a mask of field indexes (NULL: read from its
     * descriptor, one field at a time, which costs a pass over every field it has). */
    const uint64_t *top_required;
} vouch_t;

/* The descriptor of field number id of d: protobuf-c keeps d->fields sorted by number, so a
 * message numbered 1, 2, 3... has field id at index id - 1; the others are looked up. */
static inline const ProtobufCFieldDescriptor *vouch_field(const ProtobufCMessageDescriptor *d,
                                                          uint32_t id)
{
    if (id - 1 < d->n_fields && d->fields[id - 1].id == id)
        return &d->fields[id - 1];
    return protobuf_c_message_descriptor_get_field(d, id);
}

/* The required fields of d as a mask of field indexes (d has at most 64 fields). */
static uint64_t vouch_required_mask(const ProtobufCMessageDescriptor *d)
{
    uint64_t mask = 0;
    for (unsigned i = 0; i < d->n_fields && i < 64; i++)
        if (d->fields[i].label == PROTOBUF_C_LABEL_REQUIRED)
            mask |= 1ull << i;
    return mask;
}

/*
 * The required fields of d as a mask (d has at most 64 fields), remembered per thread for the
 * last descriptors met (a small direct-mapped table keyed by the descriptor's address): a
 * message's check then costs no pass over every field of its descriptor.
 */
static uint64_t vouch_required(const ProtobufCMessageDescriptor *d)
{
    static _Thread_local struct {
        const ProtobufCMessageDescriptor *d;
        uint64_t mask;
    } known[64];
    size_t i = ((uintptr_t)d >> 4) & 63;
    if (known[i].d != d) {
        known[i].mask = vouch_required_mask(d);
        known[i].d = d;
    }
    return known[i].mask;
}

/* The number of varints in the packed bytes p[0, len), each at most 2^64-1; SIZE_MAX when they
 * are not a whole number of such varints. */
static size_t vouch_packed_varints(const uint8_t *p, size_t len)
{
    size_t pos = 0, count = 0;
    while (pos < len) {
        size_t at = pos;
        uint64_t x;
        if (!wire_varint(p, len, &pos, &x) || (pos - at == 10 && p[at + 9] > 1))
            return SIZE_MAX;
        count++;
    }
    return count;
}

/* Oneofs per message tracked by the vouch (the protocol's messages have at most two). */
#define VOUCH_ONEOFS 4

/*
 * One message of frame_wire_vouch(): true when frame_unpack_checked() would accept it. The cost
 * estimate over-counts what protobuf-c allocates: the message, 64 bytes per field occurrence
 * (its scan slab entry and array slot), the bytes of every string and bytes field.
 */
static bool vouch_message(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len,
                          unsigned depth, vouch_t *v)
{
    if (depth > FRAME_MAX_DEPTH || d->n_fields > 64)
        return false;
    uint64_t seen = 0;
    unsigned oneof_at[VOUCH_ONEOFS], n_oneof = 0;
    v->cost += d->sizeof_message + 64;
    frame_wire_reader_t r;
    frame_wire_value_t f;
    int rc;
    frame_wire_init(&r, p, len);
    while ((rc = wire_read(&r, &f)) > 0) {
        const ProtobufCFieldDescriptor *fd = vouch_field(d, f.field);
        if (fd == NULL)
            return false;
        if (f.type != wire_type_of(fd->type)) {
            /* Packed: only a list of uint64 (RpcFrame.push_to), each a plain varint. */
            if (f.type != 2 || fd->type != PROTOBUF_C_TYPE_UINT64 ||
                !(fd->flags & PROTOBUF_C_FIELD_FLAG_PACKED) || (seen & (1ull << (fd - d->fields))))
                return false;
            size_t count = vouch_packed_varints(f.data, f.len);
            if (count == SIZE_MAX)
                return false;
            v->cost += 64 + 16 * count; /* the array protobuf-c allocates, over-counted */
        }
        if (depth == 0 && v->top != NULL) {
            if (v->ntop == VOUCH_TOP_MAX)
                return false;
            v->top[v->ntop++] = f;
        }
        uint64_t bit = 1ull << (unsigned)(fd - d->fields);
        if (fd->label != PROTOBUF_C_LABEL_REPEATED && (seen & bit))
            return false;
        seen |= bit;
        if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            for (unsigned k = 0; k < n_oneof; k++)
                if (oneof_at[k] == fd->quantifier_offset)
                    return false;
            if (n_oneof == VOUCH_ONEOFS)
                return false;
            oneof_at[n_oneof++] = fd->quantifier_offset;
        }
        if (f.type == 0 && f.len == 10 && f.data[9] > 1)
            return false; /* above 2^64-1: leave the verdict to protobuf-c */
        v->cost += 64;
        switch (fd->type) {
        case PROTOBUF_C_TYPE_ENUM:
            if (f.num > INT32_MAX ||
                protobuf_c_enum_descriptor_get_value(fd->descriptor, (int)f.num) == NULL)
                return false;
            if (f.num == 0 && fd->label == PROTOBUF_C_LABEL_REQUIRED &&
                frame_enum_zero_is_unspecified(fd->descriptor))
                return false;
            break;
        case PROTOBUF_C_TYPE_STRING:
            if (f.len > v->lim->max_string || !frame_utf8_valid(f.data, f.len))
                return false;
            v->cost += f.len + 1;
            break;
        case PROTOBUF_C_TYPE_BYTES: {
            /* A list of card codes, but an envelope's body and a deck commitment (walk_value,
             * frame_bytes_kind). */
            bytes_kind_t kind = frame_bytes_kind(d, fd, false);
            if (kind == BYTES_GAME_BODY || kind == BYTES_OPAQUE) {
                if (f.len > (kind == BYTES_GAME_BODY ? FRAME_GAME_BODY_MAX : v->lim->max_string))
                    return false;
                v->cost += f.len;
                break;
            }
            if (f.len > FRAME_MAX_CARDS)
                return false;
            for (size_t i = 0; i < f.len; i++)
                if (!frame_card_valid(f.data[i]))
                    return false;
            v->cost += f.len;
            break;
        }
        case PROTOBUF_C_TYPE_MESSAGE: {
            /* The verdict of a message is the same wherever it is met at the same depth: only
             * its cost adds to the frame's (the budget is checked below, costs only grow). */
            bool cached = depth == 0 && v->cache_field != 0 && f.field == v->cache_field;
            if (cached && v->skip_msg != NULL && f.len == v->skip_len &&
                memcmp(f.data, v->skip_msg, f.len) == 0) {
                v->cost += v->skip_cost;
                v->skipped = f.data;
                break;
            }
            size_t before = v->cost;
            if (!vouch_message(fd->descriptor, f.data, f.len, depth + 1, v))
                return false;
            if (cached) {
                v->marked = f.data;
                v->mark_cost = v->cost - before;
            }
            break;
        }
        default:
            break;
        }
        if (v->cost > v->budget)
            return false;
    }
    if (rc < 0)
        return false;
    uint64_t required =
        depth == 0 && v->top_required != NULL ? *v->top_required : vouch_required(d);
    return (seen & required) == required;
}

/* frame_wire_vouch() with v's skip and mark (lim already resolved). */
static int wire_vouch(const ProtobufCMessageDescriptor *desc, const uint8_t *msg, size_t len,
                      const frame_limits_t *lim, vouch_t *v)
{
    if (desc == NULL || len > lim->max_frame || (len > 0 && msg == NULL))
        return -EAGAIN;
    v->lim = lim;
    v->cost = 0;
    v->budget = lim->budget_floor;
    if (lim->budget_factor > 0 && len > (SIZE_MAX - v->budget) / lim->budget_factor)
        v->budget = SIZE_MAX;
    else
        v->budget += lim->budget_factor * len;
    v->budget /= 2;
    return vouch_message(desc, msg, len, 0, v) ? 0 : -EAGAIN;
}

int frame_wire_vouch(const ProtobufCMessageDescriptor *desc, const uint8_t *msg, size_t len,
                     const frame_limits_t *lim)
{
    vouch_t v = {0};
    return wire_vouch(desc, msg, len, frame_limits_or_default(lim), &v);
}

/*
 * The ServerMessage bodies frame_scan_rpc() takes on the wire check alone: those
 * frame_rules_server() has no rule for (a Result only without its error, checked by the caller).
 * The others are decoded alone for their rules (scan_body_rules). Keep in step with
 * frame_rules_server().
 */
static bool scan_plain_server_body(uint32_t body)
{
    switch (body) {
    case CROUPIER__SERVER_MESSAGE__BODY_RESULT:
    case CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT:
    case CROUPIER__SERVER_MESSAGE__BODY_DEAL:
    case CROUPIER__SERVER_MESSAGE__BODY_TURN:
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING:
    case CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY:
    case CROUPIER__SERVER_MESSAGE__BODY_PONG:
    case CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT:
        return true;
    default:
        return false;
    }
}

/*
 * The rules of a ServerMessage body that has some (Play, RoundEnd, Snapshot, Joined...): the
 * body alone is decoded, into scratch memory on the stack (a proto2 sub-message decodes the
 * same alone as inside its parent), and frame_rules_server() runs on a ServerMessage that holds
 * only it. The frame's vouch made the generic checks of these bytes: the decode is protobuf-c's
 * budgeted unpack alone (frame_unpack_vouched). Returns 0 when the rules pass, -EAGAIN otherwise
 * (the full decode gives the reason).
 */
static int scan_body_rules(uint32_t body, const uint8_t *p, size_t len, const frame_limits_t *lim)
{
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field(&croupier__server_message__descriptor, body);
    if (fd == NULL || fd->type != PROTOBUF_C_TYPE_MESSAGE ||
        !(fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
        return -EAGAIN;
    frame_scratch_t scratch;
    ProtobufCMessage *m =
        frame_unpack_vouched(fd->descriptor, p, len, frame_limits_or_default(lim), &scratch);
    if (m == NULL)
        return -EAGAIN;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    sm.body_case = (Croupier__ServerMessage__BodyCase)body;
    memcpy((char *)&sm + fd->offset, &m, sizeof m);
    int rc = frame_rules_server(&sm, "ServerMessage", NULL);
    frame_arena_free_message(m);
    return rc == 0 ? 0 : -EAGAIN;
}

/* Field numbers the scan reads (the unit test checks them against the descriptors). */
enum {
    SCAN_RPC_REQUEST_ID = 1,
    SCAN_RPC_PLAYER_ID = 4,
    SCAN_RPC_SESSION_ID = 5,
    SCAN_RPC_ROOM = 7, /* only with a Join (rules_rpc): a reply or push carrying it is refused */
    SCAN_RPC_PUSH_TO = 9,
    SCAN_RPC_FIRST_BODY = 10,
    SCAN_REPLY_CODE = 1,
    SCAN_REPLY_ERROR = 2,
    SCAN_REPLY_PAYLOAD = 3,
    SCAN_SERVER_REQUEST_ID = 1,
    SCAN_SERVER_FIRST_BODY = 10,
    SCAN_RESULT_ERROR = 1,
};

int frame_push_to_check(const uint64_t *ids, size_t n, uint64_t player_id)
{
    if (n > FRAME_PUSH_TO_MAX)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] == 0 || ids[i] == player_id)
            return -EINVAL;
        for (size_t k = 0; k < i; k++)
            if (ids[k] == ids[i])
                return -EINVAL;
    }
    return 0;
}

bool frame_push_to_next(const frame_rpc_scan_t *s, size_t *pos, uint64_t *id)
{
    return *pos < s->push_to_len && wire_varint(s->push_to, s->push_to_len, pos, id);
}

/* rules_rpc()'s rule on a push's push_to (frame_push_to_check), on the scanned bytes (which the
 * vouch found to be whole varints); sets out->n_push_to. */
static int scan_push_to(frame_rpc_scan_t *out)
{
    uint64_t ids[FRAME_PUSH_TO_MAX];
    size_t pos = 0, n = 0;
    uint64_t id;
    while (frame_push_to_next(out, &pos, &id)) {
        if (n == FRAME_PUSH_TO_MAX)
            return -EINVAL;
        ids[n++] = id;
    }
    if (pos != out->push_to_len || frame_push_to_check(ids, n, out->player_id) != 0)
        return -EINVAL;
    out->n_push_to = (unsigned)n;
    return 0;
}

uint8_t *frame_pack_push(const uint64_t *players, size_t n, const uint8_t *msg, size_t len,
                         size_t *out_len)
{
    if (n == 0 || n > FRAME_PUSH_TO_MAX + 1 || players[0] == 0 || (len > 0 && msg == NULL) ||
        frame_push_to_check(players + 1, n - 1, players[0]) != 0 || len > UINT32_MAX / 2)
        return NULL;
    /* Fields in number order, as protobuf-c writes them: request_id (1) = 0, player_id (4),
     * push_to (9, packed), push (17). */
    size_t ids_len = 0;
    uint8_t tmp[10];
    for (size_t i = 1; i < n; i++)
        ids_len += put_varint(tmp, players[i]);
    size_t cap = FRAME_HEADER_SIZE + 2 + 11 + (ids_len > 0 ? 11 + ids_len : 0) + 13 + len;
    uint8_t *buf = xmalloc(cap);
    size_t at = FRAME_HEADER_SIZE;
    buf[at++] = 1 << 3; /* request_id, varint */
    buf[at++] = 0;
    buf[at++] = 4 << 3;
    at += put_varint(buf + at, players[0]);
    if (ids_len > 0) {
        buf[at++] = 9 << 3 | 2;
        at += put_varint(buf + at, ids_len);
        for (size_t i = 1; i < n; i++)
            at += put_varint(buf + at, players[i]);
    }
    at += put_varint(buf + at, (uint64_t)CROUPIER__RPC_FRAME__BODY_PUSH << 3 | 2);
    at += put_varint(buf + at, len);
    if (len > 0)
        memcpy(buf + at, msg, len);
    at += len;
    frame_put_header(buf, (uint32_t)(at - FRAME_HEADER_SIZE));
    *out_len = at;
    return buf;
}

int frame_scan_rpc(const uint8_t *payload, size_t len, const frame_limits_t *lim,
                   frame_rpc_scan_t *out)
{
    return frame_scan_rpc_cached(payload, len, lim, NULL, out);
}

/*
 * The frame passed frame_wire_vouch() as an RpcFrame first (so every field below is known,
 * well-typed and at most once, and the generic checks hold), in one pass over its top level that
 * also keeps its fields (vouch_t.top) and compares its push with the cache's; the reads after it
 * only pick the values out and apply rules_rpc()'s rules for a reply and a push.
 */
int frame_scan_rpc_cached(const uint8_t *payload, size_t len, const frame_limits_t *lim,
                          frame_scan_cache_t *cache, frame_rpc_scan_t *out)
{
    memset(out, 0, sizeof *out);
    lim = frame_limits_or_default(lim);
    frame_wire_value_t top[VOUCH_TOP_MAX];
    vouch_t v = {0};
    v.top = top;
    if (cache != NULL) {
        v.cache_field = CROUPIER__RPC_FRAME__BODY_PUSH;
        if (cache->len != 0 && memcmp(&cache->lim, lim, sizeof *lim) == 0) {
            v.skip_msg = cache->msg;
            v.skip_len = cache->len;
            v.skip_cost = cache->cost;
        }
        if (croupier__rpc_frame__descriptor.n_fields <= 64) {
            if (!cache->rpc_required_known) {
                cache->rpc_required = vouch_required_mask(&croupier__rpc_frame__descriptor);
                cache->rpc_required_known = true;
            }
            v.top_required = &cache->rpc_required;
        }
    }
    if (wire_vouch(&croupier__rpc_frame__descriptor, payload, len, lim, &v) != 0)
        return -EAGAIN;
    const uint8_t *body = NULL;
    size_t body_len = 0;
    frame_wire_reader_t r;
    frame_wire_value_t f;
    for (unsigned i = 0; i < v.ntop; i++) {
        const frame_wire_value_t *t = &top[i];
        if (t->field == SCAN_RPC_REQUEST_ID) {
            out->request_id = t->num;
        } else if (t->field == SCAN_RPC_PLAYER_ID) {
            out->player_id = t->num;
            out->has_player_id = true;
        } else if (t->field == SCAN_RPC_SESSION_ID) {
            out->session_id = t->num;
            out->has_session_id = true;
        } else if (t->field == SCAN_RPC_ROOM) {
            return -EAGAIN; /* the decoder's verdict (found by fuzz_rpc_frame) */
        } else if (t->field == SCAN_RPC_PUSH_TO) {
            if (t->type != 2)
                return -EAGAIN; /* not packed: left to the decoder */
            out->push_to = t->data;
            out->push_to_len = t->len;
        } else if (t->field >= SCAN_RPC_FIRST_BODY) {
            out->body = t->field;
            body = t->data;
            body_len = t->len;
        }
    }
    if (out->body == CROUPIER__RPC_FRAME__BODY_REPLY) {
        if (out->request_id == 0 || out->push_to != NULL)
            return -EAGAIN;
        bool ok = false;
        frame_wire_init(&r, body, body_len);
        while (wire_read(&r, &f) > 0) {
            if (f.field == SCAN_REPLY_CODE)
                ok = f.num == CROUPIER__ERROR_CODE__OK;
            else if (f.field == SCAN_REPLY_ERROR)
                return -EAGAIN;
            else if (f.field == SCAN_REPLY_PAYLOAD) {
                out->msg = f.data;
                out->msg_len = f.len;
            }
        }
        if (!ok || out->msg == NULL)
            return -EAGAIN;
    } else if (out->body == CROUPIER__RPC_FRAME__BODY_PUSH) {
        if (!out->has_player_id || out->player_id == 0)
            return -EAGAIN;
        if (out->push_to != NULL && scan_push_to(out) != 0)
            return -EAGAIN;
        out->msg = body;
        out->msg_len = body_len;
        if (v.skipped != NULL && body == v.skipped) {
            /* The verdict on these bytes (their wire check and their rules) is the cache's. */
            out->msg_body = cache->msg_body;
            out->msg_request_id = cache->msg_request_id;
            return 0;
        }
    } else {
        return -EAGAIN;
    }
    const uint8_t *sub = NULL;
    size_t sub_len = 0;
    frame_wire_init(&r, out->msg, out->msg_len);
    while (wire_read(&r, &f) > 0) {
        if (f.field == SCAN_SERVER_REQUEST_ID) {
            out->msg_request_id = true;
        } else if (f.field >= SCAN_SERVER_FIRST_BODY) {
            out->msg_body = f.field;
            sub = f.data;
            sub_len = f.len;
        }
    }
    bool plain = scan_plain_server_body(out->msg_body);
    if (out->msg_body == CROUPIER__SERVER_MESSAGE__BODY_RESULT) {
        /* plain without its error (whose code must not be OK: decoded for that rule) */
        frame_wire_init(&r, sub, sub_len);
        while (wire_read(&r, &f) > 0)
            if (f.field == SCAN_RESULT_ERROR)
                plain = false;
    }
    if (!plain && scan_body_rules(out->msg_body, sub, sub_len, lim) != 0)
        return -EAGAIN;
    /* A push accepted: its message is remembered with the verdict (v.marked points at it, and
     * a push is the frame's one body, so mark_cost is its cost). */
    if (cache != NULL && out->body == CROUPIER__RPC_FRAME__BODY_PUSH && body == v.marked &&
        out->msg_len > 0 && out->msg_len <= sizeof cache->msg) {
        cache->lim = *lim;
        cache->len = out->msg_len;
        cache->cost = v.mark_cost;
        cache->msg_body = out->msg_body;
        cache->msg_request_id = out->msg_request_id;
        memcpy(cache->msg, out->msg, out->msg_len);
    }
    return 0;
}

int frame_write_prefixed(struct evbuffer *out, uint32_t field, uint64_t value, const uint8_t *msg,
                         size_t len, const frame_limits_t *lim)
{
    lim = frame_limits_or_default(lim);
    if (len > 0 && msg == NULL)
        return -EINVAL;
    uint8_t head[FRAME_HEADER_SIZE + 20];
    size_t n = FRAME_HEADER_SIZE;
    if (field != 0) {
        n += put_varint(head + n, (uint64_t)field << 3);
        n += put_varint(head + n, value);
    }
    size_t size = n - FRAME_HEADER_SIZE + len;
    if (size > lim->max_frame || size > UINT32_MAX)
        return -EMSGSIZE;
    frame_put_header(head, (uint32_t)size);
    struct evbuffer_iovec iv;
    if (evbuffer_reserve_space(out, (ev_ssize_t)(FRAME_HEADER_SIZE + size), &iv, 1) != 1 ||
        iv.iov_len < FRAME_HEADER_SIZE + size)
        return -ENOMEM;
    memcpy(iv.iov_base, head, n);
    if (len > 0)
        memcpy((uint8_t *)iv.iov_base + n, msg, len);
    iv.iov_len = FRAME_HEADER_SIZE + size;
    if (evbuffer_commit_space(out, &iv, 1) != 0)
        return -ENOMEM;
    return 0;
}
