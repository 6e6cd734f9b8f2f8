// A guest node's worker listens on TCP with mutual TLS (issue #17): it presents its node
// certificate, requires a client certificate signed by the cluster CA, and serves only a peer
// whose certificate names `peer_cn` (the head's, "superfluid-head"): another guest, holding a
// certificate of the same CA, is refused. Files are PEM (cluster/x509.h writes them).
// Plain functions; the returned credentials are used by the worker's gRPC server.
#pragma once

#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

namespace sf {

/**
 * Server credentials for the worker's TCP port, or nullptr with `error` when a file cannot
 * be read. `peer_cn`: the common name a client certificate must carry.
 */
std::shared_ptr<grpc::ServerCredentials> worker_tls_credentials(const std::string &cert_file,
                                                                const std::string &key_file,
                                                                const std::string &ca_file,
                                                                const std::string &peer_cn,
                                                                std::string &error);

}  // namespace sf
