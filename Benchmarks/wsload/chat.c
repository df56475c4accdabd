/*
 * Chat modes: load on Switchboard's JSON chat protocol on /ws, over the shared client (so ws:// or
 * wss://, like the relay). One event loop thread.
 *   durable  N connections, closed loop: each keeps W `send` requests in flight to its group and
 *            measures ack latency (request written -> `ok` reply) and acked sends/s.
 *   fanout   G groups x M subscribed connections; member 0 of each group sends at an open-loop
 *            total rate R (message k to sender k mod G at t0 + k/R); the other M-1 members must
 *            receive every `message` event of their group, in order; latency is measured from
 *            the scheduled send time (coordinated-omission safe).
 *
 * Set-up: U control connections sign up one user each (password hashing costs the server ~100 ms
 * per signup, so users are few) and create the groups (group g belongs to user g mod U); every
 * data connection then opens /ws?token=<its user's token>.
 */
#include "wsload.h"

#define GID_MAX 64
#define SUBSCRIBE_ID 0 /* request id of a data connection's subscribe; sends count from 1 */
#define SIGNUP_ID 0    /* request id of a control connection's signup; creates are 1 + group */

static thr_t *T;               /* the one event loop */
static long g_ndata;
static int g_ncontrol;
static char (*g_gid)[GID_MAX]; /* group index -> server group id */
static char **g_token;         /* user index -> session token */
static uint32_t *g_nrecv;      /* group -> receivers subscribed when traffic started */
static int g_groups_made, g_users_made;
/* when a signup the server refused as rate_limited ("busy checking passwords") is sent again, per user; 0: none */
static uint64_t *g_signup_retry;
static char g_email_tag[32];

