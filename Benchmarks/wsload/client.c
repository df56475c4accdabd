/*
 * The WebSocket client every mode shares: accept key (SHA-1, Base64), masked framing, the frame
 * parser, the upgrade handshake, non-blocking connect, write queues, the epoll loop, the histogram,
 * URL parsing and the run's hard time limit. TLS is in tls.c, permessage-deflate in deflate.c; the
 * modes (relay.c, chat.c) plug in through g_mode.
 */
#include "wsload.h"

uint64_t g_base;
cfg_t G = {
    .mode = MODE_RELAY, .rooms = 0, .members = 0, .pubs_per_room = 1, .rate = 1000, .window = 8, .size = 64,
    .duration = 10, .warmup = 2, .drain = 3, .connect_timeout = 15, .close_timeout = 1, .hold = 10,
    .connect_rate = 0, .max_pending = 256, .bind_range = 0, .threads = 1, .idle = 0,
    .slo_p99_ms = 0, .max_msg = 16u << 20, .max_outbuf = 64u << 20, .room_prefix = "r",
    .tls_version = 13, .deflate_level = 6,
    .deflate_offer = "permessage-deflate; client_no_context_takeover; client_max_window_bits",
};
mode_hooks_t g_mode;
conn_t *g_conns;
long g_nconns;
thr_t *g_thr;
volatile int g_stop;
uint64_t g_t_traffic, g_t_meas, g_t_send_end;
uint8_t *g_pad;
static char g_timer_tag;


