/*
 * record-cost: what one SSL_write costs this machine's OpenSSL, with no sockets involved.
 *
 * A TLS client and server talk over memory BIOs; after the handshake the server encrypts the
 * same plaintext N times (one SSL_write, one record each) and the records are drained from the
 * BIO. The result is OpenSSL's own price per record, the floor under every TLS flush the server
 * makes (BENCHMARKS.md, "TLS and compression").
 *
 *   gcc -O2 -o record-cost record-cost.c -lssl -lcrypto
 *   taskset -c 1 ./record-cost CERT.pem KEY.pem [BYTES [SUITE]]
 *
 * BYTES defaults to 530 (one 512-byte message with its frame header); SUITE to
 * TLS_AES_128_GCM_SHA256.
 */
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Moves whatever one side wrote to the other side's input. */
static void move(BIO *from, BIO *to) {
    static char buffer[1 << 16];
    int count;
    while ((count = BIO_read(from, buffer, sizeof buffer)) > 0) BIO_write(to, buffer, count);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s CERT.pem KEY.pem [BYTES [SUITE]]\n", argv[0]);
        return 2;
    }
    size_t size = argc > 3 ? (size_t)atoi(argv[3]) : 530;
    const char *suite = argc > 4 ? argv[4] : "TLS_AES_128_GCM_SHA256";
    if (size == 0 || size > 16384) {
        fprintf(stderr, "BYTES must be 1 to 16384 (one record)\n");
        return 2;
    }
    SSL_CTX *server_context = SSL_CTX_new(TLS_server_method());
    SSL_CTX *client_context = SSL_CTX_new(TLS_client_method());
    if (SSL_CTX_use_certificate_chain_file(server_context, argv[1]) != 1
        || SSL_CTX_use_PrivateKey_file(server_context, argv[2], SSL_FILETYPE_PEM) != 1
        || SSL_CTX_set_ciphersuites(client_context, suite) != 1) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    SSL *server = SSL_new(server_context), *client = SSL_new(client_context);
    BIO *server_in = BIO_new(BIO_s_mem()), *server_out = BIO_new(BIO_s_mem());
    BIO *client_in = BIO_new(BIO_s_mem()), *client_out = BIO_new(BIO_s_mem());
    SSL_set_bio(server, server_in, server_out);
    SSL_set_bio(client, client_in, client_out);
    SSL_set_accept_state(server);
    SSL_set_connect_state(client);
    for (int round = 0; round < 20 && !(SSL_is_init_finished(server) && SSL_is_init_finished(client)); round++) {
        SSL_do_handshake(client);
        move(client_out, server_in);
        SSL_do_handshake(server);
        move(server_out, client_in);
    }
    if (!SSL_is_init_finished(server)) {
        fprintf(stderr, "handshake did not finish\n");
        ERR_print_errors_fp(stderr);
        return 1;
    }
    static unsigned char plaintext[16384], sink[1 << 16];
    memset(plaintext, 'a', sizeof plaintext);
    const int records = 200000;
    double start = seconds();
    for (int i = 0; i < records; i++) {
        size_t written = 0;
        if (SSL_write_ex(server, plaintext, size, &written) != 1 || written != size) {
            ERR_print_errors_fp(stderr);
            return 1;
        }
        while (BIO_read(server_out, sink, sizeof sink) > 0) {}
    }
    double elapsed = seconds() - start;
    printf("%s %s, %zu-byte records: %.0f ns per SSL_write\n", SSL_get_version(server),
           SSL_CIPHER_get_name(SSL_get_current_cipher(server)), size, elapsed / records * 1e9);
    return 0;
}