static inline char *put_str(char *p, const char *s) {
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}
/* the plain string value after `key` ("name":"), copied into out; 0 if absent, escaped or too long */
static int json_field(const uint8_t *p, size_t n, const char *key, char *out, size_t cap) {
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

/* text "p<group> s<seq> t<ns> m<0|1> " + 'x' padding up to size (the relay's payload shape) */
static size_t text_payload(char *buf, uint32_t pid, uint64_t seq, uint64_t ts, int meas, size_t size) {
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
static void send_json(conn_t *c, const char *json, size_t n) { ws_frame(T, c, 1, (const uint8_t *)json, n); }

static void control_signup(conn_t *c) {
    char req[512];
    int n = snprintf(req, sizeof req,
                     "{\"op\":\"signup\",\"id\":%d,\"email\":\"wsload-%s-%u@example.com\",\"password\":\"wsload-password\","
                     "\"name\":\"wsload %u\"}", SIGNUP_ID, g_email_tag, c->user, c->user);
    send_json(c, req, (size_t)n);
}

static void control_create_groups(conn_t *c) {
    for (int g = (int)c->user; g < G.groups; g += G.users) {
        char req[256];
        int n = snprintf(req, sizeof req, "{\"op\":\"create\",\"id\":%d,\"name\":\"wsload %d\"}", 1 + g, g);
        send_json(c, req, (size_t)n);
    }
}

static void data_subscribe(conn_t *c) {
    char req[256];
    int n = snprintf(req, sizeof req, "{\"op\":\"subscribe\",\"id\":%d,\"group\":\"%s\",\"limit\":1}", SUBSCRIBE_ID, g_gid[c->room]);
    send_json(c, req, (size_t)n);
}

/* one `send` request with id `id` and `text` as its text (no characters that need escaping) */
static void send_request(conn_t *c, uint64_t id, const char *text, size_t tn) {
    char req[1024 + 256];
    char *p = req;
    p = put_str(p, "{\"op\":\"send\",\"id\":");
    p = put_u64(p, id);
    p = put_str(p, ",\"group\":\"");
    p = put_str(p, g_gid[c->room]);
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
        T->k.sent++;
        if (now >= g_t_meas) T->k.sent_meas++;
    }
}

/* ------------------------------------------------------------------ */
/* chat protocol: replies and events                                   */
static void on_ack(conn_t *c, uint64_t id, bool ok, const uint8_t *p, size_t n, uint64_t now) {
    if (G.mode == MODE_DURABLE) {
        slot_t *s = &c->slots[id % (uint64_t)G.window];
        if (c->inflight == 0 || s->id != id || s->t == 0) {
            T->k.bad_reply++;
            note_err(T, "reply with unexpected id %lu on conn %u", (unsigned long)id, c->idx);
            return;
        }
        uint64_t sent_at = s->t;
        s->t = 0;
        c->inflight--;
        if (ok) {
            T->k.acked++;
            if (now >= g_t_meas && now < g_t_send_end) { T->k.acked_meas++; hrec(&T->ack, now - sent_at); }
        }
        durable_fill(c, now);
    } else {
        if (id != c->next_ack) {
            T->k.bad_reply++;
            note_err(T, "ack %lu out of order on conn %u (expected %lu)", (unsigned long)id, c->idx, (unsigned long)c->next_ack);
        }
        c->next_ack = id + 1;
        if (c->inflight) c->inflight--;
        /* request id = seq + 1; message k = seq * G + group was scheduled at t0 + k / R */
        uint64_t k = (id - 1) * (uint64_t)G.groups + c->room;
        uint64_t sched = g_t_traffic + (uint64_t)((unsigned __int128)k * 1000000000ull / G.rate);
        if (ok) {
            T->k.acked++;
            if (sched >= g_t_meas) { T->k.acked_meas++; hrec(&T->ack, now > sched ? now - sched : 0); }
        }
    }
    if (!ok) {
        char code[64] = "?", msg[160] = "?";
        json_field(p, n, "\"code\":\"", code, sizeof code);
        json_field(p, n, "\"message\":\"", msg, sizeof msg);
        T->k.reply_err++;
        note_err(T, "error reply to request %lu on conn %u: %s: %s", (unsigned long)id, c->idx, code, msg);
    }
}

static void on_event_message(conn_t *c, const uint8_t *p, size_t n, uint64_t now) {
    char gid[GID_MAX];
    if (!json_field(p, n, "\"group\":\"", gid, sizeof gid)) goto bad;
    if (c->role == ROLE_SENDER) { T->k.self_echo++; note_err(T, "sender conn %u received its own message", c->idx); return; }
    if (c->role != ROLE_RECEIVER) { T->k.other_events++; return; }
    if (strcmp(gid, g_gid[c->room]) != 0) { T->k.cross_room++; note_err(T, "event for group %s on a conn of %s", gid, g_gid[c->room]); return; }
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
    if (pid != c->room) { T->k.cross_room++; note_err(T, "message of group %lu delivered to group %u", (unsigned long)pid, c->room); return; }
    if (!rx_accept(T, c->rx, seq)) return;
    if (meas) { T->k.delivered_meas++; hrec(&T->lat, now > ts ? now - ts : 0); }
    return;
bad:
    T->k.bad_payload++;
    note_err(T, "unexpected message event (%zu bytes) on conn %u: %.80s", n, c->idx, (const char *)p);
}

static void on_control_reply(conn_t *c, uint64_t id, bool ok, const uint8_t *p, size_t n) {
    char code[64] = "";
    if (!ok && id == SIGNUP_ID && json_field(p, n, "\"code\":\"", code, sizeof code) && !strcmp(code, "rate_limited")) {
        /* the password workers' queue was full: a client tries again a second later */
        g_signup_retry[c->user] = now_ns() + 1000000000ull;
        return;
    }
    if (!ok) {
        char msg[160] = "?";
        json_field(p, n, "\"message\":\"", msg, sizeof msg);
        T->k.reply_err++;
        note_err(T, "set-up request %lu of user %u failed: %s", (unsigned long)id, c->user, msg);
        return;
    }
    if (id == SIGNUP_ID) {
        char tok[1024];
        if (!json_field(p, n, "\"token\":\"", tok, sizeof tok)) { T->k.bad_reply++; note_err(T, "signup reply without token"); return; }
        g_token[c->user] = strdup(tok);
        g_users_made++;
        control_create_groups(c);
        return;
    }
    uint64_t g = id - 1;
    if (id < 1 || g >= (uint64_t)G.groups || !json_field(p, n, "\"group\":{\"id\":\"", g_gid[g], GID_MAX)) {
        T->k.bad_reply++;
        note_err(T, "unexpected set-up reply: %.80s", (const char *)p);
        return;
    }
    g_groups_made++;
}

static void on_text(thr_t *t, conn_t *c, const uint8_t *p, size_t n, uint64_t now) {
    (void)t;
    /* every server frame is {"op":"<name>",...}; replies carry "id" right after "op" */
    static const char pre[] = "{\"op\":\"";
    if (n < sizeof pre + 1 || memcmp(p, pre, sizeof pre - 1) != 0) {
        T->k.bad_reply++;
        note_err(T, "frame is not a chat protocol object: %.60s", (const char *)p);
        return;
    }
    const uint8_t *op = p + sizeof pre - 1, *end = p + n;
    const uint8_t *oq = memchr(op, '"', (size_t)(end - op));
    if (!oq) { T->k.bad_reply++; return; }
    size_t ol = (size_t)(oq - op);
    bool ok = ol == 2 && !memcmp(op, "ok", 2), err = ol == 5 && !memcmp(op, "error", 5);
    if (ok || err) {
        const uint8_t *q = oq + 1;
        uint64_t id;
        if (end - q < 6 || memcmp(q, ",\"id\":", 6) != 0 || (q += 6, !parse_u64(&q, end, &id))) {
            char msg[160] = "?";
            json_field(p, n, "\"message\":\"", msg, sizeof msg);
            T->k.reply_err++;
            note_err(T, "reply without id on conn %u: %s", c->idx, msg);
            return;
        }
        if (c->role == ROLE_CONTROL) { on_control_reply(c, id, ok, p, n); return; }
        if (id == SUBSCRIBE_ID && !c->ready) {
            if (ok) c->ready = 1;
            else { T->k.reply_err++; note_err(T, "subscribe failed on conn %u: %.120s", c->idx, (const char *)p); }
            return;
        }
        on_ack(c, id, ok, p, n, now);
        return;
    }
    if (ol == 7 && !memcmp(op, "message", 7)) { on_event_message(c, p, n, now); return; }
    T->k.other_events++; /* presence, member, typing, receipt, pong */
}

/* the upgrade request's path: the URL's, with the user's token for data connections */
static void build_path(const conn_t *c, char *out, size_t cap) {
    const char *tok = c->role == ROLE_CONTROL ? NULL : g_token[c->user];
    snprintf(out, cap, "%s%s%s", G.path, tok ? (strchr(G.path, '?') ? "&token=" : "?token=") : "", tok ? tok : "");
}

/* the connection just opened: control connections sign up, receivers and senders subscribe */
static void on_open(thr_t *t, conn_t *c) {
    (void)t;
    if (c->role == ROLE_CONTROL) control_signup(c);
    else if (G.mode == MODE_FANOUT) data_subscribe(c);
    else c->ready = 1;
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
        while (next < to && T->hs_pending < G.max_pending) start_connect(T, &g_conns[next++]);
        if (next >= to && T->hs_pending == 0 && done()) break;
        if (now >= deadline) { note_err(T, "set-up did not finish within the connect timeout"); break; }
        for (long i = from; i < next && i < g_ncontrol; i++) {
            conn_t *c = &g_conns[i];
            if (g_signup_retry[c->user] && now >= g_signup_retry[c->user] && c->st == ST_OPEN) {
                g_signup_retry[c->user] = 0;
                control_signup(c);
            }
        }
        if (now - last_scan > 50000000ull) {
            last_scan = now;
            for (long i = from; i < next; i++) {
                conn_t *c = &g_conns[i];
                if (st_connecting(c->st) && now > c->t_start && now - c->t_start > to_ns) {
                    note_err(T, "connect/handshake timeout (conn %u)", c->idx);
                    conn_fail(T, c, 2);
                }
            }
        }
        poll_once(T, 20);
        if (G.verbose && now - lastp > 1000000000ull) {
            lastp = now;
            fprintf(stderr, "wsload: connecting... started=%ld ok=%lu fail=%lu pending=%d\n", next - from,
                    (unsigned long)T->k.conn_ok, (unsigned long)T->k.conn_fail, T->hs_pending);
        }
    }
}