/* ------------------------------------------------------------------ */
/* SHA-1 + base64 (for Sec-WebSocket-Accept)                           */
static inline uint32_t rol32(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }
static void sha1_block(uint32_t h[5], const uint8_t *p) {
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 80; i++) w[i] = rol32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) { f = (b & c) | (~b & d); k = 0x5A827999; }
        else if (i < 40) { f = b ^ c ^ d; k = 0x6ED9EBA1; }
        else if (i < 60) { f = (b & c) | (b & d) | (c & d); k = 0x8F1BBCDC; }
        else { f = b ^ c ^ d; k = 0xCA62C1D6; }
        uint32_t t = rol32(a, 5) + f + e + k + w[i];
        e = d; d = c; c = rol32(b, 30); b = a; a = t;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e;
}
void sha1(const uint8_t *data, size_t len, uint8_t out[20]) {
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    size_t i = 0;
    for (; i + 64 <= len; i += 64) sha1_block(h, data + i);
    uint8_t blk[64];
    size_t rem = len - i;
    memcpy(blk, data + i, rem);
    blk[rem++] = 0x80;
    if (rem > 56) { memset(blk + rem, 0, 64 - rem); sha1_block(h, blk); rem = 0; }
    memset(blk + rem, 0, 56 - rem);
    uint64_t bits = (uint64_t)len * 8;
    for (int j = 0; j < 8; j++) blk[56 + j] = (uint8_t)(bits >> (56 - 8 * j));
    sha1_block(h, blk);
    for (int j = 0; j < 5; j++) {
        out[4 * j] = (uint8_t)(h[j] >> 24); out[4 * j + 1] = (uint8_t)(h[j] >> 16);
        out[4 * j + 2] = (uint8_t)(h[j] >> 8); out[4 * j + 3] = (uint8_t)h[j];
    }
}
size_t b64enc(const uint8_t *in, size_t n, char *out) {
    static const char T[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = T[v >> 18]; out[o++] = T[(v >> 12) & 63]; out[o++] = T[(v >> 6) & 63]; out[o++] = T[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[o++] = T[v >> 18]; out[o++] = T[(v >> 12) & 63]; out[o++] = '='; out[o++] = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        out[o++] = T[v >> 18]; out[o++] = T[(v >> 12) & 63]; out[o++] = T[(v >> 6) & 63]; out[o++] = '=';
    }
    out[o] = 0;
    return o;
}
void ws_accept_for(const char *key, char out[32]) {
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%s" WS_GUID, key);
    uint8_t d[20];
    sha1((const uint8_t *)buf, (size_t)n, d);
    b64enc(d, 20, out);
}
/* ------------------------------------------------------------------ */
/* histogram (the recording half is in wsload.h)                       */
uint64_t hval_hi(int i) {
    if (i < 256) return (uint64_t)i;
    int e = (i - 256) / 128 + 8, m = (i - 256) % 128;
    uint64_t lo = (uint64_t)(128 + m) << (e - 7);
    return lo + ((1ull << (e - 7)) - 1);
}
void hmerge(hist_t *d, const hist_t *s) {
    if (!s->n) return;
    for (int i = 0; i < H_NB; i++) d->c[i] += s->c[i];
    if (d->n == 0 || s->min < d->min) d->min = s->min;
    if (s->max > d->max) d->max = s->max;
    d->n += s->n;
    d->sum += s->sum;
}
uint64_t hpct(const hist_t *h, double q) {
    if (!h->n) return 0;
    uint64_t target = (uint64_t)(q * (double)h->n);
    if ((double)target < q * (double)h->n) target++;
    if (target < 1) target = 1;
    uint64_t cum = 0;
    for (int i = 0; i < H_NB; i++) {
        cum += h->c[i];
        if (cum >= target) { uint64_t v = hval_hi(i); return v > h->max ? h->max : v; }
    }
    return h->max;
}

void note_err(thr_t *t, const char *fmt, ...) {
    if (t->first_err[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->first_err, sizeof t->first_err, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ */
/* buffers & I/O                                                       */
void die(const char *m) {
    fprintf(stderr, "wsload: %s\n", m);
    exit(2);
}

void ob_reserve(conn_t *c, size_t add) {
    if (c->ob_len + add <= c->ob_cap) return;
    if (c->ob_off) {
        memmove(c->ob, c->ob + c->ob_off, c->ob_len - c->ob_off);
        c->ob_len -= c->ob_off; c->ob_off = 0;
        if (c->ob_len + add <= c->ob_cap) return;
    }
    size_t nc = c->ob_cap ? c->ob_cap * 2 : 1024;
    while (nc < c->ob_len + add) nc *= 2;
    c->ob = realloc(c->ob, nc);
    if (!c->ob) die("out of memory (ob)");
    c->ob_cap = nc;
}

static void mark_dirty(thr_t *t, conn_t *c) {
    if (c->dirty) return;
    if (t->ndirty == t->dirty_cap) {
        t->dirty_cap = t->dirty_cap ? t->dirty_cap * 2 : 256;
        t->dirty = realloc(t->dirty, sizeof(conn_t *) * (size_t)t->dirty_cap);
        if (!t->dirty) die("out of memory (dirty)");
    }
    t->dirty[t->ndirty++] = c;
    c->dirty = 1;
}

static void mask_copy(uint8_t *dst, const uint8_t *src, size_t n, const uint8_t m[4]) {
    uint8_t m8[8] = {m[0], m[1], m[2], m[3], m[0], m[1], m[2], m[3]};
    uint64_t mk;
    memcpy(&mk, m8, 8);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, src + i, 8);
        v ^= mk;
        memcpy(dst + i, &v, 8);
    }
    for (; i < n; i++) dst[i] = src[i] ^ m[i & 3];
}

/* append one masked client frame (FIN set); rsv1 marks a permessage-deflate compressed message */
void ws_frame_rsv(thr_t *t, conn_t *c, int op, int rsv1, const uint8_t *p, size_t n) {
    uint8_t hdr[14];
    size_t h = 0;
    hdr[h++] = (uint8_t)(0x80 | (rsv1 ? 0x40 : 0) | op);
    if (n < 126) hdr[h++] = (uint8_t)(0x80 | n);
    else if (n < 65536) { hdr[h++] = 0x80 | 126; hdr[h++] = (uint8_t)(n >> 8); hdr[h++] = (uint8_t)n; }
    else { hdr[h++] = 0x80 | 127; for (int i = 7; i >= 0; i--) hdr[h++] = (uint8_t)((uint64_t)n >> (8 * i)); }
    uint32_t mk = (uint32_t)xrand(t);
    memcpy(hdr + h, &mk, 4);
    h += 4;
    ob_reserve(c, h + n);
    uint8_t *dst = c->ob + c->ob_len;
    memcpy(dst, hdr, h);
    mask_copy(dst + h, p, n, hdr + h - 4);
    c->ob_len += h + n;
    t->k.bytes_out += 0; /* counted when actually written */
    mark_dirty(t, c);
}
void ws_frame(thr_t *t, conn_t *c, int op, const uint8_t *p, size_t n) { ws_frame_rsv(t, c, op, 0, p, n); }
void set_events(thr_t *t, conn_t *c, int wantw) {
    if (c->fd < 0 || c->wantw == wantw) return;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (wantw ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(t->ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->wantw = (uint8_t)wantw;
}

static void conn_release(conn_t *c) {
    tls_release(c);
    deflate_release(c);
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    free(c->ib); c->ib = NULL; c->ib_len = c->ib_cap = 0;
    free(c->ob); c->ob = NULL; c->ob_len = c->ob_off = c->ob_cap = 0;
    free(c->mb); c->mb = NULL; c->mb_len = c->mb_cap = 0;
}

/* fail a connection: during connect -> counted as failed connect; when open -> error already counted by caller */
void conn_fail(thr_t *t, conn_t *c, int connect_phase_kind) {
    if (c->st == ST_FAILED || c->st == ST_DONE) return;
    if (st_connecting(c->st) || c->st == ST_NEW) {
        if (c->st != ST_NEW) t->hs_pending--;
        t->k.conn_fail++;
        if (connect_phase_kind == 1) t->k.fail_refused++;
        else if (connect_phase_kind == 2) t->k.fail_timeout++;
        else if (connect_phase_kind == 3) t->k.fail_handshake++;
        else t->k.fail_other++;
    }
    c->st = ST_FAILED;
    conn_release(c);
}

void conn_done(thr_t *t, conn_t *c) {
    (void)t;
    if (c->st == ST_FAILED || c->st == ST_DONE) return;
    /* best effort close_notify, never waited for: the WebSocket close handshake already ended the session */
    if (c->ssl && c->st != ST_TLS && c->st != ST_CONNECTING) { SSL_shutdown(c->ssl); ERR_clear_error(); }
    c->st = ST_DONE;
    conn_release(c);
}

void flush_conn(thr_t *t, conn_t *c) {
    if (c->fd < 0) return;
    while (c->ob_off < c->ob_len) {
        ssize_t n = io_send(t, c, c->ob + c->ob_off, c->ob_len - c->ob_off);
        if (n > 0) { c->ob_off += (size_t)n; t->k.bytes_out += (uint64_t)n; continue; }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { set_events(t, c, c->ssl ? c->wr_wants_w | c->rd_wants_w : 1); return; }
        t->k.io_err++;
        note_err(t, "send(): %s (conn %u)", strerror(errno), c->idx);
        conn_fail(t, c, 0);
        return;
    }
    c->ob_off = c->ob_len = 0;
    if (c->ob_cap > (1u << 20)) { free(c->ob); c->ob = NULL; c->ob_cap = 0; }
    set_events(t, c, c->rd_wants_w);
}

void flush_dirty(thr_t *t) {
    for (int i = 0; i < t->ndirty; i++) {
        conn_t *c = t->dirty[i];
        c->dirty = 0;
        flush_conn(t, c);
    }
    t->ndirty = 0;
}

/* ------------------------------------------------------------------ */
static void on_message(thr_t *t, conn_t *c, int op, int compressed, const uint8_t *p, size_t n, uint64_t now) {
    if (compressed) {
        size_t m;
        const uint8_t *q;
        const char *why;
        if (!inflate_msg(t, c, p, n, &q, &m, &why)) { proto_error(t, c, why); return; }
        p = q; n = m;
    } else if (c->pmd && op <= 2) t->k.z_plain_msgs_in++;
    t->k.msgs_in++;
    if (op == 1) g_mode.on_text(t, c, p, n, now);
    else { t->k.binary_msgs++; t->k.bad_payload++; note_err(t, "binary message on conn %u", c->idx); }
}

void proto_error(thr_t *t, conn_t *c, const char *why) {
    t->k.proto_err++;
    note_err(t, "protocol error on conn %u: %s", c->idx, why);
    /* best effort close frame 1002 then drop */
    if (c->fd >= 0 && !c->close_sent) {
        uint8_t b[2] = {0x03, 0xEA};
        ws_frame(t, c, 8, b, 2);
        c->close_sent = 1;
        io_send(t, c, c->ob + c->ob_off, c->ob_len - c->ob_off);
    }
    conn_fail(t, c, 0);
}

static bool conn_alive(conn_t *c) { return c->st == ST_OPEN || c->st == ST_CLOSING; }

static bool mb_append(thr_t *t, conn_t *c, const uint8_t *p, size_t n) {
    if (c->mb_len + n > G.max_msg) { proto_error(t, c, "message too big"); return false; }
    if (c->mb_len + n > c->mb_cap) {
        size_t nc = c->mb_cap ? c->mb_cap : 256;
        while (nc < c->mb_len + n) nc *= 2;
        c->mb = realloc(c->mb, nc);
        if (!c->mb) die("out of memory (mb)");
        c->mb_cap = nc;
    }
    memcpy(c->mb + c->mb_len, p, n);
    c->mb_len += n;
    return true;
}

static void on_frame(thr_t *t, conn_t *c, int fin, int op, int rsv1, uint8_t *p, size_t n, uint64_t now) {
    switch (op) {
    case 0: /* continuation */
        if (!c->in_frag) { proto_error(t, c, "continuation without start"); return; }
        if (!mb_append(t, c, p, n)) return;
        if (fin) {
            c->in_frag = 0;
            on_message(t, c, c->frag_op, c->frag_rsv1, c->mb, c->mb_len, now);
            c->mb_len = 0;
            if (c->mb_cap > 65536) { free(c->mb); c->mb = NULL; c->mb_cap = 0; }
        }
        return;
    case 1: case 2:
        if (c->in_frag) { proto_error(t, c, "new data frame inside fragmented message"); return; }
        if (fin) { on_message(t, c, op, rsv1, p, n, now); return; }
        c->in_frag = 1; c->frag_op = (uint8_t)op; c->frag_rsv1 = (uint8_t)rsv1; c->mb_len = 0;
        mb_append(t, c, p, n);
        return;
    case 8: { /* close */
        if (!fin || n > 125 || n == 1) { proto_error(t, c, "bad close frame"); return; }
        c->close_rcvd = 1;
        if (!c->close_sent) {
            /* server-initiated close: echo status code */
            c->by_server = 1;
            t->k.server_close++;
            uint16_t code = n >= 2 ? (uint16_t)(p[0] << 8 | p[1]) : 0;
            note_err(t, "server closed conn %u (code %u: %.*s)", c->idx, code, (int)(n > 2 ? n - 2 : 0), (const char *)p + 2);
            ws_frame(t, c, 8, p, n >= 2 ? 2 : 0);
            c->close_sent = 1;
            c->st = ST_CLOSING;
            flush_conn(t, c);
        } else {
            t->k.clean_close++;
            conn_done(t, c); /* we initiated; handshake complete */
        }
        return;
    }
    case 9: /* ping */
        if (!fin || n > 125) { proto_error(t, c, "bad ping frame"); return; }
        t->k.pings++;
        if (!c->close_sent) ws_frame(t, c, 10, p, n);
        return;
    case 10: /* pong */
        if (!fin || n > 125) { proto_error(t, c, "bad pong frame"); return; }
        return;
    default:
        proto_error(t, c, "reserved opcode");
        return;
    }
}

/* parse as many complete frames as possible; returns bytes consumed */
size_t parse_frames(thr_t *t, conn_t *c, uint8_t *d, size_t len, uint64_t now) {
    size_t off = 0;
    c->need = 0;
    while (conn_alive(c) && len - off >= 2) {
        uint8_t b0 = d[off], b1 = d[off + 1];
        int fin = b0 >> 7, rsv = (b0 >> 4) & 7, op = b0 & 15, masked = b1 >> 7;
        uint64_t pl = b1 & 127;
        size_t h = 2;
        if (pl == 126) {
            if (len - off < 4) { c->need = 4; break; }
            pl = (uint64_t)d[off + 2] << 8 | d[off + 3];
            h = 4;
        } else if (pl == 127) {
            if (len - off < 10) { c->need = 10; break; }
            pl = 0;
            for (int i = 0; i < 8; i++) pl = pl << 8 | d[off + 2 + i];
            h = 10;
            if (pl >> 63) { proto_error(t, c, "64-bit length with MSB set"); return off; }
        }
        if (masked) h += 4;
        /* rsv: 4 = RSV1 (permessage-deflate: first frame of a compressed data message), 2/1 = RSV2/3 */
        if (rsv & 3) { proto_error(t, c, "RSV2/RSV3 set (no such extension negotiated)"); return off; }
        if ((rsv & 4) && !c->pmd) { proto_error(t, c, "RSV1 set (permessage-deflate not negotiated)"); return off; }
        if ((rsv & 4) && op != 1 && op != 2) { proto_error(t, c, "RSV1 on a control or continuation frame"); return off; }
        if (masked) { proto_error(t, c, "server frame is masked"); return off; }
        if (pl > G.max_msg) { proto_error(t, c, "frame too big"); return off; }
        if (op >= 8 && pl > 125) { proto_error(t, c, "control frame > 125 bytes"); return off; }
        if (len - off < h + pl) { c->need = (uint32_t)(h + pl); break; }
        on_frame(t, c, fin, op, rsv >> 2, d + off + h, (size_t)pl, now);
        off += h + (size_t)pl;
    }
    return off;
}

/* ------------------------------------------------------------------ */
void send_handshake(thr_t *t, conn_t *c) {
    uint8_t raw[16];
    for (int i = 0; i < 16; i += 8) { uint64_t r = xrand(t); memcpy(raw + i, &r, 8); }
    char key[32];
    b64enc(raw, 16, key);
    ws_accept_for(key, c->accept);
    char path[1200], req[2600], ext[400] = "";
    g_mode.build_path(c, path, sizeof path);
    if (G.deflate) snprintf(ext, sizeof ext, "Sec-WebSocket-Extensions: %s\r\n", G.deflate_offer);
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n%sUser-Agent: wsload/" WSLOAD_VERSION "\r\n\r\n",
                     path, G.host_hdr, key, ext);
    ob_reserve(c, (size_t)n);
    memcpy(c->ob + c->ob_len, req, (size_t)n);
    c->ob_len += (size_t)n;
    c->st = ST_HS;
    flush_conn(t, c);
}

static bool hdr_has_token(const char *v, size_t vl, const char *tok) {
    size_t tl = strlen(tok);
    for (size_t i = 0; i + tl <= vl; i++)
        if (!strncasecmp(v + i, tok, tl)) return true;
    return false;
}

/* returns header length if complete & valid, 0 if incomplete, -1 on failure */
static long check_handshake(thr_t *t, conn_t *c, const uint8_t *b, size_t len) {
    const char *s = (const char *)b;
    const char *end = memmem(s, len, "\r\n\r\n", 4);
    if (!end) {
        if (len >= HS_MAX) { note_err(t, "handshake response too long (conn %u)", c->idx); return -1; }
        return 0;
    }
    size_t hl = (size_t)(end - s) + 4;
    if (hl < 12 || strncmp(s, "HTTP/1.1 101", 12) != 0) {
        const char *eol = memchr(s, '\r', hl);
        note_err(t, "handshake: expected 101, got '%.*s' (conn %u)", (int)(eol ? eol - s : 40), s, c->idx);
        return -1;
    }
    bool up = false, conn = false, acc = false;
    const char *line = memchr(s, '\n', hl);
    while (line && line + 1 < end) {
        line++;
        const char *eol = memchr(line, '\r', (size_t)(end + 2 - line));
        if (!eol) break;
        const char *colon = memchr(line, ':', (size_t)(eol - line));
        if (colon) {
            size_t nl = (size_t)(colon - line);
            const char *v = colon + 1;
            while (v < eol && (*v == ' ' || *v == '\t')) v++;
            size_t vl = (size_t)(eol - v);
            while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) vl--;
            if (nl == 7 && !strncasecmp(line, "upgrade", 7)) up = hdr_has_token(v, vl, "websocket");
            else if (nl == 10 && !strncasecmp(line, "connection", 10)) conn = hdr_has_token(v, vl, "upgrade");
            else if (nl == 20 && !strncasecmp(line, "sec-websocket-accept", 20)) {
                acc = vl == strlen(c->accept) && !memcmp(v, c->accept, vl);
                if (!acc) note_err(t, "handshake: bad Sec-WebSocket-Accept '%.*s' want '%s'", (int)vl, v, c->accept);
            } else if (nl == 24 && !strncasecmp(line, "sec-websocket-extensions", 24)) {
                if (!G.deflate || c->pmd) {
                    note_err(t, "handshake: server selected an extension we did not offer");
                    return -1;
                }
                if (!pmd_accept(t, c, v, vl)) return -1;
            } else if (nl == 22 && !strncasecmp(line, "sec-websocket-protocol", 22)) {
                note_err(t, "handshake: server selected a subprotocol we did not offer");
                return -1;
            }
        }
        line = memchr(line, '\n', (size_t)(end + 2 - line));
    }
    if (!up || !conn || !acc) {
        note_err(t, "handshake: invalid headers (upgrade=%d connection=%d accept=%d) conn %u", up, conn, acc, c->idx);
        return -1;
    }
    if (G.deflate && !c->pmd && !G.deflate_optional) {
        note_err(t, "handshake: server declined permessage-deflate (conn %u; --deflate-optional accepts that)", c->idx);
        return -1;
    }
    return (long)hl;
}

/* ------------------------------------------------------------------ */
/* readable                                                            */
static void ib_reserve(conn_t *c, size_t want) {
    if (want <= c->ib_cap) return;
    size_t nc = c->ib_cap ? c->ib_cap : 4096;
    while (nc < want) nc *= 2;
    c->ib = realloc(c->ib, nc);
    if (!c->ib) die("out of memory (ib)");
    c->ib_cap = (uint32_t)nc;
}

static void on_readable(thr_t *t, conn_t *c) {
    uint8_t *buf;
    size_t have, cap;
    bool own = c->ib_len > 0 || c->st == ST_HS;
    if (!own) { buf = t->tbuf; have = 0; cap = TBUF_SIZE; }
    else {
        size_t want = (size_t)c->ib_len + 65536;
        if (c->need > want) want = c->need;
        ib_reserve(c, want);
        buf = c->ib; have = c->ib_len; cap = c->ib_cap - c->ib_len;
    }
    ssize_t n = io_recv(t, c, buf + have, cap);
    if (n == 0) {
        if (c->st == ST_HS) { note_err(t, "EOF during handshake (conn %u)", c->idx); conn_fail(t, c, 3); return; }
        if (c->st == ST_CLOSING && c->close_rcvd) { conn_done(t, c); return; }
        if (c->st == ST_CLOSING) { t->k.unclean_close++; conn_done(t, c); return; }
        t->k.eof_err++;
        note_err(t, "EOF without close frame (conn %u)", c->idx);
        conn_fail(t, c, 0);
        return;
    }
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
        if (c->st == ST_HS) { note_err(t, "recv during handshake: %s", strerror(errno)); conn_fail(t, c, errno == ECONNREFUSED ? 1 : 3); return; }
        if (c->st == ST_CLOSING) { t->k.unclean_close++; conn_done(t, c); return; }
        t->k.io_err++;
        note_err(t, "recv(): %s (conn %u)", strerror(errno), c->idx);
        conn_fail(t, c, 0);
        return;
    }
    t->k.bytes_in += (uint64_t)n;
    size_t total = have + (size_t)n;
    uint64_t now = now_ns();
    size_t start = 0;
    if (c->st == ST_HS) {
        long hl = check_handshake(t, c, buf, total);
        if (hl < 0) { conn_fail(t, c, 3); return; }
        if (hl == 0) { c->ib_len = (uint32_t)total; return; }
        c->st = ST_OPEN;
        t->hs_pending--;
        t->k.conn_ok++;
        hrec(&t->conn_lat, now - c->t_start);
        start = (size_t)hl;
        if (g_mode.on_open) g_mode.on_open(t, c);
    }
    size_t used = start + parse_frames(t, c, buf + start, total - start, now);
    if (c->fd < 0) return; /* closed / failed */
    size_t left = total - used;
    if (left == 0) {
        c->ib_len = 0;
        free(c->ib); c->ib = NULL; c->ib_cap = 0; /* next read goes to the shared thread buffer */
    } else if (buf == t->tbuf) {
        size_t want = left > c->need ? left : c->need;
        ib_reserve(c, want);
        memcpy(c->ib, buf + used, left);
        c->ib_len = (uint32_t)left;
    } else {
        memmove(c->ib, c->ib + used, left);
        c->ib_len = (uint32_t)left;
    }
}

/* One non-blocking step of the TLS handshake; the epoll interest follows what OpenSSL waits for. */
static void on_connected(thr_t *t, conn_t *c) {
    if (G.tls) tls_begin(t, c);
    else send_handshake(t, c);
}

static void on_event(thr_t *t, conn_t *c, uint32_t ev) {
    if (c->fd < 0) return;
    if (c->st == ST_CONNECTING) {
        if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
            int err = 0;
            socklen_t el = sizeof err;
            getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
            if (err) { note_err(t, "connect(): %s (conn %u)", strerror(err), c->idx); conn_fail(t, c, err == ECONNREFUSED ? 1 : 4); return; }
            c->wantw = 1; /* registered with EPOLLOUT */
            on_connected(t, c);
        }
        return;
    }
    if (c->st == ST_TLS) { tls_step(t, c); return; }
    /* TLS: a write may be waiting for readability (WANT_READ), so any event retries pending output */
    if (c->ob_off < c->ob_len && ((ev & EPOLLOUT) || c->ssl)) flush_conn(t, c);
    if (c->fd >= 0 && ((ev & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP)) || (c->rd_wants_w && (ev & EPOLLOUT)))) on_readable(t, c);
    /* OpenSSL may hold decrypted or already-read records that epoll cannot see */
    for (int i = 0; i < 64 && c->fd >= 0 && c->ssl && tls_pending(c); i++) on_readable(t, c);
}

