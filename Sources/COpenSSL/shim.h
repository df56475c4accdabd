#ifndef C_OPENSSL_SHIM_H
#define C_OPENSSL_SHIM_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/kdf.h>
#include <linux/tls.h>
#include <string.h>

/* Swift cannot import function-like macros or the SSL_OP_BIT() expressions, so the few that
   the TLS target needs are wrapped here, one static inline function per macro. */

static inline uint64_t COpenSSL_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline uint64_t COpenSSL_SSL_OP_NO_COMPRESSION(void) { return SSL_OP_NO_COMPRESSION; }
static inline uint64_t COpenSSL_SSL_OP_NO_TLSv1_3(void) { return SSL_OP_NO_TLSv1_3; }
static inline uint64_t COpenSSL_SSL_OP_CIPHER_SERVER_PREFERENCE(void) { return SSL_OP_CIPHER_SERVER_PREFERENCE; }
static inline uint64_t COpenSSL_SSL_OP_PRIORITIZE_CHACHA(void) { return SSL_OP_PRIORITIZE_CHACHA; }
static inline uint64_t COpenSSL_SSL_OP_ENABLE_KTLS(void) { return SSL_OP_ENABLE_KTLS; }

static inline int COpenSSL_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

static inline int COpenSSL_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}

static inline long COpenSSL_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

static inline long COpenSSL_SSL_set_mode(SSL *ssl, long mode) {
    return SSL_set_mode(ssl, mode);
}

static inline long COpenSSL_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

static inline void COpenSSL_BIO_set_retry_read(BIO *bio) { BIO_set_retry_read(bio); }
static inline void COpenSSL_BIO_clear_retry_flags(BIO *bio) { BIO_clear_retry_flags(bio); }

static inline EVP_PKEY *COpenSSL_EVP_EC_gen(const char *curve) { return EVP_EC_gen(curve); }

static inline void COpenSSL_X509V3_set_ctx_nodb(X509V3_CTX *ctx) { X509V3_set_ctx_nodb(ctx); }

/* OpenSSL's kernel-TLS hand-over (ssl/tls13_enc.c, ssl/record/rec_layer_s3.c): with
   SSL_OP_ENABLE_KTLS, once the TLS 1.3 application write keys exist OpenSSL offers them to the
   write BIO with BIO_ctrl(BIO_CTRL_SET_KTLS, 1, crypto_info); a BIO that accepts answers
   BIO_CTRL_GET_KTLS_SEND with 1 and from then on receives plaintext, each non-application
   record announced by BIO_CTRL_SET_KTLS_TX_SEND_CTRL_MSG with its content type. The first three
   numbers are OpenSSL-internal (include/internal/bio.h), stable across 3.x. */
#define COPENSSL_BIO_CTRL_SET_KTLS 72
#define COPENSSL_BIO_CTRL_SET_KTLS_TX_SEND_CTRL_MSG 74
#define COPENSSL_BIO_CTRL_CLEAR_KTLS_TX_CTRL_MSG 75

/* The traffic keys of one direction, copied out of the kernel's TLS_TX crypto_info. */
typedef struct {
    unsigned short version;
    unsigned short cipher;
    unsigned char key[32];
    size_t key_length;
    unsigned char iv[12];
    unsigned char sequence[8];
} COpenSSL_TrafficKeys;

/* Fills `out` from one cipher's fields: the IV is the salt (AES-GCM's first 4 bytes) followed by
   the rest (ChaCha20-Poly1305 has no salt, its 12-byte IV is all "rest"). */
static inline void COpenSSL_copy_traffic_keys(COpenSSL_TrafficKeys *out, const unsigned char *key, size_t key_length,
                                              const unsigned char *salt, size_t salt_length,
                                              const unsigned char *rest, size_t rest_length,
                                              const unsigned char *sequence) {
    memcpy(out->key, key, key_length);
    out->key_length = key_length;
    memcpy(out->iv, salt, salt_length);
    memcpy(out->iv + salt_length, rest, rest_length);
    memcpy(out->sequence, sequence, sizeof(out->sequence));
}

/* Reads the crypto_info OpenSSL passed with BIO_CTRL_SET_KTLS (a union of the linux/tls.h
   structs, each starting with the version and cipher type). Returns 0 for a cipher other than
   AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305. */
static inline int COpenSSL_ktls_traffic_keys(const void *info, COpenSSL_TrafficKeys *out) {
    const struct tls_crypto_info *header = (const struct tls_crypto_info *)info;
    memset(out, 0, sizeof(*out));
    out->version = header->version;
    out->cipher = header->cipher_type;
    switch (header->cipher_type) {
    case TLS_CIPHER_AES_GCM_128: {
        const struct tls12_crypto_info_aes_gcm_128 *gcm = info;
        COpenSSL_copy_traffic_keys(out, gcm->key, sizeof(gcm->key), gcm->salt, sizeof(gcm->salt), gcm->iv,
                                   sizeof(gcm->iv), gcm->rec_seq);
        return 1;
    }
    case TLS_CIPHER_AES_GCM_256: {
        const struct tls12_crypto_info_aes_gcm_256 *gcm = info;
        COpenSSL_copy_traffic_keys(out, gcm->key, sizeof(gcm->key), gcm->salt, sizeof(gcm->salt), gcm->iv,
                                   sizeof(gcm->iv), gcm->rec_seq);
        return 1;
    }
    case TLS_CIPHER_CHACHA20_POLY1305: {
        const struct tls12_crypto_info_chacha20_poly1305 *chacha = info;
        COpenSSL_copy_traffic_keys(out, chacha->key, sizeof(chacha->key), chacha->iv, 0, chacha->iv,
                                   sizeof(chacha->iv), chacha->rec_seq);
        return 1;
    }
    default:
        return 0;
    }
}

static inline int COpenSSL_EVP_CIPHER_CTX_get_tag(EVP_CIPHER_CTX *ctx, unsigned char *tag, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, length, tag);
}

#endif
