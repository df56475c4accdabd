/*
 * permessage-deflate (RFC 7692): the answer to the offer, inflating what the server sends (with a
 * per-thread cache for stateless fan-out) and compressing what publishers send.
 */
#include "wsload.h"

/* ------------------------------------------------------------------ */
/* permessage-deflate (RFC 7692)                                       */
void *zbuf_grow(uint8_t **buf, size_t *cap, size_t want) {
    if (want <= *cap) return *buf;
    size_t nc = *cap ? *cap : 65536;
    while (nc < want) nc *= 2;
    uint8_t *nb = realloc(*buf, nc);
    if (!nb) die("out of memory (zlib buffer)");
    *buf = nb; *cap = nc;
    return nb;
}

/* The inflater for c: the thread's shared one when the server resets its compressor per message
 * (nothing carries over, so any connection can use it between messages), else c's own. */
static z_stream *zin_for(thr_t *t, conn_t *c) {
    z_stream *z = c->srv_nct ? &t->zin : c->zin;
    if (c->srv_nct ? t->zin_ready : z != NULL) return z;
    if (!c->srv_nct) { z = c->zin = calloc(1, sizeof *z); if (!z) die("out of memory (zlib)"); }
    /* -15: raw deflate, largest window, which also inflates anything sent with a smaller one */
    if (inflateInit2(z, -15) != Z_OK) die("inflateInit2 failed");
    if (c->srv_nct) t->zin_ready = 1;
    return z;
}

static inline uint64_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ p[i]) * 0x100000001B3ull;
    return mix64(h);
}

/* Inflates one compressed message (the 00 00 ff ff tail the sender stripped is fed after it) and
 * points *out at the result. Returns false, with *why set, on corrupt data or a message over the
 * size limit.
 * A server without context takeover compresses each message on its own, and in fan-out sends the
 * same bytes to every receiver; inflating identical bytes from a fresh stream always gives the
 * same result, so such messages are looked up (hash, then a full compare) in a per-thread cache
 * before zlib runs. Each receiver still checks the inflated text itself. */
bool inflate_msg(thr_t *t, conn_t *c, const uint8_t *p, size_t n, const uint8_t **out, size_t *outn, const char **why) {
    static const uint8_t tail[4] = {0, 0, 0xff, 0xff};
    zc_t *e = NULL;
    uint64_t hv = 0;
    if (c->srv_nct && n <= ZC_MAX_IN) {
        if (!t->zc && !(t->zc = calloc(ZC_SLOTS, sizeof(zc_t)))) die("out of memory (inflate cache)");
        hv = hash_bytes(p, n);
        e = &t->zc[hv & (ZC_SLOTS - 1)];
        if (e->h == hv && e->n == n && !memcmp(e->in, p, n)) {
            *out = e->out; *outn = e->m; *why = NULL;
            t->k.z_msgs_in++; t->k.z_wire_in += n; t->k.z_raw_in += e->m; t->k.z_cache_hits++;
            return true;
        }
    }
    z_stream *z = zin_for(t, c);
    size_t have = 0;
    bool ok = true, ended = false;
    *why = NULL;
    for (int part = 0; part < 2 && ok && !ended; part++) {
        z->next_in = (Bytef *)(part ? tail : p);
        z->avail_in = (uInt)(part ? 4 : n);
        for (;;) {
            if (have == t->zbuf_cap) zbuf_grow(&t->zbuf, &t->zbuf_cap, have + 1);
            z->next_out = t->zbuf + have;
            z->avail_out = (uInt)(t->zbuf_cap - have);
            int r = inflate(z, Z_SYNC_FLUSH);
            have = (size_t)(z->next_out - t->zbuf);
            if (have > G.max_msg) { ok = false; *why = "inflated message too big"; break; }
            if (r == Z_STREAM_END) { ended = true; break; } /* a final block: legal, the stream restarts */
            if (r != Z_OK && r != Z_BUF_ERROR) { ok = false; *why = "corrupt compressed data"; break; }
            if (z->avail_in == 0 && z->avail_out > 0) break;
            if (r == Z_BUF_ERROR && z->avail_out > 0) { ok = false; *why = "corrupt compressed data"; break; }
        }
    }
    if (c->srv_nct || ended || !ok) inflateReset(z);
    *out = t->zbuf;
    *outn = have;
    if (ok) { t->k.z_msgs_in++; t->k.z_wire_in += n; t->k.z_raw_in += have; }
    if (ok && e && have <= ZC_MAX_OUT) {
        e->h = hv; e->n = (uint32_t)n; e->m = (uint32_t)have;
        memcpy(e->in, p, n); memcpy(e->out, t->zbuf, have);
    }
    return ok;
}

/* The deflater for c: the thread's shared one when we reset per message (client_no_context_takeover),
 * else c's own. Window: the server's client_max_window_bits, at least 9 (zlib's raw-deflate minimum). */