static bool setup_done(void) {
    int live = 0;
    for (int i = 0; i < g_ncontrol; i++) live += g_conns[i].st == ST_OPEN;
    return g_groups_made == G.groups || live < g_ncontrol || T->k.reply_err || T->k.bad_reply;
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
        if (c->role == ROLE_RECEIVER && c->st == ST_OPEN && c->ready) g_nrecv[c->room]++;
    }
}

static conn_t *sender_of(uint32_t g) { return &g_conns[g_ncontrol + (long)g * G.members]; }

static void fanout_publish(conn_t *c, uint64_t sched, uint64_t now, char *scratch) {
    if (c->st != ST_OPEN || !c->ready) { T->k.skipped++; return; }
    if (c->ob_len - c->ob_off > G.max_outbuf) {
        T->k.overflow++;
        note_err(T, "sender of group %u: %zu bytes unsent (server not reading)", c->room, c->ob_len - c->ob_off);
        return;
    }
    int meas = sched >= g_t_meas;
    uint64_t seq = c->next_id - 1;
    size_t n = text_payload(scratch, c->room, seq, sched, meas, (size_t)G.size);
    send_request(c, c->next_id++, scratch, n);
    c->inflight++;
    T->k.sent++;
    T->k.expected += g_nrecv[c->room];
    if (meas) { T->k.sent_meas++; hrec(&T->lag, now > sched ? now - sched : 0); }
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
        flush_dirty(T);
        if (now >= g_t_send_end) break;
        uint64_t wake = g_t_send_end;
        if (G.mode == MODE_FANOUT) {
            uint64_t sched = g_t_traffic + (uint64_t)((unsigned __int128)k * 1000000000ull / G.rate);
            if (sched < wake) wake = sched;
        }
        arm_timer(T, wake);
        poll_once(T, 100);
        if (G.verbose) {
            static uint64_t lastp;
            uint64_t n2 = now_ns();
            if (n2 - lastp > 1000000000ull) {
                lastp = n2;
                fprintf(stderr, "wsload: t=%.1fs sent=%lu acked=%lu delivered=%lu expected=%lu\n", (double)(n2 - g_t_traffic) / 1e9,
                        (unsigned long)T->k.sent, (unsigned long)T->k.acked, (unsigned long)T->k.delivered, (unsigned long)T->k.expected);
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
        if (T->k.delivered >= T->k.expected && outstanding_acks() == 0) break;
        poll_once(T, 5);
    }
}

/* ------------------------------------------------------------------ */
/* CLI                                                                 */
static void usage(FILE *f) {
    fprintf(f,
"wsload " WSLOAD_VERSION " - chat load for Switchboard's JSON protocol on /ws (loopback only)\n"
"\n"
"durable: wsload durable --url ws://127.0.0.1:PORT/ws --conns N [--window W] [--groups G] [--users U]\n"
"fanout:  wsload fanout  --url ws://127.0.0.1:PORT/ws --groups G --members M --rate R [--users U]\n"
"\n"
"  --url U               ws://HOST[:PORT]/ws or wss://...; HOST must be 127.x.x.x or localhost\n"
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

int chat_main(int argc, char **argv) {
    static struct option opts[] = {
        {"url", 1, 0, 'u'}, {"conns", 1, 0, 'n'}, {"window", 1, 0, 'w'}, {"groups", 1, 0, 'g'}, {"members", 1, 0, 'm'},
        {"rate", 1, 0, 'R'}, {"users", 1, 0, 'U'}, {"size", 1, 0, 's'}, {"duration", 1, 0, 'd'}, {"warmup", 1, 0, 'W'},
        {"drain", 1, 0, 'D'}, {"connect-timeout", 1, 0, 'T'}, {"max-pending", 1, 0, 'P'}, {"slo-p99-ms", 1, 0, 'S'},
        {"verbose", 0, 0, 'v'}, {"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    G.conns = 8; G.window = 1; G.members = 50; G.users = 1; G.connect_timeout = 30;
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
    if (!strchr(G.url + (G.tls ? 6 : 5), '/')) snprintf(G.path, sizeof G.path, "/ws");
    if (G.tls) tls_setup();
    if (G.mode == MODE_DURABLE) {
        if (G.conns < 1 || G.window < 1) { fprintf(stderr, "wsload: --conns and --window must be >= 1\n"); return 2; }
        if (G.groups <= 0) G.groups = G.conns;
        g_ndata = G.conns;
    } else {
        if (G.groups < 1 || G.members < 2 || G.rate < 1) { fprintf(stderr, "wsload: fanout needs --groups >= 1, --members >= 2, --rate >= 1\n"); return 2; }
        g_ndata = (long)G.groups * G.members;
    }
    if (G.users < 1) G.users = 1;
    if (G.users > G.groups) G.users = G.groups;
    if (G.size < 1 || G.size > 1000) { fprintf(stderr, "wsload: --size must be in 1..1000\n"); return 2; }
    if (G.duration <= 0 || G.duration > 3600 || G.warmup < 0 || G.drain < 0) { fprintf(stderr, "wsload: durations out of range\n"); return 2; }
    g_ncontrol = G.users;
    g_nconns = g_ncontrol + g_ndata;

    if (!raise_nofile(g_nconns)) return 2;
    limit_run(2 * G.connect_timeout + G.warmup + G.duration + G.drain + G.close_timeout + 30);

    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) != sizeof seed) seed = mono_abs();
    g_thr = calloc(1, sizeof(thr_t));
    if (!g_thr) die("out of memory");
    T = &g_thr[0];
    thread_init(T, 0, seed);
    g_mode.build_path = build_path;
    g_mode.on_open = on_open;
    g_mode.on_text = on_text;
    snprintf(g_email_tag, sizeof g_email_tag, "%d-%08lx", (int)getpid(), (unsigned long)(xrand(T) & 0xffffffffu));
    g_pad = malloc((size_t)G.size + 1);
    g_conns = calloc((size_t)g_nconns, sizeof(conn_t));
    rx_t *rxs = calloc((size_t)g_nconns, sizeof(rx_t));
    T->conns = calloc((size_t)g_nconns, sizeof(conn_t *));
    g_gid = calloc((size_t)G.groups, GID_MAX);
    g_token = calloc((size_t)G.users, sizeof(char *));
    g_signup_retry = calloc((size_t)G.users, sizeof(uint64_t));
    g_nrecv = calloc((size_t)G.groups, sizeof(uint32_t));
    if (!g_pad || !g_conns || !rxs || !T->conns || !g_gid || !g_token || !g_signup_retry || !g_nrecv) die("out of memory");
    memset(g_pad, 'x', (size_t)G.size + 1);
    for (long i = 0; i < g_nconns; i++) {
        conn_t *c = &g_conns[i];
        c->fd = -1;
        c->idx = (uint32_t)i;
        c->t = T;
        c->rx = &rxs[i];
        T->conns[T->nconns++] = c;
        c->next_id = 1;
        c->next_ack = 1;
        if (i < g_ncontrol) { c->role = ROLE_CONTROL; c->user = (uint32_t)i; continue; }
        long d = i - g_ncontrol;
        if (G.mode == MODE_DURABLE) {
            c->room = (uint32_t)(d % G.groups);
            c->role = ROLE_SENDER;
            c->slots = calloc((size_t)G.window, sizeof(slot_t));
            if (!c->slots) die("out of memory (slots)");
        } else {
            c->room = (uint32_t)(d / G.members);
            c->role = d % G.members == 0 ? ROLE_SENDER : ROLE_RECEIVER;
        }
        c->user = c->room % (uint32_t)G.users;
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
        while (now_ns() < g_t_traffic) poll_once(T, 1);
        getrusage(RUSAGE_SELF, &ru0); cpu_t0 = now_ns();
        traffic_phase();
        getrusage(RUSAGE_SELF, &ru1); cpu_t1 = now_ns();
        drain_phase();
    }
    uint64_t pending_acks = outstanding_acks();
    close_phase(T);

    uint64_t lost = T->k.expected > T->k.delivered ? T->k.expected - T->k.delivered : 0;
    uint64_t excess = T->k.delivered > T->k.expected ? T->k.delivered - T->k.expected : 0;
    double cpu = cpu_pct(&ru0, &ru1, cpu_t0, cpu_t1);
    uint64_t errors = T->k.proto_err + T->k.server_close + T->k.eof_err + T->k.io_err + T->k.overflow;
    bool ok = setup_ok && T->k.conn_fail == 0 && ready == g_ndata && lost == 0 && excess == 0 && pending_acks == 0 &&
              T->k.ooo == 0 && T->k.dups == 0 && T->k.cross_room == 0 && T->k.self_echo == 0 && T->k.bad_payload == 0 &&
              T->k.reply_err == 0 && T->k.bad_reply == 0 && T->k.skipped == 0 && errors == 0 && T->k.sent > 0;
    const hist_t *slo_h = G.mode == MODE_FANOUT ? &T->lat : &T->ack;
    bool slo_fail = ok && G.slo_p99_ms > 0 && (!slo_h->n || (double)hpct(slo_h, 0.99) / 1e6 > G.slo_p99_ms);
    bool fan = G.mode == MODE_FANOUT;
    if (!G.quiet) {
        fprintf(stderr, "---- wsload %s: %s\n", fan ? "fanout" : "durable", G.url);
        fprintf(stderr, "set-up        : %d user(s), %d/%d groups in %.3f s; %ld/%ld data connections ready in %.3f s (failed %lu)\n",
                g_users_made, g_groups_made, G.groups, setup_s, ready, g_ndata, connect_s, (unsigned long)T->k.conn_fail);
        if (fan)
            fprintf(stderr, "workload      : %d groups x %d members, 1 sender/group, %lu sends/s, %d-byte text, %.1fs warmup + %.1fs measured\n",
                    G.groups, G.members, (unsigned long)G.rate, G.size, G.warmup, G.duration);
        else
            fprintf(stderr, "workload      : %d connections, window %d, %d groups, %d-byte text, %.1fs warmup + %.1fs measured\n",
                    G.conns, G.window, G.groups, G.size, G.warmup, G.duration);
        fprintf(stderr, "sends         : sent %lu (measured %lu), acked %lu (measured %lu, %.0f/s), error replies %lu, bad replies %lu, unacked %lu\n",
                (unsigned long)T->k.sent, (unsigned long)T->k.sent_meas, (unsigned long)T->k.acked, (unsigned long)T->k.acked_meas,
                (double)T->k.acked_meas / G.duration, (unsigned long)T->k.reply_err, (unsigned long)T->k.bad_reply, (unsigned long)pending_acks);
        fprintf(stderr, "ack latency ms: p50 %.3f  p90 %.3f  p99 %.3f  max %.3f  (n=%lu)\n", (double)hpct(&T->ack, .5) / 1e6,
                (double)hpct(&T->ack, .9) / 1e6, (double)hpct(&T->ack, .99) / 1e6, (double)T->ack.max / 1e6, (unsigned long)T->ack.n);
        if (fan) {
            fprintf(stderr, "deliveries    : expected %lu, delivered %lu, lost %lu; out-of-order %lu, duplicates %lu, wrong group %lu, self-echo %lu, bad payload %lu\n",
                    (unsigned long)T->k.expected, (unsigned long)T->k.delivered, (unsigned long)lost, (unsigned long)T->k.ooo, (unsigned long)T->k.dups,
                    (unsigned long)T->k.cross_room, (unsigned long)T->k.self_echo, (unsigned long)T->k.bad_payload);
            fprintf(stderr, "throughput    : %.0f deliveries/s (measured window)\n", (double)T->k.delivered_meas / G.duration);
            fprintf(stderr, "latency ms    : p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  (n=%lu)\n", (double)hpct(&T->lat, .5) / 1e6,
                    (double)hpct(&T->lat, .9) / 1e6, (double)hpct(&T->lat, .99) / 1e6, (double)hpct(&T->lat, .999) / 1e6,
                    (double)T->lat.max / 1e6, (unsigned long)T->lat.n);
            fprintf(stderr, "send lag ms   : p50 %.3f  p99 %.3f  max %.3f\n", (double)hpct(&T->lag, .5) / 1e6, (double)hpct(&T->lag, .99) / 1e6,
                    (double)T->lag.max / 1e6);
        }
        fprintf(stderr, "client cpu    : %.0f%%\n", cpu);
        fprintf(stderr, "errors        : server closes %lu, protocol %lu, EOF %lu, io %lu, unsent %lu, skipped %lu; pings %lu; other events %lu\n",
                (unsigned long)T->k.server_close, (unsigned long)T->k.proto_err, (unsigned long)T->k.eof_err, (unsigned long)T->k.io_err,
                (unsigned long)T->k.overflow, (unsigned long)T->k.skipped, (unsigned long)T->k.pings, (unsigned long)T->k.other_events);
        if (T->first_err[0]) fprintf(stderr, "first error   : %s\n", T->first_err);
        fprintf(stderr, "result        : %s\n", !ok ? "FAIL" : slo_fail ? "SLO MISS (p99)" : "OK");
    }
    char errbuf[600];
    size_t eo = 0;
    for (const char *p = T->first_err; *p && eo < sizeof errbuf - 3; p++) {
        if (*p == '"' || *p == '\\') errbuf[eo++] = '\\';
        errbuf[eo++] = (*p >= 32 && *p < 127) ? *p : '?';
    }
    errbuf[eo] = 0;
    printf("{\"tool\":\"wsload\",\"version\":\"" WSLOAD_VERSION "\",\"mode\":\"%s\",\"url\":\"%s\",\"conns\":%ld,\"window\":%d,"
           "\"groups\":%d,\"members\":%d,\"users\":%d,\"rate\":%lu,\"size\":%d,\"duration_s\":%.3f,\"warmup_s\":%.3f,",
           fan ? "fanout" : "durable", G.url, g_ndata, fan ? 0 : G.window, G.groups, fan ? G.members : 0, G.users,
           fan ? (unsigned long)G.rate : 0ul, G.size, G.duration, G.warmup);
    printf("\"setup_s\":%.3f,\"connect_s\":%.3f,\"conn_ready\":%ld,\"conn_failed\":%lu,\"handshake_ms\":{\"p50\":%.3f,\"p99\":%.3f},",
           setup_s, connect_s, ready, (unsigned long)T->k.conn_fail, (double)hpct(&T->conn_lat, .5) / 1e6, (double)hpct(&T->conn_lat, .99) / 1e6);
    printf("\"sent\":%lu,\"sent_measured\":%lu,\"acked\":%lu,\"acked_measured\":%lu,\"acked_per_s\":%.1f,\"error_replies\":%lu,"
           "\"bad_replies\":%lu,\"unacked\":%lu,",
           (unsigned long)T->k.sent, (unsigned long)T->k.sent_meas, (unsigned long)T->k.acked, (unsigned long)T->k.acked_meas,
           (double)T->k.acked_meas / G.duration, (unsigned long)T->k.reply_err, (unsigned long)T->k.bad_reply, (unsigned long)pending_acks);
    print_hist_json("ack_latency_us", &T->ack);
    printf("\"expected\":%lu,\"delivered\":%lu,\"lost\":%lu,\"out_of_order\":%lu,\"duplicates\":%lu,\"wrong_group\":%lu,\"self_echo\":%lu,"
           "\"bad_payload\":%lu,\"delivered_per_s\":%.1f,",
           (unsigned long)T->k.expected, (unsigned long)T->k.delivered, (unsigned long)lost, (unsigned long)T->k.ooo, (unsigned long)T->k.dups,
           (unsigned long)T->k.cross_room, (unsigned long)T->k.self_echo, (unsigned long)T->k.bad_payload, (double)T->k.delivered_meas / G.duration);
    print_hist_json("latency_us", &T->lat);
    printf("\"send_lag_us\":{\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f},\"client_cpu_pct\":%.1f,", US(hpct(&T->lag, .5)),
           US(hpct(&T->lag, .99)), US(T->lag.max), cpu);
    printf("\"errors\":{\"server_closes\":%lu,\"protocol\":%lu,\"eof\":%lu,\"io\":%lu,\"unsent\":%lu,\"skipped\":%lu},\"other_events\":%lu,"
           "\"bytes_in\":%lu,\"bytes_out\":%lu,\"first_error\":\"%s\",\"ok\":%s,\"slo_ok\":%s}\n",
           (unsigned long)T->k.server_close, (unsigned long)T->k.proto_err, (unsigned long)T->k.eof_err, (unsigned long)T->k.io_err,
           (unsigned long)T->k.overflow, (unsigned long)T->k.skipped, (unsigned long)T->k.other_events, (unsigned long)T->k.bytes_in,
           (unsigned long)T->k.bytes_out, errbuf, ok ? "true" : "false", slo_fail ? "false" : "true");
    fflush(stdout);
    return !ok ? 1 : slo_fail ? 3 : 0;
}