void start_connect(thr_t *t, conn_t *c) {
    c->t_start = now_ns();
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) { note_err(t, "socket(): %s", strerror(errno)); conn_fail(t, c, 4); return; }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (G.bind_range > 0) {
        struct sockaddr_in sa = {.sin_family = AF_INET};
        sa.sin_addr.s_addr = htonl(0x7F000001u + (uint32_t)(c->idx % (uint32_t)G.bind_range));
        setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
            note_err(t, "bind(): %s", strerror(errno)); close(fd); conn_fail(t, c, 4); return;
        }
    }
    uint16_t port = G.port;
    if (G.split_port && G.members > 0 && (c->idx % (uint32_t)G.members) % 2 == 1) port = G.split_port;
    struct sockaddr_in da = {.sin_family = AF_INET, .sin_port = htons(port)};
    da.sin_addr.s_addr = htonl(G.dst_ip);
    c->fd = fd;
    c->st = ST_CONNECTING;
    t->hs_pending++;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.ptr = c};
    epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev);
    c->wantw = 1;
    int r = connect(fd, (struct sockaddr *)&da, sizeof da);
    if (r < 0 && errno != EINPROGRESS) {
        note_err(t, "connect(): %s (conn %u)", strerror(errno), c->idx);
        conn_fail(t, c, errno == ECONNREFUSED ? 1 : 4);
        return;
    }
    if (r == 0) on_connected(t, c);
}

