/*
 * wss:// for every mode: a non-blocking OpenSSL client over the shared epoll loop (SSL_set_fd;
 * WANT_READ / WANT_WRITE steer the epoll interest; TLS 1.3 by default, SNI sent, no certificate
 * check because it only talks to loopback benchmark servers), and the own TLS 1.3 record reader.
 */
#include "wsload.h"

SSL_CTX *g_ssl_ctx;


/* ------------------------------------------------------------------ */
/* transport: plain socket or TLS over it. Both return >0 bytes, 0 on EOF (recv only), or -1 with
 * errno (EAGAIN = try again after the epoll event the connection now waits for). */
static void note_ssl_err(thr_t *t, conn_t *c, const char *what) {
    unsigned long e = ERR_get_error();
    char eb[160];
    ERR_error_string_n(e, eb, sizeof eb);
    note_err(t, "%s (conn %u): %s", what, c->idx, e ? eb : "no OpenSSL error queued");
    ERR_clear_error();
}

/* ---- own TLS 1.3 record reader ----
 * OpenSSL 3.0 adds about 2 us of record-layer work to every SSL_read record (parameter lookups,
 * locks, copies) on top of the AEAD; at 400,000 TLS deliveries/s that put 60% of the generator's
 * core in OpenSSL, so the generator, not the server, set the limit. After a TLS 1.3 handshake the
 * connection reads records itself (RFC 8446 5.2): the server application traffic secret comes from
 * the key log callback, key and IV from HKDF-Expand-Label, each record is decrypted in place in one
 * pass and its tag checked. Session tickets are skipped, a KeyUpdate moves to the next keys,
 * close_notify is end of file; anything else (another alert, a bad tag) is a protocol error.
 * OpenSSL keeps the write side (publishers) and the handshake. --tls-reader openssl turns it off. */
#define OP_RECORD_MAX (5 + 16384 + 256)
typedef struct opener {
    EVP_CIPHER_CTX *ctx;
    const EVP_MD *md;
    int keylen;
    uint8_t secret[EVP_MAX_MD_SIZE]; size_t secret_len;
    uint8_t iv[12];
    uint64_t seq;
    uint8_t *rb; size_t rb_off, rb_len;  /* ciphertext read from the socket: [rb_off, rb_len) unused */
    size_t pt_off, pt_len;               /* decrypted application data waiting in rb */
    bool eof;
} opener_t;

static void opener_free(conn_t *c) {
    if (!c->op) return;
    EVP_CIPHER_CTX_free(c->op->ctx);
    OPENSSL_cleanse(c->op->secret, sizeof c->op->secret);
    free(c->op->rb);
    free(c->op);
    c->op = NULL;
}

/* HKDF-Expand-Label(secret, label, "", n) (RFC 8446 7.1) */
static bool hkdf_label(const EVP_MD *md, const uint8_t *secret, size_t secret_len, const char *label, uint8_t *out, size_t n) {
    uint8_t info[64];
    size_t ll = 6 + strlen(label), il = 0;
    info[il++] = (uint8_t)(n >> 8); info[il++] = (uint8_t)n; info[il++] = (uint8_t)ll;
    memcpy(info + il, "tls13 ", 6); memcpy(info + il + 6, label, ll - 6); il += ll;
    info[il++] = 0;
    EVP_PKEY_CTX *k = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
    size_t got = n;
    bool ok = k && EVP_PKEY_derive_init(k) == 1 && EVP_PKEY_CTX_set_hkdf_mode(k, EVP_PKEY_HKDEF_MODE_EXPAND_ONLY) == 1
        && EVP_PKEY_CTX_set_hkdf_md(k, md) == 1 && EVP_PKEY_CTX_set1_hkdf_key(k, secret, (int)secret_len) == 1
        && EVP_PKEY_CTX_add1_hkdf_info(k, info, (int)il) == 1 && EVP_PKEY_derive(k, out, &got) == 1 && got == n;
    EVP_PKEY_CTX_free(k);
    return ok;
}

/* (Re)keys the reader from op->secret; the sequence number starts again at zero. */
static bool opener_key(opener_t *op) {
    uint8_t key[32];
    bool ok = hkdf_label(op->md, op->secret, op->secret_len, "key", key, (size_t)op->keylen)
        && hkdf_label(op->md, op->secret, op->secret_len, "iv", op->iv, 12)
        && EVP_DecryptInit_ex(op->ctx, NULL, NULL, key, NULL) == 1;
    OPENSSL_cleanse(key, sizeof key);
    op->seq = 0;
    return ok;
}

