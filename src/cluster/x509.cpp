#include "cluster/x509.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace sf::cluster {

namespace {

struct bio_free {
    void operator()(BIO *b) const { BIO_free(b); }
};
struct pkey_free {
    void operator()(EVP_PKEY *k) const { EVP_PKEY_free(k); }
};
struct x509_free {
    void operator()(X509 *x) const { X509_free(x); }
};
struct req_free {
    void operator()(X509_REQ *r) const { X509_REQ_free(r); }
};
using bio_ptr  = std::unique_ptr<BIO, bio_free>;
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_free>;
using x509_ptr = std::unique_ptr<X509, x509_free>;
using req_ptr  = std::unique_ptr<X509_REQ, req_free>;

bio_ptr mem_in(const std::string &s) {
    return bio_ptr(BIO_new_mem_buf(s.data(), static_cast<int>(s.size())));
}

std::string bio_text(BIO *b) {
    char *data = nullptr;
    long n     = BIO_get_mem_data(b, &data);
    return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

x509_ptr read_cert(const std::string &pem) {
    auto b = mem_in(pem);
    return x509_ptr(b ? PEM_read_bio_X509(b.get(), nullptr, nullptr, nullptr) : nullptr);
}

pkey_ptr read_key(const std::string &pem) {
    auto b = mem_in(pem);
    return pkey_ptr(b ? PEM_read_bio_PrivateKey(b.get(), nullptr, nullptr, nullptr) : nullptr);
}

pkey_ptr new_key() {
    return pkey_ptr(EVP_EC_gen("P-256"));
}

std::string key_pem(EVP_PKEY *k) {
    bio_ptr b(BIO_new(BIO_s_mem()));
    PEM_write_bio_PrivateKey(b.get(), k, nullptr, nullptr, 0, nullptr, nullptr);
    return bio_text(b.get());
}

std::string cert_pem(X509 *x) {
    bio_ptr b(BIO_new(BIO_s_mem()));
    PEM_write_bio_X509(b.get(), x);
    return bio_text(b.get());
}

bool add_ext(X509 *cert, X509 *issuer, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    if (!ext) return false;
    const bool ok = X509_add_ext(cert, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

void set_name(X509_NAME *n, const std::string &cn) {
    X509_NAME_add_entry_by_txt(n, "O", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char *>("superfluid"), -1, -1, 0);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char *>(cn.c_str()), -1, -1, 0);
}

}  // namespace

bool make_ca(key_and_cert &out, std::string &error) {
    pkey_ptr key = new_key();
    x509_ptr x(X509_new());
    if (!key || !x) return error = "cannot create a key", false;
    X509_set_version(x.get(), 2);
    BIGNUM *bn = BN_new();
    BN_rand(bn, 64, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY);
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x.get()));
    BN_free(bn);
    X509_gmtime_adj(X509_getm_notBefore(x.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x.get()), 3650L * 24 * 3600);
    X509_set_pubkey(x.get(), key.get());
    set_name(X509_get_subject_name(x.get()), "superfluid cluster CA");
    X509_set_issuer_name(x.get(), X509_get_subject_name(x.get()));
    if (!add_ext(x.get(), x.get(), NID_basic_constraints, "critical,CA:TRUE") ||
        !add_ext(x.get(), x.get(), NID_key_usage, "critical,keyCertSign,cRLSign") ||
        !add_ext(x.get(), x.get(), NID_subject_key_identifier, "hash") ||
        X509_sign(x.get(), key.get(), EVP_sha256()) == 0)
        return error = "cannot sign the CA certificate", false;
    out.key_pem  = key_pem(key.get());
    out.cert_pem = cert_pem(x.get());
    return true;
}

bool make_key_and_csr(const std::string &name, std::string &kpem, std::string &csr_pem,
                      std::string &error) {
    pkey_ptr key = new_key();
    req_ptr req(X509_REQ_new());
    if (!key || !req) return error = "cannot create a key", false;
    X509_REQ_set_version(req.get(), 0);
    set_name(X509_REQ_get_subject_name(req.get()), name);
    X509_REQ_set_pubkey(req.get(), key.get());
    if (X509_REQ_sign(req.get(), key.get(), EVP_sha256()) == 0)
        return error = "cannot sign the certificate request", false;
    bio_ptr b(BIO_new(BIO_s_mem()));
    PEM_write_bio_X509_REQ(b.get(), req.get());
    csr_pem = bio_text(b.get());
    kpem    = key_pem(key.get());
    return true;
}

