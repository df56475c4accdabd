/*
 * wsload --selftest: the built-in checks of the shared client (SHA-1, accept key, Base64, histogram,
 * framing, permessage-deflate) and of the relay's accounting and payloads (order, loss, duplicates,
 * wrong room, self echo, chat and pooled text). The end-to-end checks against faulty relays are
 * selftest/selftest.py and selftest/validate_py.sh.
 */
#include "wsload.h"

int selftest(void) {
    relay_use();
    int fails = 0;
#define CHECK(cond, msg) do { if (!(cond)) { fprintf(stderr, "selftest FAIL: %s\n", msg); fails++; } else if (G.verbose) fprintf(stderr, "ok: %s\n", msg); } while (0)
    uint8_t d[20];
    char hex[41];
    sha1((const uint8_t *)"abc", 3, d);
    for (int i = 0; i < 20; i++) sprintf(hex + 2 * i, "%02x", d[i]);
    CHECK(!strcmp(hex, "a9993e364706816aba3e25717850c26c9cd0d89d"), "sha1(abc)");
    const char *l56 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha1((const uint8_t *)l56, strlen(l56), d);
    for (int i = 0; i < 20; i++) sprintf(hex + 2 * i, "%02x", d[i]);
    CHECK(!strcmp(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"), "sha1(448-bit message)");
    char acc[32];
    ws_accept_for("dGhlIHNhbXBsZSBub25jZQ==", acc);
    CHECK(!strcmp(acc, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "RFC 6455 Sec-WebSocket-Accept example");
    char b[16];
    b64enc((const uint8_t *)"fo", 2, b);
    CHECK(!strcmp(b, "Zm8="), "base64 padding");
    /* histogram */
    static hist_t h;
    memset(&h, 0, sizeof h);
    for (uint64_t v = 1; v <= 100000; v++) hrec(&h, v * 1000);
    uint64_t p50 = hpct(&h, 0.5), p99 = hpct(&h, 0.99);
    CHECK(p50 >= 50000000ull * 0.99 && p50 <= 50000000ull * 1.01, "histogram p50 within 1%");
    CHECK(p99 >= 99000000ull * 0.99 && p99 <= 99000000ull * 1.01, "histogram p99 within 1%");
    CHECK(hpct(&h, 1.0) == 100000000ull, "histogram max exact");
    for (int i = 256; i < H_NB - 1; i++)
        if (hidx(hval_hi(i)) != i || hidx(hval_hi(i) + 1) != i + 1) { CHECK(0, "histogram bucket bounds"); break; }
    /* frame parser: 7/16/64-bit lengths, fragmentation with interleaved ping, close */
    thr_t t;
    memset(&t, 0, sizeof t);
    t.rng = 88172645463325252ull;
    G.size = 10; G.rate = 1; G.window = 1;
    static pub_t pubs[2];
    relay_set_pubs(pubs, 2);
    conn_t c;
    memset(&c, 0, sizeof c);
    c.fd = -1; c.st = ST_OPEN; c.room = 0; c.pid = 1; c.t = &t;
    rx_t rx[2] = {{0}};
    c.rx = rx;
    pubs[0].room = 0; pubs[0].local = 0; pubs[1].room = 0; pubs[1].local = 1;
    g_pad = malloc(1 << 20);
    memset(g_pad, 'x', 1 << 20);
    uint8_t *buf = malloc(300000), *pl = malloc(200000);
    size_t o = 0;
    /* msg seq 0, size 10 -> header longer than size, exact */
    G.size = 20;
    size_t n0 = make_payload(pl, 0, 0, 5, 1, 20);
    buf[o++] = 0x81; buf[o++] = (uint8_t)n0; memcpy(buf + o, pl, n0); o += n0;
    /* seq 1 with size 300 -> 16-bit length */
    G.size = 300;
    size_t n1 = make_payload(pl, 0, 1, 5, 1, 300);
    buf[o++] = 0x81; buf[o++] = 126; buf[o++] = (uint8_t)(n1 >> 8); buf[o++] = (uint8_t)n1; memcpy(buf + o, pl, n1); o += n1;
    size_t parsed = parse_frames(&t, &c, buf, o, 10);
    CHECK(parsed == o && t.k.delivered == 1 && t.k.bad_payload == 1, "7-bit and 16-bit frames parsed (size check enforced)");
    /* 64-bit length, fragmented into 3 frames with a ping in the middle */
    G.size = 70000;
    memset(&t.k, 0, sizeof t.k);
    size_t n2 = make_payload(pl, 0, 1, 5, 1, 70000);
    o = 0;
    size_t a = 30000, bb = 30000, cc = n2 - a - bb;
    buf[o++] = 0x01; buf[o++] = 126; buf[o++] = (uint8_t)(a >> 8); buf[o++] = (uint8_t)a; memcpy(buf + o, pl, a); o += a;
    buf[o++] = 0x89; buf[o++] = 4; memcpy(buf + o, "ping", 4); o += 4;
    buf[o++] = 0x00; buf[o++] = 126; buf[o++] = (uint8_t)(bb >> 8); buf[o++] = (uint8_t)bb; memcpy(buf + o, pl + a, bb); o += bb;
    buf[o++] = 0x80; buf[o++] = 127;
    for (int i = 7; i >= 0; i--) buf[o++] = (uint8_t)((uint64_t)cc >> (8 * i));
    memcpy(buf + o, pl + a + bb, cc); o += cc;
    /* feed in awkward pieces to exercise partial-frame handling */
    size_t consumed = 0, fed = 0;
    static uint8_t acc2[300000];
    size_t alen = 0;
    size_t steps[] = {1, 3, 7, 29999, 5, 70000, 100000};
    for (int s = 0; fed < o; s++) {
        size_t st = steps[s % 7];
        if (fed + st > o) st = o - fed;
        memcpy(acc2 + alen, buf + fed, st); alen += st; fed += st;
        size_t u = parse_frames(&t, &c, acc2, alen, 10);
        memmove(acc2, acc2 + u, alen - u); alen -= u; consumed += u;
    }
    CHECK(consumed == o && alen == 0, "partial frames reassembled");
    CHECK(t.k.delivered == 0 && t.k.dups == 1, "fragmented 64-bit message parsed (duplicate seq 1 detected)");
    CHECK(t.k.pings == 1 && c.ob_len > 0 && (c.ob[0] == 0x8A) && (c.ob[1] & 0x80), "ping answered with masked pong");
    if (c.ob_len >= 10) {
        uint8_t un[4];
        for (int i = 0; i < 4; i++) un[i] = c.ob[6 + i] ^ c.ob[2 + (i & 3)];
        CHECK(!memcmp(un, "ping", 4), "pong echoes ping payload (unmasked check)");
    }
    /* order / loss / dup logic */
    G.size = 20;
    memset(&t.k, 0, sizeof t.k);
    memset(rx, 0, sizeof rx);
    uint64_t seqs[] = {0, 1, 3, 2, 2, 4, 100, 5};
    for (size_t i = 0; i < sizeof seqs / sizeof *seqs; i++) {
        size_t n = make_payload(pl, 0, seqs[i], 1, 1, 20);
        relay_on_text(&t, &c, pl, n, 10);
    }
    CHECK(t.k.delivered == 7 && t.k.dups == 1 && t.k.ooo == 2 && t.k.gaps_forced == 1, "order/dup/gap accounting");
    /* cross-room and self-echo */
    pubs[0].room = 1;
    size_t n3 = make_payload(pl, 0, 9, 1, 1, 20);
    relay_on_text(&t, &c, pl, n3, 10);
    CHECK(t.k.cross_room == 1, "cross-room delivery detected");
    size_t n4 = make_payload(pl, 1, 0, 1, 1, 20);
    relay_on_text(&t, &c, pl, n4, 10);
    CHECK(t.k.self_echo == 1, "self echo detected");
    /* masked server frame -> protocol error */
    c.st = ST_OPEN; c.fd = -1;
    uint8_t mf[] = {0x81, 0x82, 1, 2, 3, 4, 'a' ^ 1, 'b' ^ 2};
    memset(&t.k, 0, sizeof t.k);
    parse_frames(&t, &c, mf, sizeof mf, 10);
    CHECK(t.k.proto_err == 1, "masked server frame rejected");

    /* chat text: deterministic, verified word for word, prefix-stable */
    G.text_chat = 1; G.size = 512;
    t.chat_slots = 16; t.chat = malloc(16 * 512);
    pubs[0].room = 0;
    memset(rx, 0, sizeof rx); memset(&t.k, 0, sizeof t.k);
    c.st = ST_OPEN;
    uint8_t *pl2 = malloc(600);
    size_t nc = make_payload(pl, 0, 0, 123, 1, 512);
    CHECK(nc == 512 && make_payload(pl2, 0, 0, 123, 1, 512) == nc && !memcmp(pl, pl2, nc) && !memchr(pl + 30, 'x', 1) && memchr(pl + 30, ' ', 40), "chat payload deterministic words");
    uint8_t a1[300], a2[600];
    chat_fill(a1, 300, 7, 9); chat_fill(a2, 600, 7, 9);
    CHECK(!memcmp(a1, a2, 300), "chat padding of a shorter message is a prefix of a longer one");
    chat_fill(a2, 300, 7, 10);
    CHECK(memcmp(a1, a2, 300) != 0, "chat padding differs between messages");
    relay_on_text(&t, &c, pl, nc, 10);
    CHECK(t.k.delivered == 1 && t.k.bad_payload == 0, "chat payload verified by receiver");
    size_t nc3 = make_payload(pl, 0, 1, 123, 1, 512);
    pl[nc3 - 20] ^= 0x20;
    relay_on_text(&t, &c, pl, nc3, 10);
    CHECK(t.k.bad_payload == 1, "altered chat payload detected");
    /* permessage-deflate answer parsing */
    conn_t d2;
    memset(&d2, 0, sizeof d2);
    d2.fd = -1; d2.t = &t;
    G.offer_cnct = 1; G.offer_cmwb = 1;
    const char *r1 = "permessage-deflate; server_no_context_takeover; client_max_window_bits=10";
    CHECK(pmd_accept(&t, &d2, r1, strlen(r1)) && d2.pmd && d2.srv_nct && d2.cli_nct && d2.cli_bits == 10, "deflate answer accepted");
    const char *bad[] = {"permessage-deflate; foo", "x-webkit-deflate-frame", "permessage-deflate; server_max_window_bits=16",
                         "permessage-deflate; server_no_context_takeover; server_no_context_takeover", "permessage-deflate, permessage-deflate"};
    int rejected = 0;
    for (int i = 0; i < 5; i++) { memset(&d2, 0, sizeof d2); rejected += !pmd_accept(&t, &d2, bad[i], strlen(bad[i])); }
    CHECK(rejected == 5, "bad deflate answers rejected");
    G.offer_cmwb = 0;
    const char *r2 = "permessage-deflate; client_max_window_bits=10";
    memset(&d2, 0, sizeof d2);
    CHECK(!pmd_accept(&t, &d2, r2, strlen(r2)), "client_max_window_bits refused when not offered");
    /* compressed frames: whole, fragmented, with context takeover, corrupt, RSV1 misuse */
    memset(rx, 0, sizeof rx); memset(&t.k, 0, sizeof t.k);
    c.pmd = 1; c.srv_nct = 1; c.cli_nct = 1; c.cli_bits = 15;
    size_t np = make_payload(pl, 0, 0, 1, 1, 512);
    size_t zn = deflate_msg(&t, &c, pl, np);
    CHECK(zn > 0 && zn < np / 2 + 60, "chat text compresses (but not absurdly)");
    o = 0;
    buf[o++] = 0xC1; buf[o++] = 126; buf[o++] = (uint8_t)(zn >> 8); buf[o++] = (uint8_t)zn; memcpy(buf + o, t.zobuf, zn); o += zn;
    size_t np1 = make_payload(pl, 0, 1, 1, 1, 512), zn1 = deflate_msg(&t, &c, pl, np1);
    size_t half = zn1 / 2;
    buf[o++] = 0x41; buf[o++] = 126; buf[o++] = 0; buf[o++] = (uint8_t)half; memcpy(buf + o, t.zobuf, half); o += half;
    buf[o++] = 0x89; buf[o++] = 0;
    buf[o++] = 0x80; buf[o++] = 126; buf[o++] = 0; buf[o++] = (uint8_t)(zn1 - half); memcpy(buf + o, t.zobuf + half, zn1 - half); o += zn1 - half;
    c.ob_len = c.ob_off = 0;
    CHECK(parse_frames(&t, &c, buf, o, 10) == o && t.k.delivered == 2 && t.k.z_msgs_in == 2 && t.k.bad_payload == 0 && t.k.proto_err == 0,
          "compressed message inflated, whole and fragmented around a ping");
    {
        const uint8_t *o1, *o2;
        size_t m1, m2;
        const char *why;
        uint64_t hits = t.k.z_cache_hits;
        bool ok1 = inflate_msg(&t, &c, buf + 4, zn, &o1, &m1, &why);
        uint8_t first[600];
        memcpy(first, o1, m1);
        bool ok2 = inflate_msg(&t, &c, buf + 4, zn, &o2, &m2, &why);
        bool same = m2 == 512 && !memcmp(first, o2, 512);
        buf[4 + zn / 2] ^= 1;
        const uint8_t *o3;
        size_t m3;
        inflate_msg(&t, &c, buf + 4, zn, &o3, &m3, &why);
        buf[4 + zn / 2] ^= 1;
        CHECK(ok1 && ok2 && m1 == 512 && same && t.k.z_cache_hits == hits + 2,
              "identical stateless compressed messages come from the inflate cache");
        CHECK(t.k.z_cache_hits == hits + 2 && (m3 != 512 || memcmp(first, o3, 512) != 0), "a changed compressed byte misses the cache");
    }
    /* server with context takeover: the second message refers back to the first */
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    c.srv_nct = 0;
    o = 0;
    for (uint64_t s = 2; s < 4; s++) {
        size_t m = make_payload(pl, 0, s, 1, 1, 512);
        if (s == 3) memcpy(pl + 40, pl2 + 40, 400); /* repeat text of an earlier message */
        uint8_t zb[1200];
        zs.next_in = pl; zs.avail_in = (uInt)m; zs.next_out = zb; zs.avail_out = sizeof zb;
        deflate(&zs, Z_SYNC_FLUSH);
        size_t zl = sizeof zb - zs.avail_out - 4;
        buf[o++] = 0xC1; buf[o++] = 126; buf[o++] = (uint8_t)(zl >> 8); buf[o++] = (uint8_t)zl; memcpy(buf + o, zb, zl); o += zl;
    }
    deflateEnd(&zs);
    G.text_chat = 0; /* message 3 was altered on purpose: only check that it inflates */
    uint64_t bp0 = t.k.bad_payload, zin0 = t.k.z_msgs_in;
    parse_frames(&t, &c, buf, o, 10);
    CHECK(t.k.z_msgs_in == zin0 + 2 && t.k.proto_err == 0 && t.k.bad_payload == bp0 + 2 && c.zin != NULL, "context-takeover stream inflated per connection");
    G.text_chat = 1;
    uint8_t corrupt[] = {0xC1, 4, 0xff, 0xff, 0xff, 0xff};
    parse_frames(&t, &c, corrupt, sizeof corrupt, 10);
    CHECK(t.k.proto_err == 1, "corrupt compressed data is a protocol error");
    c.st = ST_OPEN; c.fd = -1; c.pmd = 0;
    uint8_t rsv_nopmd[] = {0xC1, 1, 'a'};
    parse_frames(&t, &c, rsv_nopmd, sizeof rsv_nopmd, 10);
    CHECK(t.k.proto_err == 2, "RSV1 without permessage-deflate rejected");
    c.st = ST_OPEN; c.pmd = 1;
    uint8_t rsv_ping[] = {0xC9, 0};
    parse_frames(&t, &c, rsv_ping, sizeof rsv_ping, 10);
    CHECK(t.k.proto_err == 3, "RSV1 on a control frame rejected");
    /* --text pooled: a composed message (stored head + precompressed tail) inflates to the payload */
    G.text_chat = 2; G.size = 512; pool_init();
    c.st = ST_OPEN; c.cli_nct = 1; c.cli_bits = 15;
    size_t pn = make_payload(pl, 0, 5, 1, 1, 512);
    size_t pz = pool_compose(&t, &c, pl, pn, 0, 5);
    memcpy(t.zobuf + pz, "\x00\x00\xff\xff", 4);
    uint8_t inflated[1024];
    z_stream zi = {0};
    inflateInit2(&zi, -15);
    zi.next_in = t.zobuf; zi.avail_in = (uInt)pz + 4; zi.next_out = inflated; zi.avail_out = sizeof inflated;
    int zr = inflate(&zi, Z_SYNC_FLUSH);
    inflateEnd(&zi);
    CHECK(pz > 0 && pz < pn && zr == Z_OK && sizeof inflated - zi.avail_out == pn && !memcmp(inflated, pl, pn),
          "pooled message composed without zlib inflates to the payload");
    c.cli_bits = 8;
    CHECK(pool_compose(&t, &c, pl, pn, 0, 5) == 0, "no composing when the client window is smaller than a message");
    uint64_t bp1 = t.k.bad_payload;
    o = 0;
    buf[o++] = 0x81; buf[o++] = 126; buf[o++] = (uint8_t)(pn >> 8); buf[o++] = (uint8_t)pn; memcpy(buf + o, pl, pn); o += pn;
    buf[o++] = 0x81; buf[o++] = 126; buf[o++] = (uint8_t)(pn >> 8); buf[o++] = (uint8_t)pn; memcpy(buf + o, pl, pn); buf[o + 300] ^= 1; o += pn;
    parse_frames(&t, &c, buf, o, 10);
    CHECK(t.k.bad_payload == bp1 + 1, "pooled text checked byte for byte");
    G.text_chat = 0;
    fprintf(stderr, "selftest: %s (%d failure%s)\n", fails ? "FAILED" : "passed", fails, fails == 1 ? "" : "s");
    return fails ? 1 : 0;
}