static void keylog_cb(const SSL *ssl, const char *line) {
    static const char label[] = "SERVER_TRAFFIC_SECRET_0 ";
    conn_t *c = SSL_get_app_data(ssl);
    if (!c || G.tls_reader_openssl || strncmp(line, label, sizeof label - 1)) return;
    const char *hex = strrchr(line, ' ') + 1;
    size_t digits = strlen(hex);
    if (digits % 2 || digits / 2 > EVP_MAX_MD_SIZE) return;
    if (!c->op && !(c->op = calloc(1, sizeof *c->op))) die("out of memory (TLS reader)");
    for (size_t i = 0; i < digits / 2; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) { opener_free(c); return; }
        c->op->secret[i] = (uint8_t)v;
    }
    c->op->secret_len = digits / 2;
}

/* After SSL_connect: switch a TLS 1.3 connection to the own reader, if OpenSSL holds nothing
 * unread (then the next byte on the socket starts a record) and the suite is one we know. */
static void opener_start(thr_t *t, conn_t *c) {
    static EVP_CIPHER *aes128, *aes256, *chacha;
    if (!c->op) return;
    const SSL_CIPHER *sc = SSL_get_current_cipher(c->ssl);
    EVP_CIPHER *ciph = NULL;
    if (SSL_version(c->ssl) == TLS1_3_VERSION && !SSL_has_pending(c->ssl) && sc) {
        switch (SSL_CIPHER_get_cipher_nid(sc)) {
        case NID_aes_128_gcm: ciph = aes128 ? aes128 : (aes128 = EVP_CIPHER_fetch(NULL, "AES-128-GCM", NULL)); break;
        case NID_aes_256_gcm: ciph = aes256 ? aes256 : (aes256 = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL)); break;
        case NID_chacha20_poly1305: ciph = chacha ? chacha : (chacha = EVP_CIPHER_fetch(NULL, "ChaCha20-Poly1305", NULL)); break;
        }
    }
    opener_t *op = c->op;
    if (!ciph || !op->secret_len) { opener_free(c); return; }
    op->md = SSL_CIPHER_get_handshake_digest(sc);
    op->keylen = EVP_CIPHER_get_key_length(ciph);
    op->ctx = EVP_CIPHER_CTX_new();
    op->rb = malloc(2 * OP_RECORD_MAX);
    if (!op->md || !op->ctx || !op->rb || EVP_DecryptInit_ex(op->ctx, ciph, NULL, NULL, NULL) != 1 || !opener_key(op)) {
        note_ssl_err(t, c, "TLS 1.3 record reader setup");
        opener_free(c);
        return;
    }
    t->k.tls_own_conns++;
}

/* Decrypts the record at rb + rb_off (complete, `len` bytes after its header) in place and acts on
 * its content type. Returns false, with *why, on a protocol error. */
static bool opener_record(conn_t *c, size_t len, const char **why) {
    opener_t *op = c->op;
    uint8_t *h = op->rb + op->rb_off, *p = h + 5, nonce[12];
    if (h[0] != 23 || len < 17) { *why = "TLS record that is not encrypted application data"; return false; }
    memcpy(nonce, op->iv, 12);
    for (int i = 0; i < 8; i++) nonce[4 + i] ^= (uint8_t)(op->seq >> (56 - 8 * i));
    int n = 0, f = 0, clen = (int)len - 16;
    if (EVP_DecryptInit_ex(op->ctx, NULL, NULL, NULL, nonce) != 1
        || EVP_CIPHER_CTX_ctrl(op->ctx, EVP_CTRL_AEAD_SET_TAG, 16, p + clen) != 1
        || EVP_DecryptUpdate(op->ctx, NULL, &n, h, 5) != 1
        || EVP_DecryptUpdate(op->ctx, p, &n, p, clen) != 1
        || EVP_DecryptFinal_ex(op->ctx, p + n, &f) != 1) { *why = "TLS record failed authentication"; return false; }
    op->seq++;
    int l = clen;
    while (l > 0 && p[l - 1] == 0) l--;
    if (l == 0) { *why = "TLS record without a content type"; return false; }
    uint8_t type = p[--l];
    op->rb_off += 5 + len;
    if (type == 23) { op->pt_off = (size_t)(p - op->rb); op->pt_len = (size_t)l; return true; }
    if (type == 21) {
        if (l == 2 && p[1] == 0) { op->eof = true; return true; }
        *why = "TLS alert from the server"; return false;
    }
    if (type != 22) { *why = "TLS record of an unknown content type"; return false; }
    for (int i = 0; i + 4 <= l;) {
        int mlen = p[i + 1] << 16 | p[i + 2] << 8 | p[i + 3];
        if (p[i] == 24 && mlen == 1) { /* KeyUpdate: later records use the next keys */
            if (p[i + 4] == 1) SSL_key_update(c->ssl, SSL_KEY_UPDATE_NOT_REQUESTED);
            uint8_t next[EVP_MAX_MD_SIZE];
            if (!hkdf_label(op->md, op->secret, op->secret_len, "traffic upd", next, op->secret_len)) { *why = "TLS key update failed"; return false; }
            memcpy(op->secret, next, op->secret_len);
            OPENSSL_cleanse(next, sizeof next);
            if (!opener_key(op)) { *why = "TLS key update failed"; return false; }
        } else if (p[i] != 4) { *why = "unexpected TLS handshake message after the handshake"; return false; }
        i += 4 + mlen;
    }
    return true;
}