bool sign_csr(const key_and_cert &ca, const std::string &csr_pem, const std::string &name,
              uint64_t serial, int days, std::string &out_pem, std::string &error) {
    x509_ptr ca_cert = read_cert(ca.cert_pem);
    pkey_ptr ca_key  = read_key(ca.key_pem);
    if (!ca_cert || !ca_key) return error = "the CA's key or certificate is unreadable", false;
    auto b = mem_in(csr_pem);
    req_ptr req(b ? PEM_read_bio_X509_REQ(b.get(), nullptr, nullptr, nullptr) : nullptr);
    if (!req) return error = "not a certificate request", false;
    EVP_PKEY *pub = X509_REQ_get0_pubkey(req.get());
    if (!pub || X509_REQ_verify(req.get(), pub) != 1)
        return error = "the certificate request's signature is invalid", false;
    x509_ptr x(X509_new());
    X509_set_version(x.get(), 2);
    ASN1_INTEGER_set_uint64(X509_get_serialNumber(x.get()), serial);
    X509_gmtime_adj(X509_getm_notBefore(x.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x.get()), static_cast<long>(days) * 24 * 3600);
    X509_set_pubkey(x.get(), pub);
    set_name(X509_get_subject_name(x.get()), name);
    X509_set_issuer_name(x.get(), X509_get_subject_name(ca_cert.get()));
    const std::string san = "DNS:" + name;
    if (!add_ext(x.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
        !add_ext(x.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature") ||
        !add_ext(x.get(), ca_cert.get(), NID_ext_key_usage, "serverAuth,clientAuth") ||
        !add_ext(x.get(), ca_cert.get(), NID_subject_alt_name, san.c_str()) ||
        !add_ext(x.get(), ca_cert.get(), NID_authority_key_identifier, "keyid") ||
        X509_sign(x.get(), ca_key.get(), EVP_sha256()) == 0)
        return error = "cannot sign the certificate", false;
    out_pem = cert_pem(x.get());
    return true;
}

std::string public_key_pin(const std::string &pem) {
    x509_ptr x = read_cert(pem);
    if (!x) return "";
    unsigned char *der = nullptr;
    const int n        = i2d_PUBKEY(X509_get0_pubkey(x.get()), &der);
    if (n <= 0) return "";
    std::string spki(reinterpret_cast<char *>(der), static_cast<size_t>(n));
    OPENSSL_free(der);
    return to_hex(sha256(spki));
}

std::string common_name(const std::string &pem) {
    x509_ptr x = read_cert(pem);
    if (!x) return "";
    char buf[256] = {0};
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(x.get()), NID_commonName, buf, sizeof buf) <
        0)
        return "";
    return buf;
}

std::string serial_hex(const std::string &pem) {
    x509_ptr x = read_cert(pem);
    if (!x) return "";
    BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x.get()), nullptr);
    char *hex  = bn ? BN_bn2hex(bn) : nullptr;
    std::string s(hex ? hex : "");
    OPENSSL_free(hex);
    BN_free(bn);
    return s;
}

bool verify_signed_by(const std::string &pem, const std::string &ca_pem) {
    x509_ptr x  = read_cert(pem);
    x509_ptr ca = read_cert(ca_pem);
    if (!x || !ca) return false;
    X509_STORE *store = X509_STORE_new();
    X509_STORE_add_cert(store, ca.get());
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, store, x.get(), nullptr);
    const bool ok = X509_verify_cert(ctx) == 1;
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    return ok;
}

std::string random_bytes(size_t n) {
    std::string s(n, '\0');
    RAND_bytes(reinterpret_cast<unsigned char *>(s.data()), static_cast<int>(n));
    return s;
}

std::string to_hex(const std::string &bytes) {
    static const char *digits = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

std::string sha256(const std::string &data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(data.data(), data.size(), out, &len, EVP_sha256(), nullptr);
    return std::string(reinterpret_cast<char *>(out), len);
}

std::string hmac_sha256(const std::string &key, const std::string &data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char *>(data.data()), data.size(), out, &len);
    return std::string(reinterpret_cast<char *>(out), len);
}

}  // namespace sf::cluster
