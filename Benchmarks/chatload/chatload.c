/*
 * chatload — load generator for Switchboard's JSON chat protocol on /ws (RFC 6455 client).
 *
 * Single file, libc only (epoll, timerfd), one thread. Build: ./build.sh
 *
 * The WebSocket client parts (SHA-1/base64 accept key, masked framing, incremental frame parser,
 * handshake check, non-blocking connect, write queues, log-bucket histogram, open-loop schedule)
 * are copied from /work/shared/tools/wsload/wsload.c and reduced to one thread; the chat
 * protocol (signup, create, subscribe, send, acks, message events) is new.
 *
 * Modes:
 *   durable  N connections, closed loop: each keeps W `send` requests in flight to its group and
 *            measures ack latency (request written -> `ok` reply) and acked sends/s.
 *   fanout   G groups x M subscribed connections; member 0 of each group sends at an open-loop
 *            total rate R (message k to sender k mod G at t0 + k/R); the other M-1 members must
 *            receive every `message` event of their group, in order; latency is measured from
 *            the scheduled send time (coordinated-omission safe).
 *
 * Set-up: U control connections sign up one user each (PBKDF2 costs the server ~100 ms per
 * signup, so users are few) and create the groups (group g belongs to user g mod U); every
 * data connection then opens /ws?token=<its user's token>.
 *
 * Only loopback targets (127.0.0.0/8). Every phase has a deadline, plus a hard alarm().
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define CHATLOAD_VERSION "1.0"
#define TBUF_SIZE (256 * 1024)
#define MAX_EVENTS 1024
#define HS_MAX 8192
#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define GID_MAX 64
#define SUBSCRIBE_ID 0 /* request id of a data connection's subscribe; sends count from 1 */
#define SIGNUP_ID 0    /* request id of a control connection's signup; creates are 1 + group */

