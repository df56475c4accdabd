/*
 * Room relay modes on /rooms/{room}: R rooms x M members connect; K members per room publish text
 * messages "p<pid> s<seq> t<ns> m<0|1> <padding>" at an open-loop total rate (or as fast as a
 * per-publisher window allows); every other member of the room must receive every message, in
 * order. Receivers compute latency from the scheduled send time (coordinated-omission safe) and
 * check per-publisher order, loss, duplicates, wrong room, self echo and the payload byte for
 * byte. --idle opens connections and holds them (server memory per connection).
 *
 * Padding: 'x' (default), --text chat (deterministic words derived from (publisher, seq), because
 * 'x' runs compress unrealistically well) or --text pooled (words from 1024 texts made at start-up;
 * with --deflate and client no context takeover, publishers send a stored block for each message's
 * first 64 bytes plus its text's tail compressed at start-up instead of running zlib per publish,
 * which had become the generator's limit in compressed fan-out; see pool_compose).
 */
#include "wsload.h"

static pub_t *g_pubs;
static int g_npubs;
static pthread_barrier_t g_bar;
static uint64_t g_t_connect0, g_connect_end;
static struct rusage g_ru0, g_ru1;
static uint64_t g_cpu_t0, g_cpu_t1;

static void barrier(void) { if (G.threads > 1) pthread_barrier_wait(&g_bar); }

void relay_set_pubs(pub_t *pubs, int n) { g_pubs = pubs; g_npubs = n; }

/* ------------------------------------------------------------------ */
/* payload                                                             */
/* --text chat: 128 words of everyday chat (a power of two, so 7 random bits pick one). Messages
 * built from them compress about as well as real chat lines do, unlike runs of 'x'. */
static const char *const CHAT_WORDS[] = {
    "the", "a", "to", "and", "is", "it", "you", "I", "that", "for", "on", "we", "this", "in", "be", "so",
    "just", "not", "with", "have", "are", "do", "can", "was", "but", "if", "at", "me", "my", "what", "now", "ok",
    "yes", "no", "lol", "thanks", "please", "sure", "maybe", "today", "tomorrow", "meeting", "deploy", "build", "test", "fixed",
    "broken", "again", "later", "lunch", "coffee", "anyone", "know", "why", "how", "where", "when", "think", "looks", "good", "great", "nice",
    "sorry", "late", "call", "link", "doc", "review", "merge", "branch", "server", "client", "error", "log", "restart", "works", "failing", "green",
    "ticket", "customer", "release", "friday", "monday", "morning", "tonight", "weekend", "plan", "update", "status", "quick", "question", "idea", "agree", "done",
    "will", "should", "could", "would", "need", "want", "check", "send", "see", "let", "push", "pull", "run", "try", "ask", "wait",
    "here", "there", "all", "some", "more", "really", "still", "already", "also", "about", "from", "our", "your", "their", "it's", "don't", "can't", "hmm",
};
_Static_assert(sizeof CHAT_WORDS / sizeof *CHAT_WORDS == 128, "chat words are picked with 7 random bits");
static uint8_t g_chat_len[128];

/* The padding of message (pid, seq): len bytes of words, spaces and sentence ends, a pure function
 * of (pid, seq) so every receiver can regenerate and compare it. */
void chat_init(void) {
    for (int i = 0; i < 128; i++) g_chat_len[i] = (uint8_t)strlen(CHAT_WORDS[i]);
}
void chat_fill(uint8_t *out, size_t len, uint64_t pid, uint64_t seq) {
    uint64_t st = mix64(pid * 0x9E3779B97F4A7C15ull + seq + 1);
    size_t o = 0;
    int cap = 1;
    while (o < len) {
        st += 0x9E3779B97F4A7C15ull;
        uint64_t r = mix64(st);
        int w = (int)(r & 127);
        size_t wl = g_chat_len[w], take = wl < len - o ? wl : len - o;
        memcpy(out + o, CHAT_WORDS[w], take);
        if (cap && out[o] >= 'a' && out[o] <= 'z') out[o] = (uint8_t)(out[o] - 32);
        o += take;
        cap = 0;
        if (o < len && ((r >> 8) & 7) == 0) { out[o++] = ".?!,"[(r >> 11) & 3]; cap = ((r >> 11) & 3) != 3; }
        if (o < len) out[o++] = ' ';
    }
}

/* The expected padding of (pid, seq), at least G.size bytes: 'x' runs, or the chat words from a
 * small per-thread cache (in fan-out every receiver on the thread checks the same few messages). */
static const uint8_t *pad_for(thr_t *t, uint64_t pid, uint64_t seq) {
    if (!G.text_chat) return g_pad;
    uint64_t key = (pid << 40 ^ seq) + 1;
    int slot = (int)((pid * 31 + seq) & (uint64_t)(t->chat_slots - 1));
    uint8_t *p = t->chat + (size_t)slot * (size_t)G.size;
    if (t->chat_key[slot] != key) {
        chat_fill(p, (size_t)G.size, pid, seq);
        t->chat_key[slot] = key;
    }
    return p;
}

/* --text pooled: POOL_TEXTS chat texts of G.size bytes, made at start-up. Message (pid, seq) takes
 * text k = pool_key(pid, seq) from the end of its header on, so all its bytes past POOL_HEAD are
 * those of text k. They are compressed once per text at start-up (raw deflate, sync flush, trailer
 * stripped), and a publisher without client context takeover sends a stored block holding the
 * message's first POOL_HEAD bytes followed by those compressed bytes: a valid standalone deflate
 * stream (the stored block ends on a byte boundary, where the compressed blocks begin), made
 * without running zlib per message. A real fleet's publishers compress on their own devices;
 * here one core plays all of them, and zlib per publish had become the load generator's limit. */
#define POOL_TEXTS 1024
#define POOL_HEAD 64
static uint8_t *g_pool;                     /* POOL_TEXTS x G.size */
static uint8_t *g_pool_z[POOL_TEXTS];       /* bytes POOL_HEAD..G.size of each text, compressed */
static size_t g_pool_zlen[POOL_TEXTS];

