/*
 * wsload — WebSocket load generator for Switchboard's benchmarks (RFC 6455 client).
 *
 * One tool, two families of modes, one copy of the client underneath:
 *   relay.c   room relay on /rooms/{room}: fan-out at an open-loop rate or a window, idle
 *             connections (M1, M2, M3), over ws:// or wss://, with or without permessage-deflate
 *   chat.c    the JSON chat protocol on /ws: durable sends (acks) and fan-out to group members
 *   client.c  what every mode shares: SHA-1 and Base64 for the accept key, masked framing, the
 *             frame parser, the upgrade handshake, non-blocking connect, write queues, epoll loop,
 *             the log-bucket histogram
 *   tls.c     wss:// through OpenSSL over the same loop, and the own TLS 1.3 record reader
 *   deflate.c permessage-deflate (RFC 7692): negotiation, inflating, compressing
 *   selftest.c built-in checks (wsload --selftest)
 *
 * Only loopback targets (127.0.0.0/8) are accepted. Every run is bounded in time (connect
 * timeout + warmup + duration + drain + close, plus alarm()).
 */
#ifndef WSLOAD_H
#define WSLOAD_H
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
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

#include <openssl/err.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>
#include <zlib.h>

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

#define WSLOAD_VERSION "2.0"
#define CHAT_SLOTS_MAX 256
/* inflate cache (stateless streams only): slots, largest compressed input and inflated output kept.
 * Direct-mapped, so the slots must outnumber the distinct messages in flight: at 1M deliveries/s
 * in M1 (20,000 publishes/s) a 200 ms delivery window holds about 4,000. At 300,000/s 64 slots
 * kept 16% hits and 16,384 keep 98%; 48 MiB per thread, touched only as used. */
#define ZC_SLOTS 16384
#define ZC_MAX_IN 1024
#define ZC_MAX_OUT 2048
#define TBUF_SIZE (256 * 1024)
#define MAX_EVENTS 1024
#define HS_MAX 8192
#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