/* io_recv for the own reader: application data into buf, like a plain recv(). */
static ssize_t opener_recv(thr_t *t, conn_t *c, uint8_t *buf, size_t cap) {
    opener_t *op = c->op;
    size_t got = 0;
    while (got < cap) {
        if (op->pt_len) {
            size_t m = op->pt_len < cap - got ? op->pt_len : cap - got;
            memcpy(buf + got, op->rb + op->pt_off, m);
            op->pt_off += m; op->pt_len -= m; got += m;
            continue;
        }
        if (op->eof) return (ssize_t)got;
        size_t avail = op->rb_len - op->rb_off;
        if (avail >= 5) {
            size_t len = (size_t)op->rb[op->rb_off + 3] << 8 | op->rb[op->rb_off + 4];
            if (len > OP_RECORD_MAX - 5) { note_err(t, "TLS record too long (conn %u)", c->idx); errno = EPROTO; return got ? (ssize_t)got : -1; }
            if (avail >= 5 + len) {
                const char *why = NULL;
                if (!opener_record(c, len, &why)) { note_err(t, "%s (conn %u)", why, c->idx); errno = EPROTO; return got ? (ssize_t)got : -1; }
                continue;
            }
        }
        if (op->rb_off) { memmove(op->rb, op->rb + op->rb_off, avail); op->rb_off = 0; op->rb_len = avail; }
        ssize_t r = recv(c->fd, op->rb + op->rb_len, 2 * OP_RECORD_MAX - op->rb_len, MSG_DONTWAIT);
        if (r > 0) { op->rb_len += (size_t)r; continue; }
        if (got) return (ssize_t)got;
        if (r == 0) { if (avail) { errno = EPROTO; note_err(t, "EOF inside a TLS record (conn %u)", c->idx); return -1; } return 0; }
        return -1;
    }
    return (ssize_t)got;
}

/* whether the connection holds input epoll cannot see (decrypted or read but unprocessed) */
bool tls_pending(conn_t *c) {
    if (!c->op) return SSL_has_pending(c->ssl);
    size_t avail = c->op->rb_len - c->op->rb_off;
    return c->op->pt_len || c->op->eof
        || (avail >= 5 && avail >= 5 + ((size_t)c->op->rb[c->op->rb_off + 3] << 8 | c->op->rb[c->op->rb_off + 4]));
}

ssize_t io_send(thr_t *t, conn_t *c, const uint8_t *p, size_t n) {
    if (!c->ssl) return send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    int r = SSL_write(c->ssl, p, n > (1u << 30) ? (int)(1u << 30) : (int)n);
    if (r > 0) return r;
    switch (SSL_get_error(c->ssl, r)) {
    case SSL_ERROR_WANT_WRITE: c->wr_wants_w = 1; errno = EAGAIN; return -1;
    case SSL_ERROR_WANT_READ: c->wr_wants_w = 0; errno = EAGAIN; return -1;
    case SSL_ERROR_SYSCALL: if (!errno) errno = EPIPE; ERR_clear_error(); return -1;
    default: note_ssl_err(t, c, "SSL_write"); errno = EPROTO; return -1;
    }
}

/* TLS: reads records until the buffer is full or the socket is drained, so one epoll event moves
 * as much as a plain recv() would (SSL_read returns at most one 16 KiB record per call). */