/* ------------------------------------------------------------------ */
/* event loop helpers                                                  */
void arm_timer(thr_t *t, uint64_t at_rel) {
    if (t->timer_armed == at_rel) return;
    struct itimerspec its = {0};
    uint64_t abs = at_rel + g_base;
    if (at_rel == 0) abs = 1; /* fire now */
    its.it_value.tv_sec = (time_t)(abs / 1000000000ull);
    its.it_value.tv_nsec = (long)(abs % 1000000000ull);
    timerfd_settime(t->tfd, TFD_TIMER_ABSTIME, &its, NULL);
    t->timer_armed = at_rel;
}

void poll_once(thr_t *t, int timeout_ms) {
    struct epoll_event evs[MAX_EVENTS];
    int n = epoll_wait(t->ep, evs, MAX_EVENTS, timeout_ms);
    for (int i = 0; i < n; i++) {
        if (evs[i].data.ptr == &g_timer_tag) {
            uint64_t x;
            if (read(t->tfd, &x, sizeof x) < 0) { /* spurious */ }
            t->timer_armed = 0;
            continue;
        }
        on_event(t, (conn_t *)evs[i].data.ptr, evs[i].events);
    }
    flush_dirty(t);
}

void close_phase(thr_t *t) {
    uint8_t code[2] = {0x03, 0xE8}; /* 1000 */
    int active = 0;
    for (int i = 0; i < t->nconns; i++) {
        conn_t *c = t->conns[i];
        if (c->st == ST_OPEN) {
            ws_frame(t, c, 8, code, 2);
            c->close_sent = 1;
            c->st = ST_CLOSING;
        }
        if (c->st == ST_CLOSING) active++;
    }
    flush_dirty(t);
    uint64_t deadline = now_ns() + (uint64_t)(G.close_timeout * 1e9);
    while (active > 0 && now_ns() < deadline) {
        poll_once(t, 5);
        active = 0;
        for (int i = 0; i < t->nconns; i++)
            if (t->conns[i]->st == ST_CLOSING) active++;
    }
    for (int i = 0; i < t->nconns; i++) {
        conn_t *c = t->conns[i];
        if (c->st == ST_CLOSING) { t->k.unclean_close++; conn_done(t, c); }
        else if (c->st == ST_OPEN || st_connecting(c->st)) conn_done(t, c);
    }
}