static inline int pool_key(uint64_t pid, uint64_t seq) {
    return (int)(mix64(pid * 0x9E3779B97F4A7C15ull ^ (seq + 7)) & (POOL_TEXTS - 1));
}
static inline const uint8_t *pool_text(int k) { return g_pool + (size_t)k * (size_t)G.size; }

/* Makes the texts and their compressed tails. */
void pool_init(void) {
    g_pool = malloc((size_t)POOL_TEXTS * (size_t)G.size);
    if (!g_pool) die("out of memory (text pool)");
    z_stream z = {0};
    if (deflateInit2(&z, G.deflate_level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) die("deflateInit2 failed");
    size_t tail = G.size > POOL_HEAD ? (size_t)G.size - POOL_HEAD : 0, cap = deflateBound(&z, (uLong)tail) + 64;
    for (int k = 0; k < POOL_TEXTS; k++) {
        uint8_t *text = g_pool + (size_t)k * (size_t)G.size;
        chat_fill(text, (size_t)G.size, (uint64_t)1 << 40 | (uint64_t)k, 0);
        if (!tail) continue;
        g_pool_z[k] = malloc(cap);
        if (!g_pool_z[k]) die("out of memory (text pool)");
        z.next_in = text + POOL_HEAD; z.avail_in = (uInt)tail;
        z.next_out = g_pool_z[k]; z.avail_out = (uInt)cap;
        if (deflate(&z, Z_SYNC_FLUSH) != Z_OK || z.avail_in || !z.avail_out) die("deflate failed");
        g_pool_zlen[k] = cap - z.avail_out - 4; /* 00 00 ff ff stripped */
        deflateReset(&z);
    }
    deflateEnd(&z);
}

/* "p<pid> s<seq> t<ns> m<0|1> " + 'x' (or --text chat words) padding up to size */
size_t make_payload(uint8_t *buf, uint32_t pid, uint64_t seq, uint64_t ts, int meas, size_t size) {
    char *p = (char *)buf;
    *p++ = 'p'; p = put_u64(p, pid);
    *p++ = ' '; *p++ = 's'; p = put_u64(p, seq);
    *p++ = ' '; *p++ = 't'; p = put_u64(p, ts);
    *p++ = ' '; *p++ = 'm'; *p++ = (char)('0' + meas); *p++ = ' ';
    size_t h = (size_t)(p - (char *)buf);
    if (h < size) {
        if (G.text_chat == 2 && size == (size_t)G.size) memcpy(p, pool_text(pool_key(pid, seq)) + h, size - h);
        else if (G.text_chat) chat_fill((uint8_t *)p, size - h, pid, seq);
        else memset(p, 'x', size - h);
        h = size;
    }
    return h;
}

/* The length of make_payload's header "p<pid> s<seq> t<ns> m<0|1> ": up to its fourth space. */
static size_t payload_header_len(const uint8_t *p, size_t n) {
    int spaces = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] == ' ' && ++spaces == 4) return i + 1;
    return n;
}

/* The composed compressed form of pooled message (pid, seq) of n bytes at p into t->zobuf,
 * or 0 when this message or connection cannot use it (then deflate_msg does the work): it needs
 * client_no_context_takeover, and a window the server allows that holds the whole message, so no
 * match of the tail (compressed with window 15) can reach farther back than the window. */
size_t pool_compose(thr_t *t, conn_t *c, const uint8_t *p, size_t n, uint64_t pid, uint64_t seq) {
    if (G.text_chat != 2 || !c->cli_nct || ((size_t)1 << c->cli_bits) < n || n != (size_t)G.size || n <= POOL_HEAD) return 0;
    if (payload_header_len(p, n) > POOL_HEAD) return 0;
    int k = pool_key(pid, seq);
    size_t out = 5 + POOL_HEAD + g_pool_zlen[k];
    zbuf_grow(&t->zobuf, &t->zobuf_cap, out);
    uint8_t *o = t->zobuf;
    o[0] = 0x00; /* BFINAL 0, BTYPE 00 (stored), then padding to the byte */
    o[1] = POOL_HEAD & 0xFF; o[2] = POOL_HEAD >> 8; o[3] = (uint8_t)~o[1]; o[4] = (uint8_t)~o[2];
    memcpy(o + 5, p, POOL_HEAD);
    memcpy(o + 5 + POOL_HEAD, g_pool_z[k], g_pool_zlen[k]);
    t->k.z_msgs_out++; t->k.z_pooled_out++; t->k.z_raw_out += n; t->k.z_wire_out += out;
    return out;
}

/* ------------------------------------------------------------------ */
/* receive side                                                        */
void relay_on_text(thr_t *t, conn_t *c, const uint8_t *p, size_t n, uint64_t now) {
    const uint8_t *q = p, *end = p + n;
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
    size_t h = (size_t)(q - p);
    size_t want = h < (size_t)G.size ? (size_t)G.size : h;
    if (pid >= (uint64_t)g_npubs) goto bad;
    const uint8_t *pad = G.text_chat == 2 ? pool_text(pool_key(pid, seq)) + h : pad_for(t, pid, seq);
    if (n != want || (n > h && memcmp(q, pad, n - h) != 0)) goto bad;
    pub_t *pb = &g_pubs[pid];
    if (pb->room != c->room) { t->k.cross_room++; note_err(t, "message from room %u delivered to room %u", pb->room, c->room); return; }
    if ((int64_t)pid == c->pid) { t->k.self_echo++; note_err(t, "publisher %u received its own message", (unsigned)pid); return; }
    if (!rx_accept(t, &c->rx[pb->local], seq)) return;
    if (meas) {
        t->k.delivered_meas++;
        hrec(&t->lat, now > ts ? now - ts : 0);
    }
    if (G.rate == 0 && pb->ring) {
        uint32_t slot = (uint32_t)(seq % (uint64_t)G.window);
        uint32_t v = __atomic_add_fetch(&pb->ring[slot], 1, __ATOMIC_RELAXED);
        if (v == pb->nrecv) {
            __atomic_store_n(&pb->ring[slot], 0, __ATOMIC_RELAXED);
            __atomic_add_fetch(&pb->done, 1, __ATOMIC_RELEASE);
        }
    }
    return;
bad:
    t->k.bad_payload++;
    note_err(t, "unexpected payload (%zu bytes) on conn %u: %.40s", n, c->idx, (const char *)p);
}