ssize_t io_recv(thr_t *t, conn_t *c, uint8_t *buf, size_t cap) {
    if (!c->ssl) return recv(c->fd, buf, cap, MSG_DONTWAIT);
    if (c->op && c->op->ctx) return opener_recv(t, c, buf, cap);
    size_t got = 0;
    c->rd_wants_w = 0;
    while (got < cap) {
        size_t want = cap - got;
        int r = SSL_read(c->ssl, buf + got, want > (1u << 30) ? (int)(1u << 30) : (int)want);
        if (r > 0) { got += (size_t)r; continue; }
        int e = SSL_get_error(c->ssl, r);
        if (e == SSL_ERROR_WANT_WRITE) c->rd_wants_w = 1;
        if (got) return (ssize_t)got; /* an EOF or error shows up again on the next call */
        switch (e) {
        case SSL_ERROR_WANT_READ: errno = EAGAIN; return -1;
        case SSL_ERROR_WANT_WRITE: errno = EAGAIN; return -1;
        case SSL_ERROR_ZERO_RETURN: return 0;
        case SSL_ERROR_SYSCALL: ERR_clear_error(); if (!errno) return 0; return -1;
        default: note_ssl_err(t, c, "SSL_read"); errno = EPROTO; return -1;
        }
    }
    return (ssize_t)got;
}

void tls_step(thr_t *t, conn_t *c) {
    ERR_clear_error();
    int r = SSL_connect(c->ssl);
    if (r == 1) {
        t->k.tls_conns++;
        if (!t->tls_desc[0]) snprintf(t->tls_desc, sizeof t->tls_desc, "%s %s", SSL_get_version(c->ssl), SSL_get_cipher_name(c->ssl));
        opener_start(t, c);
        send_handshake(t, c);
        return;
    }
    int e = SSL_get_error(c->ssl, r);
    if (e == SSL_ERROR_WANT_READ) { set_events(t, c, 0); return; }
    if (e == SSL_ERROR_WANT_WRITE) { set_events(t, c, 1); return; }
    if (e == SSL_ERROR_SYSCALL && !ERR_peek_error())
        note_err(t, "TLS handshake (conn %u): %s", c->idx, errno ? strerror(errno) : "connection closed by the server");
    else note_ssl_err(t, c, "TLS handshake");
    conn_fail(t, c, 3);
}

/* TCP is connected: start TLS (wss://) or send the upgrade request (ws://). */

/* TCP is connected: start the TLS handshake (tls_step sends the upgrade request once it is done). */
void tls_begin(thr_t *t, conn_t *c) {
    c->ssl = SSL_new(g_ssl_ctx);
    if (!c->ssl || SSL_set_fd(c->ssl, c->fd) != 1) { note_ssl_err(t, c, "SSL_new"); conn_fail(t, c, 4); return; }
    SSL_set_app_data(c->ssl, c);
    if (G.sni[0]) SSL_set_tlsext_host_name(c->ssl, G.sni);
    c->st = ST_TLS;
    tls_step(t, c);
}

void tls_release(conn_t *c) {
    opener_free(c);
    if (c->ssl) { SSL_free(c->ssl); c->ssl = NULL; }
}

/* The client context of wss:// runs: no certificate check (loopback benchmark servers with
 * self-signed certificates), no session resumption (every connection pays a full handshake, like
 * a fresh browser tab). */
void tls_setup(void) {
    int v = G.tls_version == 12 ? TLS1_2_VERSION : TLS1_3_VERSION;
    g_ssl_ctx = SSL_CTX_new(TLS_client_method());
    if (!g_ssl_ctx || !SSL_CTX_set_min_proto_version(g_ssl_ctx, v) || !SSL_CTX_set_max_proto_version(g_ssl_ctx, v))
        die("cannot set up the OpenSSL client context");
    SSL_CTX_set_verify(g_ssl_ctx, SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_session_cache_mode(g_ssl_ctx, SSL_SESS_CACHE_OFF);
    /* partial writes + moving buffer: the output buffer is compacted and grown between retries */
    SSL_CTX_set_mode(g_ssl_ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(g_ssl_ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    /* one read() per buffer of records, not two per record (header, then body) */
    SSL_CTX_set_read_ahead(g_ssl_ctx, 1);
    SSL_CTX_set_keylog_callback(g_ssl_ctx, keylog_cb);
    static const unsigned char alpn[] = "\x08http/1.1";
    SSL_CTX_set_alpn_protos(g_ssl_ctx, alpn, sizeof alpn - 1);
}