/* Reads HOST[:PORT] and the path of a ws:// or wss:// URL into G; refuses anything but loopback. */
int parse_url(const char *u) {
    if (!strncmp(u, "wss://", 6)) G.tls = 1;
    else if (strncmp(u, "ws://", 5) != 0) { fprintf(stderr, "wsload: only ws:// and wss:// URLs are supported\n"); return -1; }
    const char *h = u + (G.tls ? 6 : 5);
    const char *slash = strchr(h, '/');
    size_t hl = slash ? (size_t)(slash - h) : strlen(h);
    char host[256];
    if (hl == 0 || hl >= sizeof host) return -1;
    memcpy(host, h, hl);
    host[hl] = 0;
    snprintf(G.host_hdr, sizeof G.host_hdr, "%s", host);
    snprintf(G.path, sizeof G.path, "%s", slash ? slash : "/");
    char *colon = strrchr(host, ':');
    G.port = G.tls ? 443 : 80;
    if (colon) { *colon = 0; G.port = (uint16_t)atoi(colon + 1); }
    struct in_addr a;
    /* SNI: the URL's host name; an IP literal is not a valid SNI name, so it sends "localhost" */
    if (!G.sni_given) snprintf(G.sni, sizeof G.sni, "%s", inet_pton(AF_INET, host, &a) == 1 ? "localhost" : host);
    if (!strcmp(host, "localhost")) a.s_addr = htonl(0x7F000001u);
    else if (inet_pton(AF_INET, host, &a) != 1) { fprintf(stderr, "wsload: host must be an IPv4 loopback literal or localhost\n"); return -1; }
    G.dst_ip = ntohl(a.s_addr);
    if ((G.dst_ip >> 24) != 127) { fprintf(stderr, "wsload: refusing non-loopback target %s (only 127.0.0.0/8)\n", host); return -1; }
    return 0;
}

