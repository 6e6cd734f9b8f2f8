#include "worker/worker_tls.h"

#include <grpcpp/security/auth_metadata_processor.h>
#include <grpcpp/security/server_credentials.h>

#include "util/file_text.h"
#include "util/log.h"

namespace sf {

namespace {

// Refuses every call whose verified client certificate does not name the expected peer.
class peer_name_check final : public grpc::AuthMetadataProcessor {
  public:
    explicit peer_name_check(std::string cn) : cn_(std::move(cn)) {}
    bool IsBlocking() const override { return false; }
    grpc::Status Process(const InputMetadata &, grpc::AuthContext *context, OutputMetadata *,
                         OutputMetadata *) override {
        for (const auto &v : context->FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME))
            if (std::string(v.data(), v.size()) == cn_) return grpc::Status::OK;
        SF_LOG_WARN("worker", "refused a call from a peer whose certificate is not %s",
                    cn_.c_str());
        return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "not the cluster's head");
    }

  private:
    std::string cn_;
};

}  // namespace

std::shared_ptr<grpc::ServerCredentials> worker_tls_credentials(const std::string &cert_file,
                                                                const std::string &key_file,
                                                                const std::string &ca_file,
                                                                const std::string &peer_cn,
                                                                std::string &error) {
    grpc::SslServerCredentialsOptions opts(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
    if (!read_file(ca_file, opts.pem_root_certs) || !read_file(key_file, pair.private_key) ||
        !read_file(cert_file, pair.cert_chain)) {
        error = "cannot read the node certificate, key or CA (" + cert_file + ", " + key_file +
                ", " + ca_file + ")";
        return nullptr;
    }
    opts.pem_key_cert_pairs.push_back(std::move(pair));
    auto creds = grpc::SslServerCredentials(opts);
    creds->SetAuthMetadataProcessor(std::make_shared<peer_name_check>(peer_cn));
    return creds;
}

}  // namespace sf