/* handshake                                                           */
static void build_path(const conn_t *c, char *out, size_t cap) {
    /* url_template is "ws://host[:port]/path..."; substitute {room} */
    const char *s = strstr(G.url, "://");
    s = s ? s + 3 : G.url;
    s = strchr(s, '/');
    if (!s) s = "/";
    size_t o = 0;
    while (*s && o + 32 < cap) {
        if (!strncmp(s, "{room}", 6)) {
            o += (size_t)snprintf(out + o, cap - o, "%s%u", G.room_prefix, c->room);
            s += 6;
        } else if (!strncmp(s, "{conn}", 6)) {
            o += (size_t)snprintf(out + o, cap - o, "%u", c->idx);
            s += 6;
        } else out[o++] = *s++;
    }
    out[o] = 0;
}

static void publish_counters(thr_t *t) {
    __atomic_store_n(&t->pub_delivered, t->k.delivered, __ATOMIC_RELAXED);
    __atomic_store_n(&t->pub_expected, t->k.expected, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* phases                                                              */
static void connect_phase(thr_t *t) {
    int next = 0;
    uint64_t last_scan = 0, lastp = 0;
    const uint64_t to = (uint64_t)(G.connect_timeout * 1e9);
    while (!g_stop && (next < t->nconns || t->hs_pending > 0)) {
        uint64_t now = now_ns();
        int tmo = 20;
        while (next < t->nconns && t->hs_pending < G.max_pending) {
            uint64_t gi = (uint64_t)next * (uint64_t)G.threads + (uint64_t)t->id;
            uint64_t due = G.connect_rate > 0 ? g_t_connect0 + (uint64_t)((double)gi * 1e9 / G.connect_rate) : 0;
            if (due > now) {
                uint64_t ms = (due - now) / 1000000ull;
                tmo = ms < 20 ? (int)ms : 20;
                break;
            }
            start_connect(t, t->conns[next]);
            next++;
        }
        if (now - last_scan > 50000000ull) { /* per-connection handshake timeouts */
            last_scan = now;
            uint64_t n2 = now_ns();
            for (int i = 0; i < next; i++) {
                conn_t *c = t->conns[i];
                if (st_connecting(c->st) && n2 > c->t_start && n2 - c->t_start > to) {
                    note_err(t, "connect/handshake timeout (conn %u)", c->idx);
                    conn_fail(t, c, 2);
                }
            }
        }
        poll_once(t, tmo);
        if (G.verbose && t->id == 0 && now - lastp > 1000000000ull) {
            lastp = now;
            fprintf(stderr, "wsload: connecting... started=%d ok=%lu fail=%lu pending=%d (thread 0)\n", next,
                    (unsigned long)t->k.conn_ok, (unsigned long)t->k.conn_fail, t->hs_pending);
        }
    }
}

static bool publish_one(thr_t *t, pub_t *pb, uint64_t ts, uint64_t now, int meas, uint8_t *scratch) {
    conn_t *c = pb->c;
    if (c->st != ST_OPEN) { t->k.skipped++; return false; }
    if (c->ob_len - c->ob_off > G.max_outbuf) {
        t->k.overflow++;
        note_err(t, "publisher %u: %zu bytes unsent (server not reading); message not sent", (unsigned)c->pid, c->ob_len - c->ob_off);
        return false;
    }
    size_t n = make_payload(scratch, (uint32_t)c->pid, pb->seq, ts, meas, (size_t)G.size);
    if (c->pmd) {
        size_t z = pool_compose(t, c, scratch, n, (uint64_t)c->pid, pb->seq);
        ws_frame_rsv(t, c, 1, 1, t->zobuf, z ? z : deflate_msg(t, c, scratch, n));
    }
    else ws_frame(t, c, 1, scratch, n);
    pb->seq++;
    t->k.sent++;
    t->k.expected += pb->nrecv;
    if (meas) {
        t->k.sent_meas++;
        t->k.expected_meas += pb->nrecv;
        hrec(&t->lag, now > ts ? now - ts : 0);
    }
    if (G.rate == 0 && pb->nrecv == 0) __atomic_add_fetch(&pb->done, 1, __ATOMIC_RELEASE);
    return true;
}

static void traffic_phase(thr_t *t) {
    uint8_t *scratch = malloc((size_t)G.size + 128);
    uint64_t k = 0;
    const uint64_t P = (uint64_t)g_npubs;
    for (;;) {
        uint64_t now = now_ns();
        if (g_stop) break;
        if (G.rate > 0) {
            for (;;) {
                uint64_t sched = g_t_traffic + (uint64_t)((unsigned __int128)k * 1000000000ull / G.rate);
                if (sched > now || sched >= g_t_send_end) break;
                pub_t *pb = &g_pubs[k % P];
                if (pb->c->t == t) publish_one(t, pb, sched, now, sched >= g_t_meas, scratch);
                k++;
            }
        } else if (now < g_t_send_end) {
            for (int i = 0; i < t->npubs; i++) {
                pub_t *pb = t->pubs[i];
                if (pb->c->st != ST_OPEN) continue;
                while (pb->seq - __atomic_load_n(&pb->done, __ATOMIC_ACQUIRE) < (uint64_t)G.window)
                    if (!publish_one(t, pb, now, now, now >= g_t_meas, scratch)) break;
            }
        }
        flush_dirty(t);
        publish_counters(t);
        if (now >= g_t_send_end) break;
        uint64_t wake = g_t_send_end;
        if (G.rate > 0) {
            uint64_t sched = g_t_traffic + (uint64_t)((unsigned __int128)k * 1000000000ull / G.rate);
            if (sched < wake) wake = sched;
        }
        arm_timer(t, wake);
        poll_once(t, G.rate > 0 ? 100 : 1000);
        if (G.verbose && t->id == 0) {
            static uint64_t lastp;
            uint64_t n2 = now_ns();
            if (n2 - lastp > 1000000000ull) {
                lastp = n2;
                fprintf(stderr, "wsload: t=%.1fs sent=%lu delivered=%lu expected=%lu (thread 0)\n", (double)(n2 - g_t_traffic) / 1e9,
                        (unsigned long)t->k.sent, (unsigned long)t->k.delivered, (unsigned long)t->k.expected);
            }
        }
    }
    free(scratch);
    publish_counters(t);
}

static void global_sums(uint64_t *deliv, uint64_t *exp) {
    uint64_t d = 0, e = 0;
    for (int i = 0; i < G.threads; i++) {
        d += __atomic_load_n(&g_thr[i].pub_delivered, __ATOMIC_RELAXED);
        e += __atomic_load_n(&g_thr[i].pub_expected, __ATOMIC_RELAXED);
    }
    *deliv = d; *exp = e;
}

static void drain_phase(thr_t *t) {
    uint64_t deadline = g_t_send_end + (uint64_t)(G.drain * 1e9);
    for (;;) {
        publish_counters(t);
        uint64_t d, e;
        global_sums(&d, &e);
        if (d >= e || g_stop) break;
        if (now_ns() >= deadline) break;
        poll_once(t, 5);
    }
    publish_counters(t);
}

static void hold_phase(thr_t *t, uint64_t until) {
    while (!g_stop) {
        uint64_t now = now_ns();
        if (now >= until) break;
        uint64_t ms = (until - now) / 1000000ull;
        poll_once(t, ms > 200 ? 200 : (int)ms + 1);
    }
}

static void freeze_rooms(void) {
    /* receivers per publisher = OPEN members of the room minus the publisher itself */
    uint32_t *open = calloc((size_t)(G.rooms > 0 ? G.rooms : 1), sizeof(uint32_t));
    for (long i = 0; i < g_nconns; i++)
        if (g_conns[i].st == ST_OPEN) open[g_conns[i].room]++;
    for (int p = 0; p < g_npubs; p++) {
        pub_t *pb = &g_pubs[p];
        uint32_t n = open[pb->room];
        pb->nrecv = pb->c->st == ST_OPEN ? n - 1 : (n ? n : 0);
    }
    free(open);
}

static void *thread_main(void *arg) {
    thr_t *t = arg;
    connect_phase(t);
    barrier();
    if (t->id == 0) {
        g_connect_end = now_ns();
        freeze_rooms();
        uint64_t start = now_ns() + 20000000ull;
        g_t_traffic = start;
        g_t_meas = start + (uint64_t)(G.warmup * 1e9);
        g_t_send_end = g_t_meas + (uint64_t)(G.duration * 1e9);
        if (G.idle) {
            uint64_t ok = 0, fail = 0;
            for (long i = 0; i < g_nconns; i++) { if (g_conns[i].st == ST_OPEN) ok++; else fail++; }
            fprintf(stderr, "wsload: READY established=%lu failed=%lu connect_s=%.3f\n", (unsigned long)ok, (unsigned long)fail,
                    (double)(g_connect_end - g_t_connect0) / 1e9);
            fflush(stderr);
        }
    }
    barrier();
    if (G.idle) {
        hold_phase(t, g_connect_end + (uint64_t)(G.hold * 1e9));
    } else {
        if (t->id == 0) {
            getrusage(RUSAGE_SELF, &g_ru0); g_cpu_t0 = now_ns();
            if (G.markers) { fprintf(stderr, "wsload: SENDING\n"); fflush(stderr); }
        }
        traffic_phase(t);
        barrier();
        if (t->id == 0) {
            getrusage(RUSAGE_SELF, &g_ru1); g_cpu_t1 = now_ns();
            if (G.markers) { fprintf(stderr, "wsload: SENT\n"); fflush(stderr); }
        }
        drain_phase(t);
    }
    barrier();
    close_phase(t);
    return NULL;
}

/* The relay's hooks into the shared client. */
void relay_use(void) {
    g_mode.build_path = build_path;
    g_mode.on_open = NULL;
    g_mode.on_text = relay_on_text;
}

/* ------------------------------------------------------------------ */
/* CLI                                                                 */
static void usage(FILE *f) {
    fprintf(f,
"wsload " WSLOAD_VERSION " - WebSocket load generator (loopback only)\n"
"\n"
"relay:  wsload --url-template 'ws://127.0.0.1:PORT/rooms/{room}' --rooms R --members M\n"
"               [--publishers-per-room K] [--rate MSGS_PER_SEC | --rate 0 --window W]\n"
"               [--size BYTES] [--duration S] [--warmup S] [--connect-rate CPS] [--bind-range N]\n"
"idle:   wsload --url-template ... --idle N --hold S [--rooms R] [--connect-rate CPS] [--bind-range N]\n"
"chat:   wsload durable|fanout --url ws://127.0.0.1:PORT/ws ...   (wsload durable --help)\n"
"test:   wsload --selftest\n"
"\n"
"  --url-template T        ws://HOST[:PORT]/path?query; {room} -> <prefix><index>, {conn} -> conn index;\n"
"                          HOST must be 127.x.x.x or localhost\n"
"  --rooms R               number of rooms (relay: required; idle: default 1, conn i joins room i%%R)\n"
"  --members M             connections per room (relay)\n"
"  --split-port P          odd members of each room connect to port P (a second node of a cluster)\n"
"  --publishers-per-room K members 0..K-1 of each room publish (default 1)\n"
"  --rate N                total open-loop publishes/s across all publishers (default 1000);\n"
"                          0 = as fast as possible, each publisher keeps --window W (default 8) in flight\n"
"  --size B                payload bytes, padded with 'x' (default 64; minimum is the header length)\n"
"  --duration S            measured seconds (default 10); --warmup S unmeasured seconds first (default 2)\n"
"  --drain S               max seconds to wait for outstanding deliveries (default 3)\n"
"  --connect-rate CPS      new connections per second (default 0 = as fast as --max-pending allows)\n"
"  --max-pending N         max handshakes in flight (default 256); --connect-timeout S (default 15)\n"
"  --bind-range N          spread source addresses over 127.0.0.1..127.0.0.N (auto when > 25000 conns)\n"
"  --threads T             event-loop threads (default 1); connections are spread round-robin\n"
"  --room-prefix P         room name prefix (default \"r\")\n"
"  --slo-p99-ms X          exit 3 if latency p99 > X ms\n"
"  --idle N --hold S       open N connections, print READY on stderr, hold S seconds, close\n"
"  --markers               print 'wsload: SENDING' / 'wsload: SENT' on stderr when sending starts/stops\n"
"  -v/--verbose, -q/--quiet (no human summary)\n"
"\n"
"TLS and compression:\n"
"  wss://HOST:PORT/...     TLS (OpenSSL, non-blocking, no certificate check, session resumption off)\n"
"  --tls-version V         1.3 (default) or 1.2; --sni NAME server name (default: the URL host, or\n"
"                          \"localhost\" for an IP literal; --sni '' sends none)\n"
"  --tls-reader R          own (default): TLS 1.3 records are decrypted by wsload itself after the\n"
"                          handshake; openssl: every record through SSL_read\n"
"  --deflate               offer permessage-deflate, inflate RSV1 messages, compress what publishers send\n"
"  --deflate-offer O       client (default: permessage-deflate; client_no_context_takeover;\n"
"                          client_max_window_bits), plain (permessage-deflate), both (adds\n"
"                          server_no_context_takeover), or a literal 'permessage-deflate; ...' offer\n"
"  --deflate-optional      accept a server that declines the offer (default: that connection fails)\n"
"  --deflate-level N       zlib level for published messages (default 6)\n"
"  --text x|chat|pooled    payload padding: 'x' (default), deterministic chat words from (publisher, seq),\n"
"                          or pooled: words from 1024 texts whose compressed tails publishers reuse\n"
"\n"
"Output: human summary on stderr, one JSON line on stdout.\n"
"Exit: 0 ok; 1 failed connections, loss, out-of-order, duplicates, wrong room/self echo, bad payload,\n"
"      protocol errors or unexpected closes; 2 usage; 3 SLO (p99) exceeded.\n");
}

int relay_main(int argc, char **argv) {
    static struct option opts[] = {
        {"url-template", 1, 0, 'u'}, {"rooms", 1, 0, 'r'}, {"members", 1, 0, 'm'}, {"publishers-per-room", 1, 0, 'k'},
        {"rate", 1, 0, 'R'}, {"window", 1, 0, 'w'}, {"size", 1, 0, 's'}, {"duration", 1, 0, 'd'}, {"warmup", 1, 0, 'W'},
        {"drain", 1, 0, 'D'}, {"connect-rate", 1, 0, 'c'}, {"max-pending", 1, 0, 'P'}, {"connect-timeout", 1, 0, 'T'},
        {"bind-range", 1, 0, 'b'}, {"threads", 1, 0, 't'}, {"idle", 1, 0, 'i'}, {"hold", 1, 0, 'H'},
        {"slo-p99-ms", 1, 0, 'S'}, {"room-prefix", 1, 0, 'p'}, {"close-timeout", 1, 0, 'C'}, {"verbose", 0, 0, 'v'},
        {"quiet", 0, 0, 'q'}, {"markers", 0, 0, 'M'}, {"help", 0, 0, 'h'},
        {"deflate", 0, 0, 'z'}, {"deflate-offer", 1, 0, 'O'}, {"deflate-optional", 0, 0, 'o'}, {"deflate-level", 1, 0, 'L'},
        {"text", 1, 0, 'x'}, {"sni", 1, 0, 'N'}, {"tls-version", 1, 0, 'V'}, {"tls-reader", 1, 0, 'Y'},
        {"split-port", 1, 0, 'X'}, {0, 0, 0, 0}};
    int o, bind_given = 0;
    while ((o = getopt_long(argc, argv, "vqh", opts, NULL)) != -1) {
        switch (o) {
        case 'u': snprintf(G.url, sizeof G.url, "%s", optarg); break;
        case 'r': G.rooms = atoi(optarg); break;
        case 'm': G.members = atoi(optarg); break;
        case 'k': G.pubs_per_room = atoi(optarg); break;
        case 'R': G.rate = strtoull(optarg, NULL, 10); break;
        case 'w': G.window = atoi(optarg); break;
        case 's': G.size = atoi(optarg); break;
        case 'd': G.duration = atof(optarg); break;
        case 'W': G.warmup = atof(optarg); break;
        case 'D': G.drain = atof(optarg); break;
        case 'c': G.connect_rate = atof(optarg); break;
        case 'P': G.max_pending = atoi(optarg); break;
        case 'T': G.connect_timeout = atof(optarg); break;
        case 'b': G.bind_range = atoi(optarg); bind_given = 1; break;
        case 'X': G.split_port = (uint16_t)atoi(optarg); break;
        case 't': G.threads = atoi(optarg); break;
        case 'i': G.idle = atol(optarg); break;
        case 'H': G.hold = atof(optarg); break;
        case 'S': G.slo_p99_ms = atof(optarg); break;
        case 'p': G.room_prefix = optarg; break;
        case 'C': G.close_timeout = atof(optarg); break;
        case 'v': G.verbose = 1; break;
        case 'q': G.quiet = 1; break;
        case 'M': G.markers = 1; break;
        case 'z': G.deflate = 1; break;
        case 'O':
            if (!deflate_offer(optarg)) { fprintf(stderr, "wsload: --deflate-offer must be client, plain, both or a 'permessage-deflate; ...' offer\n"); return 2; }
            break;
        case 'o': G.deflate_optional = 1; break;
        case 'L': G.deflate_level = atoi(optarg); if (G.deflate_level < 0 || G.deflate_level > 9) { fprintf(stderr, "wsload: --deflate-level is 0..9\n"); return 2; } break;
        case 'x':
            if (!strcmp(optarg, "chat")) G.text_chat = 1;
            else if (!strcmp(optarg, "pooled")) G.text_chat = 2;
            else if (!strcmp(optarg, "x")) G.text_chat = 0;
            else { fprintf(stderr, "wsload: --text is x, chat or pooled\n"); return 2; }
            break;
        case 'N': snprintf(G.sni, sizeof G.sni, "%s", optarg); G.sni_given = 1; break;
        case 'V':
            if (!strcmp(optarg, "1.3")) G.tls_version = 13;
            else if (!strcmp(optarg, "1.2")) G.tls_version = 12;
            else { fprintf(stderr, "wsload: --tls-version is 1.2 or 1.3\n"); return 2; }
            break;
        case 'Y':
            if (!strcmp(optarg, "openssl")) G.tls_reader_openssl = 1;
            else if (!strcmp(optarg, "own")) G.tls_reader_openssl = 0;
            else { fprintf(stderr, "wsload: --tls-reader is own or openssl\n"); return 2; }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    g_base = mono_abs();
    chat_init();
    relay_use();
    G.offer_cnct = strcasestr(G.deflate_offer, "client_no_context_takeover") != NULL;
    G.offer_cmwb = strcasestr(G.deflate_offer, "client_max_window_bits") != NULL;
    if (!G.url[0]) { usage(stderr); return 2; }
    if (G.text_chat == 2) pool_init();
    if (parse_url(G.url) < 0) return 2;
    if (G.tls) tls_setup();
    if (G.idle) {
        if (G.rooms <= 0) G.rooms = 1;
        G.members = 0; G.pubs_per_room = 0;
        g_nconns = G.idle;
    } else {
        if (G.rooms <= 0 || G.members <= 0) { fprintf(stderr, "wsload: --rooms and --members are required\n"); return 2; }
        if (G.pubs_per_room < 0 || G.pubs_per_room > G.members) { fprintf(stderr, "wsload: --publishers-per-room must be in 0..members\n"); return 2; }
        g_nconns = (long)G.rooms * G.members;
    }
    if (G.threads < 1 || G.threads > 64) return 2;
    if (G.window < 1) G.window = 1;
    if (G.size < 1) G.size = 1;
    if (G.duration <= 0 || G.duration > 3600 || G.warmup < 0 || G.hold < 0 || G.hold > 3600) { fprintf(stderr, "wsload: durations out of range\n"); return 2; }
    if (!bind_given && g_nconns > 25000) {
        G.bind_range = (int)((g_nconns + 24999) / 25000);
        fprintf(stderr, "wsload: %ld connections: using --bind-range %d automatically\n", g_nconns, G.bind_range);
    }
    if (!raise_nofile(g_nconns)) return 2;
    /* hard time bound */
    limit_run(G.connect_timeout + (G.connect_rate > 0 ? (double)g_nconns / G.connect_rate : (double)g_nconns / 200.0) +
              (G.idle ? G.hold : G.warmup + G.duration + G.drain) + G.close_timeout + 30);

    g_pad = malloc((size_t)G.size + 1);
    memset(g_pad, 'x', (size_t)G.size + 1);
    g_conns = calloc((size_t)g_nconns, sizeof(conn_t));
    g_npubs = G.idle ? 0 : G.rooms * G.pubs_per_room;
    g_pubs = calloc((size_t)(g_npubs ? g_npubs : 1), sizeof(pub_t));
    g_thr = calloc((size_t)G.threads, sizeof(thr_t));
    rx_t *rxs = NULL;
    if (!G.idle && G.pubs_per_room > 0) rxs = calloc((size_t)g_nconns * (size_t)G.pubs_per_room, sizeof(rx_t));
    if (!g_conns || !g_pubs || !g_thr || (!G.idle && G.pubs_per_room > 0 && !rxs)) die("out of memory");
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) != sizeof seed) seed = (uint64_t)mono_abs();
    for (int i = 0; i < G.threads; i++) {
        thr_t *t = &g_thr[i];
        thread_init(t, i, seed);
        if (G.text_chat) {
            t->chat_slots = G.size <= 4096 ? CHAT_SLOTS_MAX : 16; /* a power of two: slots are masked */
            t->chat = malloc((size_t)t->chat_slots * (size_t)G.size);
            if (!t->chat) die("out of memory (chat cache)");
        }
        t->conns = calloc((size_t)(g_nconns / G.threads + 1), sizeof(conn_t *));
        t->pubs = calloc((size_t)(g_npubs / G.threads + 2), sizeof(pub_t *));
    }
    for (long i = 0; i < g_nconns; i++) {
        conn_t *c = &g_conns[i];
        c->fd = -1;
        c->idx = (uint32_t)i;
        c->pid = -1;
        thr_t *t = &g_thr[i % G.threads];
        c->t = t;
        t->conns[t->nconns++] = c;
        if (G.idle) { c->room = (uint32_t)(i % G.rooms); continue; }
        c->room = (uint32_t)(i / G.members);
        int member = (int)(i % G.members);
        if (rxs) c->rx = rxs + (size_t)i * (size_t)G.pubs_per_room;
        if (member < G.pubs_per_room) {
            int pid = (int)c->room * G.pubs_per_room + member;
            c->pid = pid;
            pub_t *pb = &g_pubs[pid];
            pb->c = c; pb->room = c->room; pb->local = (uint32_t)member;
            if (G.rate == 0) pb->ring = calloc((size_t)G.window, sizeof(uint32_t));
            t->pubs[t->npubs++] = pb;
        }
    }
    if (G.threads > 1) pthread_barrier_init(&g_bar, NULL, (unsigned)G.threads);
    g_t_connect0 = now_ns();
    if (G.threads == 1) thread_main(&g_thr[0]);
    else {
        for (int i = 0; i < G.threads; i++) pthread_create(&g_thr[i].th, NULL, thread_main, &g_thr[i]);
        for (int i = 0; i < G.threads; i++) pthread_join(g_thr[i].th, NULL);
    }

    /* aggregate */
    ctr_t K = {0};
    static hist_t lat, lag, cl;
    const char *first_err = "", *tls_desc = "", *pmd_resp = "";
    for (int i = 0; i < G.threads; i++) {
        thr_t *t = &g_thr[i];
        uint64_t *d = (uint64_t *)&K, *s = (uint64_t *)&t->k;
        for (size_t j = 0; j < sizeof(ctr_t) / sizeof(uint64_t); j++) d[j] += s[j];
        hmerge(&lat, &t->lat); hmerge(&lag, &t->lag); hmerge(&cl, &t->conn_lat);
        if (!first_err[0] && t->first_err[0]) first_err = t->first_err;
        if (!tls_desc[0] && t->tls_desc[0]) tls_desc = t->tls_desc;
        if (!pmd_resp[0] && t->pmd_resp[0]) pmd_resp = t->pmd_resp;
    }
    double connect_s = (double)(g_connect_end - g_t_connect0) / 1e9;
    uint64_t lost = K.expected > K.delivered ? K.expected - K.delivered : 0;
    uint64_t excess = K.delivered > K.expected ? K.delivered - K.expected : 0;
    double cpu = G.idle ? 0 : cpu_pct(&g_ru0, &g_ru1, g_cpu_t0, g_cpu_t1);
    uint64_t errors = K.proto_err + K.server_close + K.eof_err + K.io_err + K.overflow;
    bool ok = K.conn_fail == 0 && lost == 0 && excess == 0 && K.ooo == 0 && K.dups == 0 && K.cross_room == 0 &&
              K.self_echo == 0 && K.bad_payload == 0 && errors == 0;
    double p99ms = (double)hpct(&lat, 0.99) / 1e6;
    bool slo_fail = ok && G.slo_p99_ms > 0 && (!lat.n || p99ms > G.slo_p99_ms);
    if (!G.quiet) {
        fprintf(stderr, "---- wsload %s: %s\n", G.idle ? "idle" : "relay", G.url);
        fprintf(stderr, "connections   : %ld attempted, %lu established, %lu failed (refused %lu, timeout %lu, handshake %lu, other %lu) in %.3f s\n",
                g_nconns, (unsigned long)K.conn_ok, (unsigned long)K.conn_fail, (unsigned long)K.fail_refused, (unsigned long)K.fail_timeout,
                (unsigned long)K.fail_handshake, (unsigned long)K.fail_other, connect_s);
        fprintf(stderr, "handshake ms  : p50 %.3f  p99 %.3f  max %.3f\n", (double)hpct(&cl, .5) / 1e6, (double)hpct(&cl, .99) / 1e6, (double)cl.max / 1e6);
        if (!G.idle) {
            char rs[64];
            if (G.rate) snprintf(rs, sizeof rs, "%lu publishes/s", (unsigned long)G.rate);
            else snprintf(rs, sizeof rs, "max (window %d per publisher)", G.window);
            fprintf(stderr, "workload      : %d rooms x %d members, %d publisher(s)/room, rate %s, %d-byte payload, %.1fs warmup + %.1fs measured\n",
                    G.rooms, G.members, G.pubs_per_room, rs, G.size, G.warmup, G.duration);
            fprintf(stderr, "messages      : sent %lu (measured %lu, %.0f/s), expected deliveries %lu, delivered %lu, lost %lu\n",
                    (unsigned long)K.sent, (unsigned long)K.sent_meas, (double)K.sent_meas / G.duration, (unsigned long)K.expected,
                    (unsigned long)K.delivered, (unsigned long)lost);
            fprintf(stderr, "correctness   : out-of-order %lu, duplicates %lu, wrong-room %lu, self-echo %lu, bad payload %lu, unsent(overflow) %lu\n",
                    (unsigned long)K.ooo, (unsigned long)K.dups, (unsigned long)K.cross_room, (unsigned long)K.self_echo,
                    (unsigned long)K.bad_payload, (unsigned long)K.overflow);
            fprintf(stderr, "throughput    : %.0f deliveries/s (measured window)\n", (double)K.delivered_meas / G.duration);
            fprintf(stderr, "latency ms    : p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  (n=%lu)\n", (double)hpct(&lat, .5) / 1e6,
                    (double)hpct(&lat, .9) / 1e6, (double)hpct(&lat, .99) / 1e6, (double)hpct(&lat, .999) / 1e6, (double)lat.max / 1e6,
                    (unsigned long)lat.n);
            fprintf(stderr, "send lag ms   : p50 %.3f  p99 %.3f  max %.3f   client cpu %.0f%%\n", (double)hpct(&lag, .5) / 1e6,
                    (double)hpct(&lag, .99) / 1e6, (double)lag.max / 1e6, cpu);
        }
        fprintf(stderr, "errors        : server closes %lu, protocol %lu, EOF %lu, io %lu; pings answered %lu; clean closes %lu, unclean %lu\n",
                (unsigned long)K.server_close, (unsigned long)K.proto_err, (unsigned long)K.eof_err, (unsigned long)K.io_err,
                (unsigned long)K.pings, (unsigned long)K.clean_close, (unsigned long)K.unclean_close);
        if (G.tls) fprintf(stderr, "tls           : %lu connections (%lu read by wsload), %s, SNI '%s'\n", (unsigned long)K.tls_conns, (unsigned long)K.tls_own_conns, tls_desc[0] ? tls_desc : "none", G.sni);
        if (G.deflate)
            fprintf(stderr, "deflate       : offered '%s'; answer '%s' on %lu conns; in: %lu compressed msgs %lu -> %lu bytes (%.2fx), %lu plain; "
                    "out: %lu msgs %lu -> %lu bytes (%.2fx)\n",
                    G.deflate_offer, pmd_resp, (unsigned long)K.pmd_conns, (unsigned long)K.z_msgs_in, (unsigned long)K.z_wire_in,
                    (unsigned long)K.z_raw_in, K.z_wire_in ? (double)K.z_raw_in / (double)K.z_wire_in : 0.0, (unsigned long)K.z_plain_msgs_in,
                    (unsigned long)K.z_msgs_out, (unsigned long)K.z_raw_out, (unsigned long)K.z_wire_out,
                    K.z_wire_out ? (double)K.z_raw_out / (double)K.z_wire_out : 0.0);
        if (first_err[0]) fprintf(stderr, "first error   : %s\n", first_err);
        fprintf(stderr, "result        : %s\n", !ok ? "FAIL" : slo_fail ? "SLO MISS (p99)" : "OK");
    }
    char errbuf[600];
    size_t eo = 0;
    for (const char *p = first_err; *p && eo < sizeof errbuf - 3; p++) {
        if (*p == '"' || *p == '\\') errbuf[eo++] = '\\';
        errbuf[eo++] = (*p >= 32 && *p < 127) ? *p : '?';
    }
    errbuf[eo] = 0;
    printf("{\"tool\":\"wsload\",\"version\":\"" WSLOAD_VERSION "\",\"mode\":\"%s\",\"url_template\":\"%s\",\"rooms\":%d,\"members\":%d,"
           "\"publishers_per_room\":%d,\"rate\":%lu,\"window\":%d,\"size\":%d,\"duration_s\":%.3f,\"warmup_s\":%.3f,\"threads\":%d,",
           G.idle ? "idle" : "relay", G.url, G.rooms, G.members, G.pubs_per_room, (unsigned long)G.rate, G.window, G.size,
           G.duration, G.warmup, G.threads);
    printf("\"connections\":%ld,\"conn_established\":%lu,\"conn_failed\":%lu,\"connect_s\":%.3f,\"handshake_ms\":{\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f},",
           g_nconns, (unsigned long)K.conn_ok, (unsigned long)K.conn_fail, connect_s, (double)hpct(&cl, .5) / 1e6, (double)hpct(&cl, .99) / 1e6,
           (double)cl.max / 1e6);
    printf("\"sent\":%lu,\"sent_measured\":%lu,\"expected\":%lu,\"delivered\":%lu,\"lost\":%lu,\"out_of_order\":%lu,\"duplicates\":%lu,"
           "\"wrong_room\":%lu,\"self_echo\":%lu,\"bad_payload\":%lu,\"unsent_overflow\":%lu,",
           (unsigned long)K.sent, (unsigned long)K.sent_meas, (unsigned long)K.expected, (unsigned long)K.delivered, (unsigned long)lost,
           (unsigned long)K.ooo, (unsigned long)K.dups, (unsigned long)K.cross_room, (unsigned long)K.self_echo, (unsigned long)K.bad_payload,
           (unsigned long)K.overflow);
    printf("\"sent_per_s\":%.1f,\"delivered_per_s\":%.1f,\"latency_us\":{\"n\":%lu,\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p999\":%.1f,\"max\":%.1f,\"mean\":%.1f},",
           (double)K.sent_meas / G.duration, (double)K.delivered_meas / G.duration, (unsigned long)lat.n, US(hpct(&lat, .5)), US(hpct(&lat, .9)),
           US(hpct(&lat, .99)), US(hpct(&lat, .999)), US(lat.max), lat.n ? US(lat.sum / lat.n) : 0.0);
    printf("\"send_lag_us\":{\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f},\"client_cpu_pct\":%.1f,",
           US(hpct(&lag, .5)), US(hpct(&lag, .99)), US(lag.max), cpu);
    char offer_js[400], resp_js[400];
    json_str(offer_js, sizeof offer_js, G.deflate ? G.deflate_offer : "");
    json_str(resp_js, sizeof resp_js, pmd_resp);
    printf("\"text\":\"%s\",\"tls\":{\"on\":%s,\"conns\":%lu,\"own_reader_conns\":%lu,\"negotiated\":\"%s\",\"sni\":\"%s\"},",
           G.text_chat == 2 ? "pooled" : G.text_chat ? "chat" : "x", G.tls ? "true" : "false", (unsigned long)K.tls_conns, (unsigned long)K.tls_own_conns, tls_desc, G.tls ? G.sni : "");
    printf("\"deflate\":{\"offered\":%s,\"offer\":\"%s\",\"answer\":\"%s\",\"conns\":%lu,\"msgs_in_compressed\":%lu,"
           "\"msgs_in_plain\":%lu,\"payload_in_wire\":%lu,\"payload_in_inflated\":%lu,\"msgs_out_compressed\":%lu,\"msgs_out_pooled\":%lu,"
           "\"payload_out_raw\":%lu,\"payload_out_wire\":%lu,\"inflate_cache_hits\":%lu},",
           G.deflate ? "true" : "false", offer_js, resp_js, (unsigned long)K.pmd_conns, (unsigned long)K.z_msgs_in,
           (unsigned long)K.z_plain_msgs_in, (unsigned long)K.z_wire_in, (unsigned long)K.z_raw_in, (unsigned long)K.z_msgs_out,
           (unsigned long)K.z_pooled_out, (unsigned long)K.z_raw_out, (unsigned long)K.z_wire_out, (unsigned long)K.z_cache_hits);
    printf("\"errors\":{\"server_closes\":%lu,\"protocol\":%lu,\"eof\":%lu,\"io\":%lu},\"pings_answered\":%lu,\"clean_closes\":%lu,"
           "\"unclean_closes\":%lu,\"bytes_in\":%lu,\"bytes_out\":%lu,\"first_error\":\"%s\",\"ok\":%s,\"slo_ok\":%s}\n",
           (unsigned long)K.server_close, (unsigned long)K.proto_err, (unsigned long)K.eof_err, (unsigned long)K.io_err,
           (unsigned long)K.pings, (unsigned long)K.clean_close, (unsigned long)K.unclean_close, (unsigned long)K.bytes_in,
           (unsigned long)K.bytes_out, errbuf, ok ? "true" : "false", slo_fail ? "false" : "true");
    fflush(stdout);
    return !ok ? 1 : slo_fail ? 3 : 0;
}