/* ------------------------------------------------------------------ */
void json_str(char *out, size_t cap, const char *s) {
    size_t o = 0;
    for (; *s && o + 3 < cap; s++) {
        if (*s == '"' || *s == '\\') out[o++] = '\\';
        out[o++] = (*s >= 32 && *s < 127) ? *s : '?';
    }
    out[o] = 0;
}

/* ------------------------------------------------------------------ */
static void on_alarm(int s) {
    (void)s;
    static const char m[] = "wsload: hard time limit reached, exiting\n";
    if (write(2, m, sizeof m - 1) < 0) { }
    _exit(4);
}

static void on_int(int s) { (void)s; g_stop = 1; }

/* The hard bound on the whole run: alarm() exits with status 4 after `seconds`; SIGINT and SIGTERM
 * stop the current phase instead. */
void limit_run(double seconds) {
    signal(SIGALRM, on_alarm);
    alarm((unsigned)seconds + 1);
    signal(SIGINT, on_int);
    signal(SIGTERM, on_int);
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
}

/* Raises the soft descriptor limit to the hard one; false (after saying so) when `conns` do not fit. */
bool raise_nofile(long conns) {
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < rl.rlim_max) { rl.rlim_cur = rl.rlim_max; setrlimit(RLIMIT_NOFILE, &rl); getrlimit(RLIMIT_NOFILE, &rl); }
    if ((rlim_t)conns + 64 > rl.rlim_cur) {
        fprintf(stderr, "wsload: need %ld file descriptors but RLIMIT_NOFILE is %lu\n", conns + 64, (unsigned long)rl.rlim_cur);
        return false;
    }
    return true;
}

