// The head's cluster identity in STATE/cluster/ (issue #17): the CA (ca.key, ca.crt), the
// head's own certificate signed by it (head.key, head.crt; CN and SAN "superfluid-head", used
// as the guest port's server certificate and as the client certificate the head dials guests
// with), and the next serial number (serial). Created on first use with OpenSSL (x509.h);
// keys are written 0600. Owned by the thread that loads it; read-only afterwards.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "cluster/x509.h"

namespace sf::cluster {

/** The name in the head's certificate; guests' workers serve only this peer. */
inline constexpr const char *k_head_name = "superfluid-head";

class head_identity {
  public:
    /**
     * Loads STATE/cluster's identity, creating what is missing. `created` tells whether the CA
     * is new (first start). False with `error` when files cannot be read or written.
     */
    bool load_or_create(const std::string &state_dir, bool &created, std::string &error);
    /** Loads an existing identity only (token create); false when there is none. */
    bool load(const std::string &state_dir, std::string &error);

    const key_and_cert &ca() const { return ca_; }
    const key_and_cert &head() const { return head_; }
    /** The CA pin (x509.h public_key_pin). */
    const std::string &pin() const { return pin_; }
    /** STATE/cluster. */
    const std::string &dir() const { return dir_; }
    /** Signs a node's request (x509.h sign_csr) with the next serial; 1 year. */
    bool issue(const std::string &csr_pem, const std::string &name, std::string &cert_pem,
               std::string &error);

  private:
    uint64_t next_serial();

    std::string dir_;
    key_and_cert ca_, head_;
    std::string pin_;
    std::mutex serial_mu_;
};

}  // namespace sf::cluster
