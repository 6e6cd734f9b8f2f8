// The cluster's certificates, through OpenSSL's API (issue #17): the CA (an EC P-256 key and
// a self-signed certificate), key pairs with their PKCS#10 requests, certificates the CA signs
// (the head's and each node's: CN and a DNS SAN = the name the CA gives, serverAuth +
// clientAuth), and the CA pin a join token carries. Everything is PEM text; nothing is cached.
// Plain functions, callable from any thread.
#pragma once

#include <cstdint>
#include <string>

namespace sf::cluster {

/** A private key and its certificate (or request), PEM. */
struct key_and_cert {
    std::string key_pem;
    std::string cert_pem;
};

/** A new CA: key + self-signed certificate (10 years). False with `error` on failure. */
bool make_ca(key_and_cert &out, std::string &error);

/** A new EC P-256 key (PEM) and a certificate request for it (PEM, subject CN=`name`). */
bool make_key_and_csr(const std::string &name, std::string &key_pem, std::string &csr_pem,
                      std::string &error);

/**
 * Signs `csr_pem` (its signature is checked first) with the CA: the certificate names `name`
 * (CN and DNS SAN, whatever the request asked), serial `serial`, valid `days` days.
 */
bool sign_csr(const key_and_cert &ca, const std::string &csr_pem, const std::string &name,
              uint64_t serial, int days, std::string &cert_pem, std::string &error);

/**
 * The pin: SHA-256 (lower-case hex) of the certificate's public key as DER
 * SubjectPublicKeyInfo (what kubeadm's --discovery-token-ca-cert-hash hashes). "" when the
 * PEM is not a certificate.
 */
std::string public_key_pin(const std::string &cert_pem);

/** The certificate's subject CN; "" when none. */
std::string common_name(const std::string &cert_pem);

/** The certificate's serial number (hex); "" when unreadable. */
std::string serial_hex(const std::string &cert_pem);

/** True when `cert_pem` is signed by `ca_cert_pem` and within its validity now. */
bool verify_signed_by(const std::string &cert_pem, const std::string &ca_cert_pem);

/** `n` random bytes from OpenSSL's CSPRNG. */
std::string random_bytes(size_t n);

/** Lower-case hex of `bytes`. */
std::string to_hex(const std::string &bytes);

/** SHA-256 of `data` (raw 32 bytes). */
std::string sha256(const std::string &data);

/** HMAC-SHA256 of `data` under `key` (raw 32 bytes). */
std::string hmac_sha256(const std::string &key, const std::string &data);

}  // namespace sf::cluster