/* The process's CPU use between two getrusage() samples taken at t0 and t1, in % of one core. */
double cpu_pct(const struct rusage *a, const struct rusage *b, uint64_t t0, uint64_t t1) {
    if (t1 <= t0) return 0;
    double u = (double)(b->ru_utime.tv_sec - a->ru_utime.tv_sec) + (double)(b->ru_utime.tv_usec - a->ru_utime.tv_usec) / 1e6;
    double s = (double)(b->ru_stime.tv_sec - a->ru_stime.tv_sec) + (double)(b->ru_stime.tv_usec - a->ru_stime.tv_usec) / 1e6;
    return 100.0 * (u + s) / ((double)(t1 - t0) / 1e9);
}

void print_hist_json(const char *name, const hist_t *h) {
    printf("\"%s\":{\"n\":%lu,\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p999\":%.1f,\"max\":%.1f,\"mean\":%.1f},", name,
           (unsigned long)h->n, US(hpct(h, .5)), US(hpct(h, .9)), US(hpct(h, .99)), US(hpct(h, .999)), US(h->max),
           h->n ? US(h->sum / h->n) : 0.0);
}

/* An event loop thread: its epoll set with the timer in it, its read buffer and random state. */
void thread_init(thr_t *t, int id, uint64_t seed) {
    t->id = id;
    t->ep = epoll_create1(EPOLL_CLOEXEC);
    t->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &g_timer_tag};
    epoll_ctl(t->ep, EPOLL_CTL_ADD, t->tfd, &ev);
    t->tbuf = malloc(TBUF_SIZE);
    if (t->ep < 0 || t->tfd < 0 || !t->tbuf) die("cannot set up an event loop");
    t->rng = seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(id + 1));
    if (!t->rng) t->rng = 1;
}