/* ------------------------------------------------------------------ */
/* time                                                                */
static uint64_t g_base;
static inline uint64_t mono_abs(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static inline uint64_t now_ns(void) { return mono_abs() - g_base; }

/* ------------------------------------------------------------------ */
/* SHA-1 + base64 (Sec-WebSocket-Accept), from wsload                  */
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
static void sha1(const uint8_t *data, size_t len, uint8_t out[20]) {
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
static size_t b64enc(const uint8_t *in, size_t n, char *out) {
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
static void ws_accept_for(const char *key, char out[32]) {
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%s" WS_GUID, key);
    uint8_t d[20];
    sha1((const uint8_t *)buf, (size_t)n, d);
    b64enc(d, 20, out);
}

/* ------------------------------------------------------------------ */
/* log-bucket histogram (exact below 256, <0.8% error above), from wsload */
#define H_NB (256 + 56 * 128)
typedef struct { uint64_t c[H_NB]; uint64_t n, min, max, sum; } hist_t;
static inline int hidx(uint64_t v) {
    if (v < 256) return (int)v;
    int e = 63 - __builtin_clzll(v);
    return 256 + (e - 8) * 128 + (int)((v >> (e - 7)) & 127);
}
static uint64_t hval_hi(int i) {
    if (i < 256) return (uint64_t)i;
    int e = (i - 256) / 128 + 8, m = (i - 256) % 128;
    uint64_t lo = (uint64_t)(128 + m) << (e - 7);
    return lo + ((1ull << (e - 7)) - 1);
}
static inline void hrec(hist_t *h, uint64_t v) {
    h->c[hidx(v)]++;
    if (h->n == 0 || v < h->min) h->min = v;
    if (v > h->max) h->max = v;
    h->n++;
    h->sum += v;
}
static uint64_t hpct(const hist_t *h, double q) {
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

/* ------------------------------------------------------------------ */
/* configuration                                                       */
enum { MODE_DURABLE, MODE_FANOUT };
typedef struct {
    char url[1024], host_hdr[300], path[900];
    uint32_t dst_ip;
    uint16_t port;
    int mode;
    int conns, window, groups, members, users, size;
    uint64_t rate;
    double duration, warmup, drain, connect_timeout, close_timeout;
    int max_pending, verbose, quiet;
    double slo_p99_ms;
    size_t max_msg, max_outbuf;
} cfg_t;
static cfg_t G = {
    .mode = -1, .conns = 8, .window = 1, .groups = 0, .members = 50, .users = 1, .size = 64, .rate = 1000,
    .duration = 10, .warmup = 2, .drain = 3, .connect_timeout = 30, .close_timeout = 1, .max_pending = 256,
    .max_msg = 16u << 20, .max_outbuf = 64u << 20,
};

/* ------------------------------------------------------------------ */
/* connections                                                         */
enum { ST_NEW, ST_CONNECTING, ST_HS, ST_OPEN, ST_CLOSING, ST_DONE, ST_FAILED };
enum { ROLE_CONTROL, ROLE_SENDER, ROLE_RECEIVER };

/* a durable request in flight: its id and when it was written */
typedef struct { uint64_t id, t; } slot_t;

/* per receiver: all seq < next seen; win bit i => next+i seen; maxs = max seen + 1 (wsload's rx_t) */
typedef struct { uint64_t next, win, maxs; uint8_t forced; } rx_t;

typedef struct conn {
    int fd;
    uint8_t st, wantw, dirty, close_sent, close_rcvd, in_frag, frag_op, ready, role;
    uint32_t idx, group, user;
    uint64_t t_start;
    char accept[32];
    uint8_t *ib; uint32_t ib_len, ib_cap, need;
    uint8_t *ob; size_t ob_off, ob_len, ob_cap;
    uint8_t *mb; size_t mb_len, mb_cap;
    /* sender state: next request id, requests in flight, next expected ack id (fan-out acks come in order) */
    uint64_t next_id, inflight, next_ack;
    slot_t *slots;
    rx_t rx;
} conn_t;

typedef struct {
    uint64_t conn_ok, conn_fail, fail_refused, fail_timeout, fail_handshake, fail_other;
    uint64_t sent, sent_meas, acked, acked_meas, reply_err, bad_reply, expected, delivered, delivered_meas;
    uint64_t dups, ooo, gaps_forced, wrong_group, self_echo, bad_payload, other_events, binary_msgs;
    uint64_t proto_err, server_close, eof_err, io_err, overflow, skipped, pings, clean_close, unclean_close;
    uint64_t bytes_in, bytes_out, msgs_in;
} ctr_t;

static int g_ep, g_tfd;
static conn_t *g_conns; /* control connections first, then data connections */
static long g_nconns, g_ndata;
static int g_ncontrol;
static ctr_t K;
static hist_t g_lat, g_ack, g_lag, g_hs;
static uint8_t *g_tbuf, *g_pad;
static conn_t **g_dirty;
static int g_ndirty, g_dirty_cap;
static uint64_t g_rng, g_timer_armed;
static int g_hs_pending;
static char g_first_err[256];
static volatile int g_stop;
static char g_timer_tag;
static uint64_t g_t_traffic, g_t_meas, g_t_send_end;
static char (*g_gid)[GID_MAX]; /* group index -> server group id */
static char **g_token;         /* user index -> session token */
static uint32_t *g_nrecv;      /* group -> receivers subscribed when traffic started */
static int g_groups_made, g_users_made;
static char g_email_tag[32];

static inline uint64_t xrand(void) {
    uint64_t x = g_rng;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    g_rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static void note_err(const char *fmt, ...) {
    if (g_first_err[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_first_err, sizeof g_first_err, fmt, ap);
    va_end(ap);
}

static void die(const char *m) { fprintf(stderr, "chatload: %s\n", m); exit(2); }

/* ------------------------------------------------------------------ */
/* buffers & I/O (from wsload)                                         */
static void ob_reserve(conn_t *c, size_t add) {
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

static void mark_dirty(conn_t *c) {
    if (c->dirty) return;
    if (g_ndirty == g_dirty_cap) {
        g_dirty_cap = g_dirty_cap ? g_dirty_cap * 2 : 256;
        g_dirty = realloc(g_dirty, sizeof(conn_t *) * (size_t)g_dirty_cap);
        if (!g_dirty) die("out of memory (dirty)");
    }
    g_dirty[g_ndirty++] = c;
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

/* append one masked client frame (FIN set) */
static void ws_frame(conn_t *c, int op, const uint8_t *p, size_t n) {
    uint8_t hdr[14];
    size_t h = 0;
    hdr[h++] = (uint8_t)(0x80 | op);
    if (n < 126) hdr[h++] = (uint8_t)(0x80 | n);
    else if (n < 65536) { hdr[h++] = 0x80 | 126; hdr[h++] = (uint8_t)(n >> 8); hdr[h++] = (uint8_t)n; }
    else { hdr[h++] = 0x80 | 127; for (int i = 7; i >= 0; i--) hdr[h++] = (uint8_t)((uint64_t)n >> (8 * i)); }
    uint32_t mk = (uint32_t)xrand();
    memcpy(hdr + h, &mk, 4);
    h += 4;
    ob_reserve(c, h + n);
    uint8_t *dst = c->ob + c->ob_len;
    memcpy(dst, hdr, h);
    mask_copy(dst + h, p, n, hdr + h - 4);
    c->ob_len += h + n;
    mark_dirty(c);
}

static void set_events(conn_t *c, int wantw) {
    if (c->fd < 0 || c->wantw == wantw) return;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (wantw ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(g_ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->wantw = (uint8_t)wantw;
}

static void conn_release(conn_t *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    free(c->ib); c->ib = NULL; c->ib_len = c->ib_cap = 0;
    free(c->ob); c->ob = NULL; c->ob_len = c->ob_off = c->ob_cap = 0;
    free(c->mb); c->mb = NULL; c->mb_len = c->mb_cap = 0;
}

/* kind: 1 refused, 2 timeout, 3 handshake, else other (only counted during connect) */
static void conn_fail(conn_t *c, int kind) {
    if (c->st == ST_FAILED || c->st == ST_DONE) return;
    if (c->st == ST_CONNECTING || c->st == ST_HS || c->st == ST_NEW) {
        if (c->st != ST_NEW) g_hs_pending--;
        K.conn_fail++;
        if (kind == 1) K.fail_refused++;
        else if (kind == 2) K.fail_timeout++;
        else if (kind == 3) K.fail_handshake++;
        else K.fail_other++;
    }
    c->st = ST_FAILED;
    conn_release(c);
}

static void conn_done(conn_t *c) {
    if (c->st == ST_FAILED || c->st == ST_DONE) return;
    c->st = ST_DONE;
    conn_release(c);
}

static void flush_conn(conn_t *c) {
    if (c->fd < 0) return;
    while (c->ob_off < c->ob_len) {
        ssize_t n = send(c->fd, c->ob + c->ob_off, c->ob_len - c->ob_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) { c->ob_off += (size_t)n; K.bytes_out += (uint64_t)n; continue; }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { set_events(c, 1); return; }
        K.io_err++;
        note_err("send(): %s (conn %u)", strerror(errno), c->idx);
        conn_fail(c, 0);
        return;
    }
    c->ob_off = c->ob_len = 0;
    if (c->ob_cap > (1u << 20)) { free(c->ob); c->ob = NULL; c->ob_cap = 0; }
    set_events(c, 0);
}

static void flush_dirty(void) {
    for (int i = 0; i < g_ndirty; i++) {
        conn_t *c = g_dirty[i];
        c->dirty = 0;
        flush_conn(c);
    }
    g_ndirty = 0;
}

/* ------------------------------------------------------------------ */
/* small text helpers                                                  */
static inline char *put_u64(char *p, uint64_t v) {
    char tmp[24];
    int n = 0;
    do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) *p++ = tmp[--n];
    return p;
}
static inline char *put_str(char *p, const char *s) {
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}
static inline int parse_u64(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
    const uint8_t *p = *pp;
    uint64_t v = 0;
    int nd = 0;
    while (p < end && *p >= '0' && *p <= '9' && nd < 20) { v = v * 10 + (uint64_t)(*p - '0'); p++; nd++; }
    if (!nd) return 0;
    *out = v; *pp = p;
    return 1;
}
/* the plain string value after `key` ("name":"), copied into out; 0 if absent, escaped or too long */
static int json_str(const uint8_t *p, size_t n, const char *key, char *out, size_t cap) {
    size_t kl = strlen(key);
    const uint8_t *k = memmem(p, n, key, kl);
    if (!k) return 0;
    const uint8_t *v = k + kl, *end = p + n;
    size_t o = 0;
    while (v < end && *v != '"') {
        if (*v == '\\' || o + 1 >= cap) return 0;
        out[o++] = (char)*v++;
    }
    if (v >= end) return 0;
    out[o] = 0;
    return 1;
}

/* payload "p<group> s<seq> t<ns> m<0|1> " + 'x' padding up to size (wsload's shape) */
static size_t make_payload(char *buf, uint32_t pid, uint64_t seq, uint64_t ts, int meas, size_t size) {
    char *p = buf;
    *p++ = 'p'; p = put_u64(p, pid);
    *p++ = ' '; *p++ = 's'; p = put_u64(p, seq);
    *p++ = ' '; *p++ = 't'; p = put_u64(p, ts);
    *p++ = ' '; *p++ = 'm'; *p++ = (char)('0' + meas); *p++ = ' ';
    size_t h = (size_t)(p - buf);
    if (h < size) { memset(p, 'x', size - h); h = size; }
    return h;
}

/* ------------------------------------------------------------------ */
/* chat protocol: requests                                             */
static void send_json(conn_t *c, const char *json, size_t n) { ws_frame(c, 1, (const uint8_t *)json, n); }

static void control_signup(conn_t *c) {
    char req[512];
    int n = snprintf(req, sizeof req,
                     "{\"op\":\"signup\",\"id\":%d,\"email\":\"chatload-%s-%u@example.com\",\"password\":\"chatload-password\","
                     "\"name\":\"chatload %u\"}", SIGNUP_ID, g_email_tag, c->user, c->user);
    send_json(c, req, (size_t)n);
}

static void control_create_groups(conn_t *c) {
    for (int g = (int)c->user; g < G.groups; g += G.users) {
        char req[256];
        int n = snprintf(req, sizeof req, "{\"op\":\"create\",\"id\":%d,\"name\":\"chatload %d\"}", 1 + g, g);
        send_json(c, req, (size_t)n);
    }
}

static void data_subscribe(conn_t *c) {
    char req[256];
    int n = snprintf(req, sizeof req, "{\"op\":\"subscribe\",\"id\":%d,\"group\":\"%s\",\"limit\":1}", SUBSCRIBE_ID, g_gid[c->group]);
    send_json(c, req, (size_t)n);
}

/* one `send` request with id `id` and `text` as its text (no characters that need escaping) */
static void send_request(conn_t *c, uint64_t id, const char *text, size_t tn) {
    char req[1024 + 256];
    char *p = req;
    p = put_str(p, "{\"op\":\"send\",\"id\":");
    p = put_u64(p, id);
    p = put_str(p, ",\"group\":\"");
    p = put_str(p, g_gid[c->group]);
    p = put_str(p, "\",\"text\":\"");
    memcpy(p, text, tn);
    p += tn;
    p = put_str(p, "\"}");
    send_json(c, req, (size_t)(p - req));
}

/* durable mode: fill the window of closed-loop requests */
static void durable_fill(conn_t *c, uint64_t now) {
    if (c->st != ST_OPEN || now >= g_t_send_end || now < g_t_traffic) return;
    char text[1024];
    while (c->inflight < (uint64_t)G.window) {
        uint64_t id = c->next_id++;
        char *p = text;
        *p++ = 'd'; p = put_u64(p, c->idx); *p++ = ' '; *p++ = 's'; p = put_u64(p, id); *p++ = ' ';
        size_t h = (size_t)(p - text);
        if (h < (size_t)G.size) { memset(p, 'x', (size_t)G.size - h); h = (size_t)G.size; }
        c->slots[id % (uint64_t)G.window] = (slot_t){id, now};
        c->inflight++;
        send_request(c, id, text, h);
        K.sent++;
        if (now >= g_t_meas) K.sent_meas++;
    }
}

/* ------------------------------------------------------------------ */
/* chat protocol: replies and events                                   */
static void on_ack(conn_t *c, uint64_t id, bool ok, const uint8_t *p, size_t n, uint64_t now) {
    if (G.mode == MODE_DURABLE) {
        slot_t *s = &c->slots[id % (uint64_t)G.window];
        if (c->inflight == 0 || s->id != id || s->t == 0) {
            K.bad_reply++;
            note_err("reply with unexpected id %lu on conn %u", (unsigned long)id, c->idx);
            return;
        }
        uint64_t sent_at = s->t;
        s->t = 0;
        c->inflight--;
        if (ok) {
            K.acked++;
            if (now >= g_t_meas && now < g_t_send_end) { K.acked_meas++; hrec(&g_ack, now - sent_at); }
        }
        durable_fill(c, now);
    } else {
        if (id != c->next_ack) {
            K.bad_reply++;
            note_err("ack %lu out of order on conn %u (expected %lu)", (unsigned long)id, c->idx, (unsigned long)c->next_ack);
        }
        c->next_ack = id + 1;
        if (c->inflight) c->inflight--;
        /* request id = seq + 1; message k = seq * G + group was scheduled at t0 + k / R */
        uint64_t k = (id - 1) * (uint64_t)G.groups + c->group;
        uint64_t sched = g_t_traffic + (uint64_t)((unsigned __int128)k * 1000000000ull / G.rate);
        if (ok) {
            K.acked++;
            if (sched >= g_t_meas) { K.acked_meas++; hrec(&g_ack, now > sched ? now - sched : 0); }
        }
    }
    if (!ok) {
        char code[64] = "?", msg[160] = "?";
        json_str(p, n, "\"code\":\"", code, sizeof code);
        json_str(p, n, "\"message\":\"", msg, sizeof msg);
        K.reply_err++;
        note_err("error reply to request %lu on conn %u: %s: %s", (unsigned long)id, c->idx, code, msg);
    }
}

static void on_event_message(conn_t *c, const uint8_t *p, size_t n, uint64_t now) {
    char gid[GID_MAX];
    if (!json_str(p, n, "\"group\":\"", gid, sizeof gid)) goto bad;
    if (c->role == ROLE_SENDER) { K.self_echo++; note_err("sender conn %u received its own message", c->idx); return; }
    if (c->role != ROLE_RECEIVER) { K.other_events++; return; }
    if (strcmp(gid, g_gid[c->group]) != 0) { K.wrong_group++; note_err("event for group %s on a conn of %s", gid, g_gid[c->group]); return; }
    const uint8_t *t = memmem(p, n, "\"text\":\"", 8);
    if (!t) goto bad;
    const uint8_t *q = t + 8, *end = p + n;
    const uint8_t *tq = memchr(q, '"', (size_t)(end - q));
    if (!tq) goto bad;
    const uint8_t *tstart = q;
    end = tq;
    uint64_t pid, seq, ts;
    if (q >= end || *q++ != 'p' || !parse_u64(&q, end, &pid)) goto bad;
    if (end - q < 2 || q[0] != ' ' || q[1] != 's') goto bad;
    q += 2;
    if (!parse_u64(&q, end, &seq)) goto bad;
    if (end - q < 2 || q[0] != ' ' || q[1] != 't') goto bad;
    q += 2;
    if (!parse_u64(&q, end, &ts)) goto bad;
    if (end - q < 4 || q[0] != ' ' || q[1] != 'm' || (q[2] != '0' && q[2] != '1') || q[3] != ' ') goto bad;
    int meas = q[2] == '1';
    q += 4;
    size_t h = (size_t)(q - tstart), tn = (size_t)(end - tstart);
    size_t want = h < (size_t)G.size ? (size_t)G.size : h;
    if (tn != want || (tn > h && memcmp(q, g_pad, tn - h) != 0)) goto bad;
    if (pid != c->group) { K.wrong_group++; note_err("message of group %lu delivered to group %u", (unsigned long)pid, c->group); return; }
    rx_t *r = &c->rx;
    if (seq < r->next) {
        if (r->forced) { K.ooo++; K.delivered++; return; }
        K.dups++;
        return;
    }
    uint64_t d = seq - r->next;
    if (d >= 64) {
        uint64_t sh = d - 63;
        r->win = sh >= 64 ? 0 : r->win >> sh;
        r->next += sh;
        d = 63;
        r->forced = 1;
        K.gaps_forced++;
    }
    if (r->win & (1ull << d)) { K.dups++; return; }
    r->win |= 1ull << d;
    if (seq + 1 < r->maxs) K.ooo++;
    if (seq + 1 > r->maxs) r->maxs = seq + 1;
    while (r->win & 1) { r->win >>= 1; r->next++; }
    K.delivered++;
    if (meas) { K.delivered_meas++; hrec(&g_lat, now > ts ? now - ts : 0); }
    return;
bad:
    K.bad_payload++;
    note_err("unexpected message event (%zu bytes) on conn %u: %.80s", n, c->idx, (const char *)p);
}

static void on_control_reply(conn_t *c, uint64_t id, bool ok, const uint8_t *p, size_t n) {
    if (!ok) {
        char msg[160] = "?";
        json_str(p, n, "\"message\":\"", msg, sizeof msg);
        K.reply_err++;
        note_err("set-up request %lu of user %u failed: %s", (unsigned long)id, c->user, msg);
        return;
    }
    if (id == SIGNUP_ID) {
        char tok[1024];
        if (!json_str(p, n, "\"token\":\"", tok, sizeof tok)) { K.bad_reply++; note_err("signup reply without token"); return; }
        g_token[c->user] = strdup(tok);
        g_users_made++;
        control_create_groups(c);
        return;
    }
    uint64_t g = id - 1;
    if (id < 1 || g >= (uint64_t)G.groups || !json_str(p, n, "\"group\":{\"id\":\"", g_gid[g], GID_MAX)) {
        K.bad_reply++;
        note_err("unexpected set-up reply: %.80s", (const char *)p);
        return;
    }
    g_groups_made++;
}

static void on_text(conn_t *c, const uint8_t *p, size_t n, uint64_t now) {
    /* every server frame is {"op":"<name>",...}; replies carry "id" right after "op" */
    static const char pre[] = "{\"op\":\"";
    if (n < sizeof pre + 1 || memcmp(p, pre, sizeof pre - 1) != 0) {
        K.bad_reply++;
        note_err("frame is not a chat protocol object: %.60s", (const char *)p);
        return;
    }
    const uint8_t *op = p + sizeof pre - 1, *end = p + n;
    const uint8_t *oq = memchr(op, '"', (size_t)(end - op));
    if (!oq) { K.bad_reply++; return; }
    size_t ol = (size_t)(oq - op);
    bool ok = ol == 2 && !memcmp(op, "ok", 2), err = ol == 5 && !memcmp(op, "error", 5);
    if (ok || err) {
        const uint8_t *q = oq + 1;
        uint64_t id;
        if (end - q < 6 || memcmp(q, ",\"id\":", 6) != 0 || (q += 6, !parse_u64(&q, end, &id))) {
            char msg[160] = "?";
            json_str(p, n, "\"message\":\"", msg, sizeof msg);
            K.reply_err++;
            note_err("reply without id on conn %u: %s", c->idx, msg);
            return;
        }
        if (c->role == ROLE_CONTROL) { on_control_reply(c, id, ok, p, n); return; }
        if (id == SUBSCRIBE_ID && !c->ready) {
            if (ok) c->ready = 1;
            else { K.reply_err++; note_err("subscribe failed on conn %u: %.120s", c->idx, (const char *)p); }
            return;
        }
        on_ack(c, id, ok, p, n, now);
        return;
    }
    if (ol == 7 && !memcmp(op, "message", 7)) { on_event_message(c, p, n, now); return; }
    K.other_events++; /* presence, member, typing, receipt, pong */
}

/* ------------------------------------------------------------------ */
/* frames (from wsload)                                                */
static bool conn_alive(conn_t *c) { return c->st == ST_OPEN || c->st == ST_CLOSING; }

static void proto_error(conn_t *c, const char *why) {
    K.proto_err++;
    note_err("protocol error on conn %u: %s", c->idx, why);
    if (c->fd >= 0 && !c->close_sent) {
        uint8_t b[2] = {0x03, 0xEA};
        ws_frame(c, 8, b, 2);
        c->close_sent = 1;
        if (send(c->fd, c->ob + c->ob_off, c->ob_len - c->ob_off, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) { }
    }
    conn_fail(c, 0);
}

static bool mb_append(conn_t *c, const uint8_t *p, size_t n) {
    if (c->mb_len + n > G.max_msg) { proto_error(c, "message too big"); return false; }
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

static void on_message(conn_t *c, int op, const uint8_t *p, size_t n, uint64_t now) {
    K.msgs_in++;
    if (op == 1) on_text(c, p, n, now);
    else { K.binary_msgs++; K.bad_reply++; note_err("binary message on conn %u", c->idx); }
}

static void on_frame(conn_t *c, int fin, int op, uint8_t *p, size_t n, uint64_t now) {
    switch (op) {
    case 0:
        if (!c->in_frag) { proto_error(c, "continuation without start"); return; }
        if (!mb_append(c, p, n)) return;
        if (fin) {
            c->in_frag = 0;
            on_message(c, c->frag_op, c->mb, c->mb_len, now);
            c->mb_len = 0;
            if (c->mb_cap > 65536) { free(c->mb); c->mb = NULL; c->mb_cap = 0; }
        }
        return;
    case 1: case 2:
        if (c->in_frag) { proto_error(c, "new data frame inside fragmented message"); return; }
        if (fin) { on_message(c, op, p, n, now); return; }
        c->in_frag = 1; c->frag_op = (uint8_t)op; c->mb_len = 0;
        mb_append(c, p, n);
        return;
    case 8: {
        if (!fin || n > 125 || n == 1) { proto_error(c, "bad close frame"); return; }
        c->close_rcvd = 1;
        if (!c->close_sent) {
            K.server_close++;
            uint16_t code = n >= 2 ? (uint16_t)(p[0] << 8 | p[1]) : 0;
            note_err("server closed conn %u (code %u: %.*s)", c->idx, code, (int)(n > 2 ? n - 2 : 0), (const char *)p + 2);
            ws_frame(c, 8, p, n >= 2 ? 2 : 0);
            c->close_sent = 1;
            c->st = ST_CLOSING;
            flush_conn(c);
        } else {
            K.clean_close++;
            conn_done(c);
        }
        return;
    }
    case 9:
        if (!fin || n > 125) { proto_error(c, "bad ping frame"); return; }
        K.pings++;
        if (!c->close_sent) ws_frame(c, 10, p, n);
        return;
    case 10:
        if (!fin || n > 125) { proto_error(c, "bad pong frame"); return; }
        return;
    default:
        proto_error(c, "reserved opcode");
        return;
    }
}

static size_t parse_frames(conn_t *c, uint8_t *d, size_t len, uint64_t now) {
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
            if (pl >> 63) { proto_error(c, "64-bit length with MSB set"); return off; }
        }
        if (rsv) { proto_error(c, "RSV bits set (no extension negotiated)"); return off; }
        if (masked) { proto_error(c, "server frame is masked"); return off; }
        if (pl > G.max_msg) { proto_error(c, "frame too big"); return off; }
        if (op >= 8 && pl > 125) { proto_error(c, "control frame > 125 bytes"); return off; }
        if (len - off < h + pl) { c->need = (uint32_t)(h + pl); break; }
        on_frame(c, fin, op, d + off + h, (size_t)pl, now);
        off += h + (size_t)pl;
    }
    return off;
}

/* ------------------------------------------------------------------ */
/* handshake (from wsload; the path carries the user's token)          */
static void send_handshake(conn_t *c) {
    uint8_t raw[16];
    for (int i = 0; i < 16; i += 8) { uint64_t r = xrand(); memcpy(raw + i, &r, 8); }
    char key[32];
    b64enc(raw, 16, key);
    ws_accept_for(key, c->accept);
    char req[4096];
    const char *tok = c->role == ROLE_CONTROL ? NULL : g_token[c->user];
    int n = snprintf(req, sizeof req,
                     "GET %s%s%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nUser-Agent: chatload/" CHATLOAD_VERSION "\r\n\r\n",
                     G.path, tok ? (strchr(G.path, '?') ? "&token=" : "?token=") : "", tok ? tok : "", G.host_hdr, key);
    ob_reserve(c, (size_t)n);
    memcpy(c->ob + c->ob_len, req, (size_t)n);
    c->ob_len += (size_t)n;
    c->st = ST_HS;
    flush_conn(c);
}

static bool hdr_has_token(const char *v, size_t vl, const char *tok) {
    size_t tl = strlen(tok);
    for (size_t i = 0; i + tl <= vl; i++)
        if (!strncasecmp(v + i, tok, tl)) return true;
    return false;
}

static long check_handshake(conn_t *c, const uint8_t *b, size_t len) {
    const char *s = (const char *)b;
    const char *end = memmem(s, len, "\r\n\r\n", 4);
    if (!end) {
        if (len >= HS_MAX) { note_err("handshake response too long (conn %u)", c->idx); return -1; }
        return 0;
    }
    size_t hl = (size_t)(end - s) + 4;
    if (hl < 12 || strncmp(s, "HTTP/1.1 101", 12) != 0) {
        const char *eol = memchr(s, '\r', hl);
        note_err("handshake: expected 101, got '%.*s' (conn %u)", (int)(eol ? eol - s : 40), s, c->idx);
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
                if (!acc) note_err("handshake: bad Sec-WebSocket-Accept '%.*s' want '%s'", (int)vl, v, c->accept);
            } else if (nl == 24 && !strncasecmp(line, "sec-websocket-extensions", 24)) {
                note_err("handshake: server selected an extension we did not offer");
                return -1;
            }
        }
        line = memchr(line, '\n', (size_t)(end + 2 - line));
    }
    if (!up || !conn || !acc) {
        note_err("handshake: invalid headers (upgrade=%d connection=%d accept=%d) conn %u", up, conn, acc, c->idx);
        return -1;
    }
    return (long)hl;
}

/* the connection just opened: control connections sign up, receivers and senders subscribe */
static void on_open(conn_t *c) {
    if (c->role == ROLE_CONTROL) control_signup(c);
    else if (G.mode == MODE_FANOUT) data_subscribe(c);
    else c->ready = 1;
}

/* ------------------------------------------------------------------ */
/* event loop (from wsload)                                            */
static void ib_reserve(conn_t *c, size_t want) {
    if (want <= c->ib_cap) return;
    size_t nc = c->ib_cap ? c->ib_cap : 4096;
    while (nc < want) nc *= 2;
    c->ib = realloc(c->ib, nc);
    if (!c->ib) die("out of memory (ib)");
    c->ib_cap = (uint32_t)nc;
}

static void on_readable(conn_t *c) {
    uint8_t *buf;
    size_t have, cap;
    bool own = c->ib_len > 0 || c->st == ST_HS;
    if (!own) { buf = g_tbuf; have = 0; cap = TBUF_SIZE; }
    else {
        size_t want = (size_t)c->ib_len + 65536;
        if (c->need > want) want = c->need;
        ib_reserve(c, want);
        buf = c->ib; have = c->ib_len; cap = c->ib_cap - c->ib_len;
    }
    ssize_t n = recv(c->fd, buf + have, cap, MSG_DONTWAIT);
    if (n == 0) {
        if (c->st == ST_HS) { note_err("EOF during handshake (conn %u)", c->idx); conn_fail(c, 3); return; }
        if (c->st == ST_CLOSING && c->close_rcvd) { conn_done(c); return; }
        if (c->st == ST_CLOSING) { K.unclean_close++; conn_done(c); return; }
        K.eof_err++;
        note_err("EOF without close frame (conn %u)", c->idx);
        conn_fail(c, 0);
        return;
    }
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
        if (c->st == ST_HS) { note_err("recv during handshake: %s", strerror(errno)); conn_fail(c, errno == ECONNREFUSED ? 1 : 3); return; }
        if (c->st == ST_CLOSING) { K.unclean_close++; conn_done(c); return; }
        K.io_err++;
        note_err("recv(): %s (conn %u)", strerror(errno), c->idx);
        conn_fail(c, 0);
        return;
    }
    K.bytes_in += (uint64_t)n;
    size_t total = have + (size_t)n;
    uint64_t now = now_ns();
    size_t start = 0;
    if (c->st == ST_HS) {
        long hl = check_handshake(c, buf, total);
        if (hl < 0) { conn_fail(c, 3); return; }
        if (hl == 0) { c->ib_len = (uint32_t)total; return; }
        c->st = ST_OPEN;
        g_hs_pending--;
        K.conn_ok++;
        hrec(&g_hs, now - c->t_start);
        start = (size_t)hl;
        on_open(c);
    }
    size_t used = start + parse_frames(c, buf + start, total - start, now);
    if (c->fd < 0) return;
    size_t left = total - used;
    if (left == 0) {
        c->ib_len = 0;
        free(c->ib); c->ib = NULL; c->ib_cap = 0;
    } else if (buf == g_tbuf) {
        size_t want = left > c->need ? left : c->need;
        ib_reserve(c, want);
        memcpy(c->ib, buf + used, left);
        c->ib_len = (uint32_t)left;
    } else {
        memmove(c->ib, c->ib + used, left);
        c->ib_len = (uint32_t)left;
    }
}

static void on_event(conn_t *c, uint32_t ev) {
    if (c->fd < 0) return;
    if (c->st == ST_CONNECTING) {
        if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
            int err = 0;
            socklen_t el = sizeof err;
            getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
            if (err) { note_err("connect(): %s (conn %u)", strerror(err), c->idx); conn_fail(c, err == ECONNREFUSED ? 1 : 4); return; }
            c->wantw = 1;
            send_handshake(c);
        }
        return;
    }
    if ((ev & EPOLLOUT) && c->ob_off < c->ob_len) flush_conn(c);
    if (c->fd >= 0 && (ev & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP))) on_readable(c);
}

static void start_connect(conn_t *c) {
    c->t_start = now_ns();
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) { note_err("socket(): %s", strerror(errno)); conn_fail(c, 4); return; }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in da = {.sin_family = AF_INET, .sin_port = htons(G.port)};
    da.sin_addr.s_addr = htonl(G.dst_ip);
    c->fd = fd;
    c->st = ST_CONNECTING;
    g_hs_pending++;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.ptr = c};
    epoll_ctl(g_ep, EPOLL_CTL_ADD, fd, &ev);
    c->wantw = 1;
    int r = connect(fd, (struct sockaddr *)&da, sizeof da);
    if (r < 0 && errno != EINPROGRESS) {
        note_err("connect(): %s (conn %u)", strerror(errno), c->idx);
        conn_fail(c, errno == ECONNREFUSED ? 1 : 4);
        return;
    }
    if (r == 0) send_handshake(c);
}

static void arm_timer(uint64_t at_rel) {
    if (g_timer_armed == at_rel) return;
    struct itimerspec its = {0};
    uint64_t abs = at_rel + g_base;
    if (at_rel == 0) abs = 1;
    its.it_value.tv_sec = (time_t)(abs / 1000000000ull);
    its.it_value.tv_nsec = (long)(abs % 1000000000ull);
    timerfd_settime(g_tfd, TFD_TIMER_ABSTIME, &its, NULL);
    g_timer_armed = at_rel;
}

static void poll_once(int timeout_ms) {
    struct epoll_event evs[MAX_EVENTS];
    int n = epoll_wait(g_ep, evs, MAX_EVENTS, timeout_ms);
    for (int i = 0; i < n; i++) {
        if (evs[i].data.ptr == &g_timer_tag) {
            uint64_t x;
            if (read(g_tfd, &x, sizeof x) < 0) { }
            g_timer_armed = 0;
            continue;
        }
        on_event((conn_t *)evs[i].data.ptr, evs[i].events);
    }
    flush_dirty();
}

/* ------------------------------------------------------------------ */
/* phases                                                              */

/* opens connections [from, to) and waits until each is ready (or failed), or `deadline` */
static void connect_phase(long from, long to, uint64_t deadline, bool (*done)(void)) {
    long next = from;
    uint64_t last_scan = 0, lastp = 0;
    const uint64_t to_ns = (uint64_t)(G.connect_timeout * 1e9);
    while (!g_stop) {
        uint64_t now = now_ns();
        while (next < to && g_hs_pending < G.max_pending) start_connect(&g_conns[next++]);
        if (next >= to && g_hs_pending == 0 && done()) break;
        if (now >= deadline) { note_err("set-up did not finish within the connect timeout"); break; }
        if (now - last_scan > 50000000ull) {
            last_scan = now;
            for (long i = from; i < next; i++) {
                conn_t *c = &g_conns[i];
                if ((c->st == ST_CONNECTING || c->st == ST_HS) && now > c->t_start && now - c->t_start > to_ns) {
                    note_err("connect/handshake timeout (conn %u)", c->idx);
                    conn_fail(c, 2);
                }
            }
        }
        poll_once(20);
        if (G.verbose && now - lastp > 1000000000ull) {
            lastp = now;
            fprintf(stderr, "chatload: connecting... started=%ld ok=%lu fail=%lu pending=%d\n", next - from,
                    (unsigned long)K.conn_ok, (unsigned long)K.conn_fail, g_hs_pending);
        }
    }
}

static bool setup_done(void) {
    int live = 0;
    for (int i = 0; i < g_ncontrol; i++) live += g_conns[i].st == ST_OPEN;
    return g_groups_made == G.groups || live < g_ncontrol || K.reply_err || K.bad_reply;
}

static bool data_ready(void) {
    for (long i = g_ncontrol; i < g_nconns; i++) {
        conn_t *c = &g_conns[i];
        if (c->st == ST_OPEN && !c->ready) return false;
    }
    return true;
}

static void freeze_groups(void) {
    for (long i = g_ncontrol; i < g_nconns; i++) {
        conn_t *c = &g_conns[i];
        if (c->role == ROLE_RECEIVER && c->st == ST_OPEN && c->ready) g_nrecv[c->group]++;
    }
}

static conn_t *sender_of(uint32_t g) { return &g_conns[g_ncontrol + (long)g * G.members]; }

static void fanout_publish(conn_t *c, uint64_t sched, uint64_t now, char *scratch) {
    if (c->st != ST_OPEN || !c->ready) { K.skipped++; return; }
    if (c->ob_len - c->ob_off > G.max_outbuf) {
        K.overflow++;
        note_err("sender of group %u: %zu bytes unsent (server not reading)", c->group, c->ob_len - c->ob_off);
        return;
    }
    int meas = sched >= g_t_meas;
    uint64_t seq = c->next_id - 1;
    size_t n = make_payload(scratch, c->group, seq, sched, meas, (size_t)G.size);
    send_request(c, c->next_id++, scratch, n);
    c->inflight++;
    K.sent++;
    K.expected += g_nrecv[c->group];
    if (meas) { K.sent_meas++; hrec(&g_lag, now > sched ? now - sched : 0); }
}

static void traffic_phase(void) {
    char *scratch = malloc((size_t)G.size + 128);
    uint64_t k = 0;
    if (G.mode == MODE_DURABLE)
        for (long i = g_ncontrol; i < g_nconns; i++) durable_fill(&g_conns[i], now_ns());
    for (;;) {
        uint64_t now = now_ns();
        if (g_stop) break;
        if (G.mode == MODE_FANOUT) {
            for (;;) {
                uint64_t sched = g_t_traffic + (uint64_t)((unsigned __int128)k * 1000000000ull / G.rate);
                if (sched > now || sched >= g_t_send_end) break;
                fanout_publish(sender_of((uint32_t)(k % (uint64_t)G.groups)), sched, now, scratch);
                k++;
            }
        }
        flush_dirty();
        if (now >= g_t_send_end) break;
        uint64_t wake = g_t_send_end;
        if (G.mode == MODE_FANOUT) {
            uint64_t sched = g_t_traffic + (uint64_t)((unsigned __int128)k * 1000000000ull / G.rate);
            if (sched < wake) wake = sched;
        }
        arm_timer(wake);
        poll_once(100);
        if (G.verbose) {
            static uint64_t lastp;
            uint64_t n2 = now_ns();
            if (n2 - lastp > 1000000000ull) {
                lastp = n2;
                fprintf(stderr, "chatload: t=%.1fs sent=%lu acked=%lu delivered=%lu expected=%lu\n", (double)(n2 - g_t_traffic) / 1e9,
                        (unsigned long)K.sent, (unsigned long)K.acked, (unsigned long)K.delivered, (unsigned long)K.expected);
            }
        }
    }
    free(scratch);
}

static uint64_t outstanding_acks(void) {
    uint64_t n = 0;
    for (long i = g_ncontrol; i < g_nconns; i++)
        if (g_conns[i].st == ST_OPEN) n += g_conns[i].inflight;
    return n;
}

static void drain_phase(void) {
    uint64_t deadline = g_t_send_end + (uint64_t)(G.drain * 1e9);
    while (!g_stop && now_ns() < deadline) {
        if (K.delivered >= K.expected && outstanding_acks() == 0) break;
        poll_once(5);
    }
}

static void close_phase(void) {
    uint8_t code[2] = {0x03, 0xE8};
    int active = 0;
    for (long i = 0; i < g_nconns; i++) {
        conn_t *c = &g_conns[i];
        if (c->st == ST_OPEN) {
            ws_frame(c, 8, code, 2);
            c->close_sent = 1;
            c->st = ST_CLOSING;
        }
        if (c->st == ST_CLOSING) active++;
    }
    flush_dirty();
    uint64_t deadline = now_ns() + (uint64_t)(G.close_timeout * 1e9);
    while (active > 0 && now_ns() < deadline) {
        poll_once(5);
        active = 0;
        for (long i = 0; i < g_nconns; i++)
            if (g_conns[i].st == ST_CLOSING) active++;
    }
    for (long i = 0; i < g_nconns; i++) {
        conn_t *c = &g_conns[i];
        if (c->st == ST_CLOSING) { K.unclean_close++; conn_done(c); }
        else if (c->st == ST_OPEN || c->st == ST_CONNECTING || c->st == ST_HS) conn_done(c);
    }
}

/* ------------------------------------------------------------------ */
/* CLI                                                                 */
static void usage(FILE *f) {
    fprintf(f,
"chatload " CHATLOAD_VERSION " - load generator for Switchboard's JSON protocol on /ws (loopback only)\n"
"\n"
"durable: chatload durable --url ws://127.0.0.1:PORT/ws --conns N [--window W] [--groups G] [--users U]\n"
"fanout:  chatload fanout  --url ws://127.0.0.1:PORT/ws --groups G --members M --rate R [--users U]\n"
"\n"
"  --url U               ws://HOST[:PORT]/ws; HOST must be 127.x.x.x or localhost\n"
"  --conns N             durable: sender connections (default 8); connection i sends to group i %% G\n"
"  --window W            durable: requests in flight per connection (default 1)\n"
"  --groups G            groups (durable default: one per connection; fanout: required)\n"
"  --members M           fanout: subscribed connections per group, member 0 sends (default 50)\n"
"  --rate R              fanout: total sends/s over all senders, open loop (default 1000)\n"
"  --users U             users signed up for the run (default 1); group g belongs to user g %% U\n"
"  --size B              text bytes, padded with 'x' (default 64)\n"
"  --duration S          measured seconds (default 10); --warmup S unmeasured seconds first (default 2)\n"
"  --drain S             max seconds to wait for outstanding acks and deliveries (default 3)\n"
"  --connect-timeout S   bound on set-up and connecting (default 30); --max-pending N handshakes (256)\n"
"  --slo-p99-ms X        exit 3 if the p99 (fanout: delivery, durable: ack) exceeds X ms\n"
"  -v/--verbose, -q/--quiet (no human summary)\n"
"\n"
"Output: human summary on stderr, one JSON line on stdout.\n"
"Exit: 0 ok; 1 failed connections, error replies, lost acks or deliveries, order/duplicate/payload\n"
"      errors, protocol errors or unexpected closes; 2 usage; 3 SLO missed; 4 hard time limit.\n");
}

static int parse_url(const char *u) {
    if (strncmp(u, "ws://", 5) != 0) { fprintf(stderr, "chatload: only ws:// URLs are supported\n"); return -1; }
    const char *h = u + 5;
    const char *slash = strchr(h, '/');
    size_t hl = slash ? (size_t)(slash - h) : strlen(h);
    char host[256];
    if (hl == 0 || hl >= sizeof host) return -1;
    memcpy(host, h, hl);
    host[hl] = 0;
    snprintf(G.host_hdr, sizeof G.host_hdr, "%s", host);
    snprintf(G.path, sizeof G.path, "%s", slash ? slash : "/ws");
    char *colon = strrchr(host, ':');
    G.port = 80;
    if (colon) { *colon = 0; G.port = (uint16_t)atoi(colon + 1); }
    struct in_addr a;
    if (!strcmp(host, "localhost")) a.s_addr = htonl(0x7F000001u);
    else if (inet_pton(AF_INET, host, &a) != 1) { fprintf(stderr, "chatload: host must be an IPv4 loopback literal or localhost\n"); return -1; }
    G.dst_ip = ntohl(a.s_addr);
    if ((G.dst_ip >> 24) != 127) { fprintf(stderr, "chatload: refusing non-loopback target %s (only 127.0.0.0/8)\n", host); return -1; }
    return 0;
}

static void on_alarm(int s) {
    (void)s;
    static const char m[] = "chatload: hard time limit reached, exiting\n";
    if (write(2, m, sizeof m - 1) < 0) { }
    _exit(4);
}

static void on_int(int s) { (void)s; g_stop = 1; }

#define US(v) ((double)(v) / 1000.0)
static void print_hist_json(const char *name, const hist_t *h) {
    printf("\"%s\":{\"n\":%lu,\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p999\":%.1f,\"max\":%.1f,\"mean\":%.1f},", name,
           (unsigned long)h->n, US(hpct(h, .5)), US(hpct(h, .9)), US(hpct(h, .99)), US(hpct(h, .999)), US(h->max),
           h->n ? US(h->sum / h->n) : 0.0);
}

int main(int argc, char **argv) {
    static struct option opts[] = {
        {"url", 1, 0, 'u'}, {"conns", 1, 0, 'n'}, {"window", 1, 0, 'w'}, {"groups", 1, 0, 'g'}, {"members", 1, 0, 'm'},
        {"rate", 1, 0, 'R'}, {"users", 1, 0, 'U'}, {"size", 1, 0, 's'}, {"duration", 1, 0, 'd'}, {"warmup", 1, 0, 'W'},
        {"drain", 1, 0, 'D'}, {"connect-timeout", 1, 0, 'T'}, {"max-pending", 1, 0, 'P'}, {"slo-p99-ms", 1, 0, 'S'},
        {"verbose", 0, 0, 'v'}, {"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    if (argc < 2) { usage(stderr); return 2; }
    if (!strcmp(argv[1], "durable")) G.mode = MODE_DURABLE;
    else if (!strcmp(argv[1], "fanout")) G.mode = MODE_FANOUT;
    else if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) { usage(stdout); return 0; }
    else { usage(stderr); return 2; }
    optind = 2;
    int o;
    while ((o = getopt_long(argc, argv, "vqh", opts, NULL)) != -1) {
        switch (o) {
        case 'u': snprintf(G.url, sizeof G.url, "%s", optarg); break;
        case 'n': G.conns = atoi(optarg); break;
        case 'w': G.window = atoi(optarg); break;
        case 'g': G.groups = atoi(optarg); break;
        case 'm': G.members = atoi(optarg); break;
        case 'R': G.rate = strtoull(optarg, NULL, 10); break;
        case 'U': G.users = atoi(optarg); break;
        case 's': G.size = atoi(optarg); break;
        case 'd': G.duration = atof(optarg); break;
        case 'W': G.warmup = atof(optarg); break;
        case 'D': G.drain = atof(optarg); break;
        case 'T': G.connect_timeout = atof(optarg); break;
        case 'P': G.max_pending = atoi(optarg); break;
        case 'S': G.slo_p99_ms = atof(optarg); break;
        case 'v': G.verbose = 1; break;
        case 'q': G.quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    g_base = mono_abs();
    if (!G.url[0]) { usage(stderr); return 2; }
    if (parse_url(G.url) < 0) return 2;
    if (G.mode == MODE_DURABLE) {
        if (G.conns < 1 || G.window < 1) { fprintf(stderr, "chatload: --conns and --window must be >= 1\n"); return 2; }
        if (G.groups <= 0) G.groups = G.conns;
        g_ndata = G.conns;
    } else {
        if (G.groups < 1 || G.members < 2 || G.rate < 1) { fprintf(stderr, "chatload: fanout needs --groups >= 1, --members >= 2, --rate >= 1\n"); return 2; }
        g_ndata = (long)G.groups * G.members;
    }
    if (G.users < 1) G.users = 1;
    if (G.users > G.groups) G.users = G.groups;
    if (G.size < 1 || G.size > 1000) { fprintf(stderr, "chatload: --size must be in 1..1000\n"); return 2; }
    if (G.duration <= 0 || G.duration > 3600 || G.warmup < 0 || G.drain < 0) { fprintf(stderr, "chatload: durations out of range\n"); return 2; }
    g_ncontrol = G.users;
    g_nconns = g_ncontrol + g_ndata;

    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < rl.rlim_max) { rl.rlim_cur = rl.rlim_max; setrlimit(RLIMIT_NOFILE, &rl); getrlimit(RLIMIT_NOFILE, &rl); }
    if ((rlim_t)g_nconns + 64 > rl.rlim_cur) {
        fprintf(stderr, "chatload: need %ld file descriptors but RLIMIT_NOFILE is %lu\n", g_nconns + 64, (unsigned long)rl.rlim_cur);
        return 2;
    }
    double total = 2 * G.connect_timeout + G.warmup + G.duration + G.drain + G.close_timeout + 30;
    signal(SIGALRM, on_alarm);
    alarm((unsigned)total + 1);
    signal(SIGINT, on_int);
    signal(SIGTERM, on_int);
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);

    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) != sizeof seed) seed = mono_abs();
    g_rng = seed ? seed : 1;
    snprintf(g_email_tag, sizeof g_email_tag, "%d-%08lx", (int)getpid(), (unsigned long)(xrand() & 0xffffffffu));
    g_pad = malloc((size_t)G.size + 1);
    memset(g_pad, 'x', (size_t)G.size + 1);
    g_tbuf = malloc(TBUF_SIZE);
    g_conns = calloc((size_t)g_nconns, sizeof(conn_t));
    g_gid = calloc((size_t)G.groups, GID_MAX);
    g_token = calloc((size_t)G.users, sizeof(char *));
    g_nrecv = calloc((size_t)G.groups, sizeof(uint32_t));
    if (!g_pad || !g_tbuf || !g_conns || !g_gid || !g_token || !g_nrecv) die("out of memory");
    g_ep = epoll_create1(EPOLL_CLOEXEC);
    g_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    struct epoll_event tev = {.events = EPOLLIN, .data.ptr = &g_timer_tag};
    epoll_ctl(g_ep, EPOLL_CTL_ADD, g_tfd, &tev);
    for (long i = 0; i < g_nconns; i++) {
        conn_t *c = &g_conns[i];
        c->fd = -1;
        c->idx = (uint32_t)i;
        c->next_id = 1;
        c->next_ack = 1;
        if (i < g_ncontrol) { c->role = ROLE_CONTROL; c->user = (uint32_t)i; continue; }
        long d = i - g_ncontrol;
        if (G.mode == MODE_DURABLE) {
            c->group = (uint32_t)(d % G.groups);
            c->role = ROLE_SENDER;
            c->slots = calloc((size_t)G.window, sizeof(slot_t));
            if (!c->slots) die("out of memory (slots)");
        } else {
            c->group = (uint32_t)(d / G.members);
            c->role = d % G.members == 0 ? ROLE_SENDER : ROLE_RECEIVER;
        }
        c->user = c->group % (uint32_t)G.users;
    }

    /* set-up: users and groups, then the data connections */
    uint64_t t0 = now_ns();
    connect_phase(0, g_ncontrol, t0 + (uint64_t)(G.connect_timeout * 1e9), setup_done);
    double setup_s = (double)(now_ns() - t0) / 1e9;
    bool setup_ok = g_groups_made == G.groups && g_users_made == G.users;
    uint64_t t1 = now_ns();
    if (setup_ok) connect_phase(g_ncontrol, g_nconns, t1 + (uint64_t)(G.connect_timeout * 1e9), data_ready);
    double connect_s = (double)(now_ns() - t1) / 1e9;
    long ready = 0;
    for (long i = g_ncontrol; i < g_nconns; i++) ready += g_conns[i].st == ST_OPEN && g_conns[i].ready;

    struct rusage ru0, ru1;
    uint64_t cpu_t0 = 0, cpu_t1 = 0;
    if (setup_ok && !g_stop) {
        freeze_groups();
        uint64_t start = now_ns() + 20000000ull;
        g_t_traffic = start;
        g_t_meas = start + (uint64_t)(G.warmup * 1e9);
        g_t_send_end = g_t_meas + (uint64_t)(G.duration * 1e9);
        while (now_ns() < g_t_traffic) poll_once(1);
        getrusage(RUSAGE_SELF, &ru0); cpu_t0 = now_ns();
        traffic_phase();
        getrusage(RUSAGE_SELF, &ru1); cpu_t1 = now_ns();
        drain_phase();
    }
    uint64_t pending_acks = outstanding_acks();
    close_phase();

    uint64_t lost = K.expected > K.delivered ? K.expected - K.delivered : 0;
    uint64_t excess = K.delivered > K.expected ? K.delivered - K.expected : 0;
    double cpu = 0;
    if (cpu_t1 > cpu_t0) {
        double u = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) + (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6;
        double s = (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) + (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
        cpu = 100.0 * (u + s) / ((double)(cpu_t1 - cpu_t0) / 1e9);
    }
    uint64_t errors = K.proto_err + K.server_close + K.eof_err + K.io_err + K.overflow;
    bool ok = setup_ok && K.conn_fail == 0 && ready == g_ndata && lost == 0 && excess == 0 && pending_acks == 0 &&
              K.ooo == 0 && K.dups == 0 && K.wrong_group == 0 && K.self_echo == 0 && K.bad_payload == 0 &&
              K.reply_err == 0 && K.bad_reply == 0 && K.skipped == 0 && errors == 0 && K.sent > 0;
    const hist_t *slo_h = G.mode == MODE_FANOUT ? &g_lat : &g_ack;
    bool slo_fail = ok && G.slo_p99_ms > 0 && (!slo_h->n || (double)hpct(slo_h, 0.99) / 1e6 > G.slo_p99_ms);
    bool fan = G.mode == MODE_FANOUT;
    if (!G.quiet) {
        fprintf(stderr, "---- chatload %s: %s\n", fan ? "fanout" : "durable", G.url);
        fprintf(stderr, "set-up        : %d user(s), %d/%d groups in %.3f s; %ld/%ld data connections ready in %.3f s (failed %lu)\n",
                g_users_made, g_groups_made, G.groups, setup_s, ready, g_ndata, connect_s, (unsigned long)K.conn_fail);
        if (fan)
            fprintf(stderr, "workload      : %d groups x %d members, 1 sender/group, %lu sends/s, %d-byte text, %.1fs warmup + %.1fs measured\n",
                    G.groups, G.members, (unsigned long)G.rate, G.size, G.warmup, G.duration);
        else
            fprintf(stderr, "workload      : %d connections, window %d, %d groups, %d-byte text, %.1fs warmup + %.1fs measured\n",
                    G.conns, G.window, G.groups, G.size, G.warmup, G.duration);
        fprintf(stderr, "sends         : sent %lu (measured %lu), acked %lu (measured %lu, %.0f/s), error replies %lu, bad replies %lu, unacked %lu\n",
                (unsigned long)K.sent, (unsigned long)K.sent_meas, (unsigned long)K.acked, (unsigned long)K.acked_meas,
                (double)K.acked_meas / G.duration, (unsigned long)K.reply_err, (unsigned long)K.bad_reply, (unsigned long)pending_acks);
        fprintf(stderr, "ack latency ms: p50 %.3f  p90 %.3f  p99 %.3f  max %.3f  (n=%lu)\n", (double)hpct(&g_ack, .5) / 1e6,
                (double)hpct(&g_ack, .9) / 1e6, (double)hpct(&g_ack, .99) / 1e6, (double)g_ack.max / 1e6, (unsigned long)g_ack.n);
        if (fan) {
            fprintf(stderr, "deliveries    : expected %lu, delivered %lu, lost %lu; out-of-order %lu, duplicates %lu, wrong group %lu, self-echo %lu, bad payload %lu\n",
                    (unsigned long)K.expected, (unsigned long)K.delivered, (unsigned long)lost, (unsigned long)K.ooo, (unsigned long)K.dups,
                    (unsigned long)K.wrong_group, (unsigned long)K.self_echo, (unsigned long)K.bad_payload);
            fprintf(stderr, "throughput    : %.0f deliveries/s (measured window)\n", (double)K.delivered_meas / G.duration);
            fprintf(stderr, "latency ms    : p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  (n=%lu)\n", (double)hpct(&g_lat, .5) / 1e6,
                    (double)hpct(&g_lat, .9) / 1e6, (double)hpct(&g_lat, .99) / 1e6, (double)hpct(&g_lat, .999) / 1e6,
                    (double)g_lat.max / 1e6, (unsigned long)g_lat.n);
            fprintf(stderr, "send lag ms   : p50 %.3f  p99 %.3f  max %.3f\n", (double)hpct(&g_lag, .5) / 1e6, (double)hpct(&g_lag, .99) / 1e6,
                    (double)g_lag.max / 1e6);
        }
        fprintf(stderr, "client cpu    : %.0f%%\n", cpu);
        fprintf(stderr, "errors        : server closes %lu, protocol %lu, EOF %lu, io %lu, unsent %lu, skipped %lu; pings %lu; other events %lu\n",
                (unsigned long)K.server_close, (unsigned long)K.proto_err, (unsigned long)K.eof_err, (unsigned long)K.io_err,
                (unsigned long)K.overflow, (unsigned long)K.skipped, (unsigned long)K.pings, (unsigned long)K.other_events);
        if (g_first_err[0]) fprintf(stderr, "first error   : %s\n", g_first_err);
        fprintf(stderr, "result        : %s\n", !ok ? "FAIL" : slo_fail ? "SLO MISS (p99)" : "OK");
    }
    char errbuf[600];
    size_t eo = 0;
    for (const char *p = g_first_err; *p && eo < sizeof errbuf - 3; p++) {
        if (*p == '"' || *p == '\\') errbuf[eo++] = '\\';
        errbuf[eo++] = (*p >= 32 && *p < 127) ? *p : '?';
    }
    errbuf[eo] = 0;
    printf("{\"tool\":\"chatload\",\"version\":\"" CHATLOAD_VERSION "\",\"mode\":\"%s\",\"url\":\"%s\",\"conns\":%ld,\"window\":%d,"
           "\"groups\":%d,\"members\":%d,\"users\":%d,\"rate\":%lu,\"size\":%d,\"duration_s\":%.3f,\"warmup_s\":%.3f,",
           fan ? "fanout" : "durable", G.url, g_ndata, fan ? 0 : G.window, G.groups, fan ? G.members : 0, G.users,
           fan ? (unsigned long)G.rate : 0ul, G.size, G.duration, G.warmup);
    printf("\"setup_s\":%.3f,\"connect_s\":%.3f,\"conn_ready\":%ld,\"conn_failed\":%lu,\"handshake_ms\":{\"p50\":%.3f,\"p99\":%.3f},",
           setup_s, connect_s, ready, (unsigned long)K.conn_fail, (double)hpct(&g_hs, .5) / 1e6, (double)hpct(&g_hs, .99) / 1e6);
    printf("\"sent\":%lu,\"sent_measured\":%lu,\"acked\":%lu,\"acked_measured\":%lu,\"acked_per_s\":%.1f,\"error_replies\":%lu,"
           "\"bad_replies\":%lu,\"unacked\":%lu,",
           (unsigned long)K.sent, (unsigned long)K.sent_meas, (unsigned long)K.acked, (unsigned long)K.acked_meas,
           (double)K.acked_meas / G.duration, (unsigned long)K.reply_err, (unsigned long)K.bad_reply, (unsigned long)pending_acks);
    print_hist_json("ack_latency_us", &g_ack);
    printf("\"expected\":%lu,\"delivered\":%lu,\"lost\":%lu,\"out_of_order\":%lu,\"duplicates\":%lu,\"wrong_group\":%lu,\"self_echo\":%lu,"
           "\"bad_payload\":%lu,\"delivered_per_s\":%.1f,",
           (unsigned long)K.expected, (unsigned long)K.delivered, (unsigned long)lost, (unsigned long)K.ooo, (unsigned long)K.dups,
           (unsigned long)K.wrong_group, (unsigned long)K.self_echo, (unsigned long)K.bad_payload, (double)K.delivered_meas / G.duration);
    print_hist_json("latency_us", &g_lat);
    printf("\"send_lag_us\":{\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f},\"client_cpu_pct\":%.1f,", US(hpct(&g_lag, .5)),
           US(hpct(&g_lag, .99)), US(g_lag.max), cpu);
    printf("\"errors\":{\"server_closes\":%lu,\"protocol\":%lu,\"eof\":%lu,\"io\":%lu,\"unsent\":%lu,\"skipped\":%lu},\"other_events\":%lu,"
           "\"bytes_in\":%lu,\"bytes_out\":%lu,\"first_error\":\"%s\",\"ok\":%s,\"slo_ok\":%s}\n",
           (unsigned long)K.server_close, (unsigned long)K.proto_err, (unsigned long)K.eof_err, (unsigned long)K.io_err,
           (unsigned long)K.overflow, (unsigned long)K.skipped, (unsigned long)K.other_events, (unsigned long)K.bytes_in,
           (unsigned long)K.bytes_out, errbuf, ok ? "true" : "false", slo_fail ? "false" : "true");
    fflush(stdout);
    return !ok ? 1 : slo_fail ? 3 : 0;
}