/* ------------------------------------------------------------------ */
/* time: CLOCK_MONOTONIC ns; payload times are relative to g_base      */
extern uint64_t g_base;
static inline uint64_t mono_abs(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static inline uint64_t now_ns(void) { return mono_abs() - g_base; }

/* ------------------------------------------------------------------ */
/* HDR-style log-bucket histogram: exact below 256, then 128 sub-buckets per power of 2 (<0.8% error) */
#define H_NB (256 + 56 * 128)
typedef struct {
    uint64_t c[H_NB];
    uint64_t n, min, max, sum;
} hist_t;
static inline int hidx(uint64_t v) {
    if (v < 256) return (int)v;
    int e = 63 - __builtin_clzll(v);
    return 256 + (e - 8) * 128 + (int)((v >> (e - 7)) & 127);
}
static inline void hrec(hist_t *h, uint64_t v) {
    h->c[hidx(v)]++;
    if (h->n == 0 || v < h->min) h->min = v;
    if (v > h->max) h->max = v;
    h->n++;
    h->sum += v;
}
#define US(v) ((double)(v) / 1000.0)
uint64_t hval_hi(int i);
void hmerge(hist_t *d, const hist_t *s);
uint64_t hpct(const hist_t *h, double q);

/* ------------------------------------------------------------------ */
/* configuration: one set for the process, filled by the mode's option parser */
enum { MODE_RELAY, MODE_DURABLE, MODE_FANOUT };
typedef struct {
    int mode;
    char url[1024];        /* relay: the URL template; chat: the /ws URL */
    char host_hdr[300];
    char path[900];        /* chat: the URL's path and query */
    uint32_t dst_ip;       /* host order */
    uint16_t port;
    uint16_t split_port;   /* relay: odd members of each room connect here (a second node), 0 = none */
    int rooms, members, pubs_per_room;
    uint64_t rate;         /* relay: publishes/s total, 0 = window mode; fanout: sends/s total */
    int window;
    int size;
    double duration, warmup, drain, connect_timeout, close_timeout, hold;
    double connect_rate;   /* conns/s, 0 = unlimited (bounded by max_pending) */
    int max_pending;
    int bind_range;
    int threads;
    long idle;
    int verbose, quiet, markers;
    double slo_p99_ms;
    size_t max_msg;
    size_t max_outbuf;
    const char *room_prefix;
    int conns, groups, users; /* chat: durable senders, groups, users signed up */
    /* wss:// */
    int tls;               /* the URL is wss:// */
    int tls_version;       /* 13 (default: TLS 1.3 only) or 12 (TLS 1.2 only) */
    int tls_reader_openssl; /* read TLS 1.3 records with SSL_read (else: own record reader) */
    char sni[256];         /* server name sent in the ClientHello; empty = none */
    int sni_given;
    /* permessage-deflate */
    int deflate;           /* offer permessage-deflate */
    int deflate_optional;  /* a server that declines is fine (otherwise the connection fails) */
    int deflate_level;     /* zlib level for what publishers send */
    const char *deflate_offer;
    int offer_cnct;        /* the offer promises client_no_context_takeover */
    int offer_cmwb;        /* the offer allows the server to answer client_max_window_bits */
    int text_chat;         /* relay: pad with deterministic words instead of 'x': 1 chat, 2 pooled */
} cfg_t;
extern cfg_t G;

/* ------------------------------------------------------------------ */
/* connections and threads                                             */
/* ST_TLS: TCP is up, the TLS handshake is in progress (wss:// only); ST_HS: WebSocket upgrade sent */
enum { ST_NEW, ST_CONNECTING, ST_TLS, ST_HS, ST_OPEN, ST_CLOSING, ST_DONE, ST_FAILED };
static inline bool st_connecting(int st) { return st == ST_CONNECTING || st == ST_TLS || st == ST_HS; }
/* chat roles: control connections sign up and create groups; data connections send or receive */
enum { ROLE_CONTROL, ROLE_SENDER, ROLE_RECEIVER };

/* per (receiver, publisher): all seq < next seen; win bit i => next+i seen; maxs = max seen + 1;
 * forced = a gap wider than the 64-message window was skipped (late arrivals below next are then "late", not dups) */
typedef struct { uint64_t next, win, maxs; uint8_t forced; } rx_t;

/* chat durable: a request in flight, its id and when it was written */
typedef struct { uint64_t id, t; } slot_t;

/* one remembered inflation: compressed bytes (hash, length, copy) -> inflated bytes */
typedef struct { uint64_t h; uint32_t n, m; uint8_t in[ZC_MAX_IN]; uint8_t out[ZC_MAX_OUT]; } zc_t;

struct thr;
typedef struct conn {
    /* transport and WebSocket state (client.c, tls.c, deflate.c) */
    int fd;
    uint8_t st, wantw, dirty, close_sent, close_rcvd, in_frag, frag_op, by_server;
    uint32_t idx;
    uint64_t t_start;
    char accept[32];
    uint8_t *ib; uint32_t ib_len, ib_cap, need;
    uint8_t *ob; size_t ob_off, ob_len, ob_cap;
    uint8_t *mb; size_t mb_len, mb_cap;
    struct thr *t;
    SSL *ssl;           /* wss:// only */
    struct opener *op;  /* TLS 1.3 after the handshake: our own record reader (tls.c) */
    uint8_t wr_wants_w; /* the last SSL_write wanted writability (else readability) */
    uint8_t rd_wants_w; /* the last SSL_read wanted writability (TLS renegotiation / key update) */
    uint8_t pmd;        /* permessage-deflate negotiated */
    uint8_t srv_nct;    /* server resets its compressor per message: one shared inflater per thread will do */
    uint8_t cli_nct;    /* we reset ours per message: one shared deflater per thread will do */
    uint8_t frag_rsv1;  /* the fragmented message being assembled is compressed */
    uint8_t cli_bits;   /* client_max_window_bits the server asked for (15 when it did not) */
    z_stream *zin, *zout; /* per-connection streams, only when context takeover is in use */
    /* what the modes keep per connection */
    uint32_t room;      /* relay: room; chat: group */
    int32_t pid;        /* relay: global publisher id or -1 */
    rx_t *rx;           /* order tracking: relay one per publisher of the room, chat one */
    uint8_t role, ready; /* chat: ROLE_*, subscribed (or, durable, open) */
    uint32_t user;      /* chat: whose token the connection uses */
    uint64_t next_id, inflight, next_ack; /* chat senders: next request id, in flight, next ack expected */
    slot_t *slots;      /* chat durable: the window of requests in flight */
} conn_t;

/* counters; all uint64_t, because the per-thread totals are summed as an array */
typedef struct {
    uint64_t conn_ok, conn_fail, sent, sent_meas, expected, expected_meas, skipped;
    uint64_t delivered, delivered_meas, dups, ooo, gaps_forced, cross_room, self_echo, bad_payload, binary_msgs;
    uint64_t proto_err, server_close, eof_err, io_err, overflow, pings, clean_close, unclean_close;
    uint64_t bytes_in, bytes_out, msgs_in;
    uint64_t fail_refused, fail_timeout, fail_handshake, fail_other;
    uint64_t tls_conns, tls_own_conns, pmd_conns, z_msgs_in, z_plain_msgs_in, z_wire_in, z_raw_in, z_msgs_out, z_pooled_out, z_wire_out, z_raw_out, z_cache_hits;
    uint64_t acked, acked_meas, reply_err, bad_reply, other_events; /* chat */
} ctr_t;

typedef struct thr {
    int id, ep, tfd;
    conn_t **conns; int nconns;
    struct pub **pubs; int npubs;
    hist_t lat, lag, conn_lat, ack;
    ctr_t k;
    uint64_t pub_delivered, pub_expected; /* published for cross-thread drain checks (atomic) */
    uint8_t *tbuf;
    conn_t **dirty; int ndirty, dirty_cap;
    uint64_t rng;
    uint64_t timer_armed;
    int hs_pending; /* connections in CONNECTING/TLS/HS */
    char first_err[256];
    pthread_t th;
    /* permessage-deflate scratch: shared streams for no-context-takeover connections, output buffers */
    z_stream zin, zout;
    uint8_t zin_ready, zout_ready, zout_bits;
    uint8_t *zbuf; size_t zbuf_cap;   /* inflated message */
    uint8_t *zobuf; size_t zobuf_cap; /* compressed outgoing message */
    zc_t *zc;                         /* inflate cache, allocated on first use */
    /* --text chat: expected padding of recently seen (publisher, seq) pairs, direct mapped */
    uint8_t *chat; uint64_t chat_key[CHAT_SLOTS_MAX]; int chat_slots;
    char tls_desc[96];  /* negotiated version and cipher of the first connection */
    char pmd_resp[256]; /* the first Sec-WebSocket-Extensions answer */
} thr_t;

/* What a mode adds to the shared client: the request path of a connection's upgrade, what happens
 * once it is open, and what a text message means. */
typedef struct {
    void (*build_path)(const conn_t *c, char *out, size_t cap);
    void (*on_open)(thr_t *t, conn_t *c);
    void (*on_text)(thr_t *t, conn_t *c, const uint8_t *p, size_t n, uint64_t now);
} mode_hooks_t;
extern mode_hooks_t g_mode;

extern conn_t *g_conns;
extern long g_nconns;
extern thr_t *g_thr;
extern volatile int g_stop;
extern uint64_t g_t_traffic, g_t_meas, g_t_send_end;
extern uint8_t *g_pad; /* 'x' * max payload for verification */
extern SSL_CTX *g_ssl_ctx;

/* ------------------------------------------------------------------ */
/* small helpers                                                       */
static inline uint64_t xrand(thr_t *t) { /* xorshift64* */
    uint64_t x = t->rng;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    t->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}
/* Message seq from one publisher arrived on r: counts it as delivered or as a duplicate, and
 * counts out-of-order arrivals and gaps wider than the window. True for a delivery within the
 * window (the caller then records its latency); one below a skipped gap counts as delivered
 * out of order, and false. */
static inline bool rx_accept(thr_t *t, rx_t *r, uint64_t seq) {
    if (seq < r->next) {
        if (r->forced) { t->k.ooo++; t->k.delivered++; return false; } /* very late (beyond the window) */
        t->k.dups++;
        return false;
    }
    uint64_t d = seq - r->next;
    if (d >= 64) {
        uint64_t sh = d - 63;
        r->win = sh >= 64 ? 0 : r->win >> sh;
        r->next += sh;
        d = 63;
        r->forced = 1;
        t->k.gaps_forced++;
    }
    if (r->win & (1ull << d)) { t->k.dups++; return false; }
    r->win |= 1ull << d;
    if (seq + 1 < r->maxs) t->k.ooo++;
    if (seq + 1 > r->maxs) r->maxs = seq + 1;
    while (r->win & 1) { r->win >>= 1; r->next++; }
    t->k.delivered++;
    return true;
}
static inline char *put_u64(char *p, uint64_t v) {
    char tmp[24];
    int n = 0;
    do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) *p++ = tmp[--n];
    return p;
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
static inline uint64_t mix64(uint64_t x) { /* splitmix64 finaliser */
    x ^= x >> 30; x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27; x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* client.c */
void sha1(const uint8_t *data, size_t len, uint8_t out[20]);
size_t b64enc(const uint8_t *in, size_t n, char *out);
void ws_accept_for(const char *key, char out[32]);
void note_err(thr_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void die(const char *m) __attribute__((noreturn));
void ob_reserve(conn_t *c, size_t add);
void ws_frame_rsv(thr_t *t, conn_t *c, int op, int rsv1, const uint8_t *p, size_t n);
void ws_frame(thr_t *t, conn_t *c, int op, const uint8_t *p, size_t n);
void set_events(thr_t *t, conn_t *c, int wantw);
void conn_fail(thr_t *t, conn_t *c, int connect_phase_kind);
void conn_done(thr_t *t, conn_t *c);
void flush_conn(thr_t *t, conn_t *c);
void flush_dirty(thr_t *t);
void proto_error(thr_t *t, conn_t *c, const char *why);
size_t parse_frames(thr_t *t, conn_t *c, uint8_t *d, size_t len, uint64_t now);
void send_handshake(thr_t *t, conn_t *c);
void start_connect(thr_t *t, conn_t *c);
void arm_timer(thr_t *t, uint64_t at_rel);
void poll_once(thr_t *t, int timeout_ms);
void close_phase(thr_t *t);
void thread_init(thr_t *t, int id, uint64_t seed);
int parse_url(const char *u);
void json_str(char *out, size_t cap, const char *s);
void limit_run(double seconds);
bool raise_nofile(long conns);
double cpu_pct(const struct rusage *a, const struct rusage *b, uint64_t t0, uint64_t t1);
void print_hist_json(const char *name, const hist_t *h);

/* tls.c */
void tls_setup(void);
void tls_begin(thr_t *t, conn_t *c);
void tls_step(thr_t *t, conn_t *c);
void tls_release(conn_t *c);
bool tls_pending(conn_t *c);
ssize_t io_send(thr_t *t, conn_t *c, const uint8_t *p, size_t n);
ssize_t io_recv(thr_t *t, conn_t *c, uint8_t *buf, size_t cap);

/* deflate.c */
void *zbuf_grow(uint8_t **buf, size_t *cap, size_t want);
bool inflate_msg(thr_t *t, conn_t *c, const uint8_t *p, size_t n, const uint8_t **out, size_t *outn, const char **why);
size_t deflate_msg(thr_t *t, conn_t *c, const uint8_t *p, size_t n);
bool pmd_accept(thr_t *t, conn_t *c, const char *v, size_t vl);
void deflate_release(conn_t *c);
bool deflate_offer(const char *name);

/* relay.c */
int relay_main(int argc, char **argv);
void relay_use(void);
void chat_init(void);
void chat_fill(uint8_t *out, size_t len, uint64_t pid, uint64_t seq);
void pool_init(void);
size_t pool_compose(thr_t *t, conn_t *c, const uint8_t *p, size_t n, uint64_t pid, uint64_t seq);
size_t make_payload(uint8_t *buf, uint32_t pid, uint64_t seq, uint64_t ts, int meas, size_t size);
void relay_on_text(thr_t *t, conn_t *c, const uint8_t *p, size_t n, uint64_t now);
typedef struct pub {
    conn_t *c;
    uint32_t room, local, nrecv;
    uint64_t seq;   /* next sequence number to send */
    uint64_t done;  /* window mode: completed messages (atomic) */
    uint32_t *ring; /* window mode: delivery counts per slot (atomic) */
} pub_t;
void relay_set_pubs(pub_t *pubs, int n);

/* chat.c */
int chat_main(int argc, char **argv);

/* selftest.c */
int selftest(void);

#endif