static z_stream *zout_for(thr_t *t, conn_t *c) {
    int bits = c->cli_bits < 9 ? 9 : c->cli_bits;
    if (c->cli_nct) {
        if (t->zout_ready && t->zout_bits == bits) return &t->zout;
        if (t->zout_ready) deflateEnd(&t->zout);
        memset(&t->zout, 0, sizeof t->zout);
        if (deflateInit2(&t->zout, G.deflate_level, Z_DEFLATED, -bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) die("deflateInit2 failed");
        t->zout_ready = 1; t->zout_bits = (uint8_t)bits;
        return &t->zout;
    }
    if (!c->zout) {
        c->zout = calloc(1, sizeof *c->zout);
        if (!c->zout || deflateInit2(c->zout, G.deflate_level, Z_DEFLATED, -bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) die("deflateInit2 failed");
    }
    return c->zout;
}

/* The length of make_payload's header "p<pid> s<seq> t<ns> m<0|1> ": up to its fourth space. */
/* Compresses one outgoing message into t->zobuf: raw deflate, sync flush, 00 00 ff ff removed. */
size_t deflate_msg(thr_t *t, conn_t *c, const uint8_t *p, size_t n) {
    z_stream *z = zout_for(t, c);
    size_t cap = deflateBound(z, (uLong)n) + 64; /* sync flush adds at most a few bytes to the bound */
    zbuf_grow(&t->zobuf, &t->zobuf_cap, cap);
    z->next_in = (Bytef *)p; z->avail_in = (uInt)n;
    z->next_out = t->zobuf; z->avail_out = (uInt)t->zobuf_cap;
    if (deflate(z, Z_SYNC_FLUSH) != Z_OK || z->avail_in || !z->avail_out) die("deflate failed");
    size_t out = t->zobuf_cap - z->avail_out;
    if (out >= 4 && !memcmp(t->zobuf + out - 4, "\x00\x00\xff\xff", 4)) out -= 4;
    if (c->cli_nct) deflateReset(z);
    t->k.z_msgs_out++; t->k.z_raw_out += n; t->k.z_wire_out += out;
    return out;
}

/* Checks the server's permessage-deflate answer and records what was agreed on c. */
bool pmd_accept(thr_t *t, conn_t *c, const char *v, size_t vl) {
    char b[512];
    if (vl >= sizeof b) { note_err(t, "handshake: extension answer too long"); return false; }
    memcpy(b, v, vl); b[vl] = 0;
    if (strchr(b, ',')) { note_err(t, "handshake: server selected more than one extension: %s", b); return false; }
    int seen_snct = 0, seen_cnct = 0, seen_smwb = 0, seen_cmwb = 0, first = 1;
    c->cli_bits = 15;
    for (char *save = NULL, *tok = strtok_r(b, ";", &save); tok; tok = strtok_r(NULL, ";", &save), first = 0) {
        while (*tok == ' ' || *tok == '\t') tok++;
        char *e = tok + strlen(tok);
        while (e > tok && (e[-1] == ' ' || e[-1] == '\t')) *--e = 0;
        char *val = strchr(tok, '=');
        if (val) {
            char *ne = val;
            while (ne > tok && (ne[-1] == ' ' || ne[-1] == '\t')) ne--;
            *ne = 0; val++;
            while (*val == ' ' || *val == '\t') val++;
            size_t l = strlen(val);
            if (l >= 2 && val[0] == '"' && val[l - 1] == '"') { val[l - 1] = 0; val++; }
        }
        if (first) {
            if (strcasecmp(tok, "permessage-deflate") || val) { note_err(t, "handshake: server selected extension '%s' we did not offer", tok); return false; }
            continue;
        }
        int bits = val ? atoi(val) : 0;
        bool bits_ok = val && bits >= 8 && bits <= 15 && strspn(val, "0123456789") == strlen(val);
        if (!strcasecmp(tok, "server_no_context_takeover") && !val && !seen_snct++) c->srv_nct = 1;
        else if (!strcasecmp(tok, "client_no_context_takeover") && !val && !seen_cnct++) c->cli_nct = 1;
        else if (!strcasecmp(tok, "server_max_window_bits") && bits_ok && !seen_smwb++) { /* inflating with 15 covers it */ }
        else if (!strcasecmp(tok, "client_max_window_bits") && bits_ok && !seen_cmwb++ && G.offer_cmwb) c->cli_bits = (uint8_t)bits;
        else { note_err(t, "handshake: bad permessage-deflate parameter '%s%s%s'", tok, val ? "=" : "", val ? val : ""); return false; }
    }
    if (G.offer_cnct) c->cli_nct = 1; /* we promised it in the offer, whatever the answer says */
    c->pmd = 1;
    t->k.pmd_conns++;
    if (!t->pmd_resp[0]) snprintf(t->pmd_resp, sizeof t->pmd_resp, "%.*s", (int)vl, v);
    return true;
}


void deflate_release(conn_t *c) {
    if (c->zin) { inflateEnd(c->zin); free(c->zin); c->zin = NULL; }
    if (c->zout) { deflateEnd(c->zout); free(c->zout); c->zout = NULL; }
}

/* --deflate-offer NAME: client, plain, both, or a literal 'permessage-deflate; ...' offer. */
bool deflate_offer(const char *name) {
    if (!strcmp(name, "client")) G.deflate_offer = "permessage-deflate; client_no_context_takeover; client_max_window_bits";
    else if (!strcmp(name, "plain")) G.deflate_offer = "permessage-deflate";
    else if (!strcmp(name, "both")) G.deflate_offer = "permessage-deflate; server_no_context_takeover; client_no_context_takeover; client_max_window_bits";
    else if (!strncasecmp(name, "permessage-deflate", 18) && strlen(name) < 300 && !strpbrk(name, "\r\n,")) G.deflate_offer = name;
    else return false;
    G.deflate = 1;
    return true;
}
