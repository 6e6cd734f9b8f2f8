#include "cluster/guest_port.h"

#include <grpcpp/grpcpp.h>

#include <cctype>
#include <filesystem>

#include "cluster/join_token.h"
#include "cluster/x509.h"
#include "placement/remote_worker.h"
#include "util/file_text.h"
#include "util/log.h"

namespace sf::cluster {

namespace pb = superfluid::cluster::v1;

guest_port::guest_port(head_identity &identity, node_pool &pool, const std::string &model_path)
    : identity_(identity), pool_(pool), tokens_(identity.dir()), model_(model_path) {
    dial_tls_ = {identity.ca().cert_pem, identity.head().key_pem, identity.head().cert_pem};
}

guest_port::~guest_port() {
    stop();
}

bool guest_port::start(const std::string &host, int port) {
    grpc::SslServerCredentialsOptions opts(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
    opts.pem_root_certs = identity_.ca().cert_pem;
    opts.pem_key_cert_pairs.push_back(
        {identity_.head().key_pem, identity_.head().cert_pem + identity_.ca().cert_pem});
    grpc::ServerBuilder b;
    const std::string where = host + ":" + std::to_string(port);
    b.AddListeningPort(where, grpc::SslServerCredentials(opts));
    b.RegisterService(this);
    // A port in use is an error, not shared with the process holding it (gRPC's default).
    b.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    server_ = b.BuildAndStart();
    if (!server_) {
        SF_LOG_ERROR("cluster", "cannot listen for guests on %s", where.c_str());
        return false;
    }
    SF_LOG_INFO("cluster", "guest port %s (TLS; CA pin %s)", where.c_str(),
                identity_.pin().c_str());
    return true;
}

void guest_port::stop() {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_.reset();
}

std::string guest_port::peer_node(grpc::ServerContext *ctx) {
    auto auth = ctx->auth_context();
    if (!auth || !auth->IsPeerAuthenticated()) return "";
    for (const auto &v : auth->FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME))
        return std::string(v.data(), v.size());
    return "";
}

std::string guest_port::peer_host(grpc::ServerContext *ctx) {
    std::string p    = ctx->peer();  // ipv4:10.0.0.2:4711 or ipv6:[::1]:4711
    const auto colon = p.find(':');
    if (colon != std::string::npos) p = p.substr(colon + 1);
    const auto last = p.rfind(':');
    if (last != std::string::npos) p = p.substr(0, last);
    return p;
}

grpc::Status guest_port::GetCA(grpc::ServerContext *, const pb::GetCARequest *,
                               pb::GetCAReply *reply) {
    reply->set_ca_pem(identity_.ca().cert_pem);
    return grpc::Status::OK;
}

grpc::Status guest_port::Challenge(grpc::ServerContext *, const pb::ChallengeRequest *,
                                   pb::ChallengeReply *reply) {
    const std::string nonce = random_bytes(32);
    const auto now          = std::chrono::steady_clock::now();
    std::lock_guard lk(nonces_mu_);
    for (auto it = nonces_.begin(); it != nonces_.end();)
        it = it->second < now ? nonces_.erase(it) : std::next(it);
    if (nonces_.size() > 4096) return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "busy");
    nonces_[nonce] = now + std::chrono::seconds(60);
    reply->set_nonce(nonce);
    return grpc::Status::OK;
}

bool guest_port::take_nonce(const std::string &nonce) {
    std::lock_guard lk(nonces_mu_);
    auto it = nonces_.find(nonce);
    if (it == nonces_.end()) return false;
    const bool fresh = it->second >= std::chrono::steady_clock::now();
    nonces_.erase(it);
    return fresh;
}

// A node name of letters, digits, '-' and '.', made unique by a suffix when a node of that
// name already holds a certificate (nodes/<name>.crt).
std::string guest_port::unique_name(const std::string &asked) {
    std::string name;
    for (char c : asked)
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') name += c;
    if (name.empty() || name == k_head_name || name == "local") name = "node";
    if (name.size() > 48) name.resize(48);
    std::string out = name;
    std::string unused;
    while (read_file(identity_.dir() + "/nodes/" + out + ".crt", unused))
        out = name + "-" + to_hex(random_bytes(2));
    return out;
}

grpc::Status guest_port::Join(grpc::ServerContext *ctx, const pb::JoinRequest *req,
                              pb::JoinReply *reply) {
    const std::string who = peer_host(ctx);
    if (!take_nonce(req->nonce())) {
        SF_LOG_WARN("cluster",
                    "join refused from %s (token %s): unknown or reused nonce "
                    "(a replayed join?)",
                    who.c_str(), req->token_id().c_str());
        return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "join refused");
    }
    std::string why;
    if (!tokens_.redeem(req->token_id(), req->nonce(), identity_.pin(), req->csr_pem(),
                        req->proof(), why)) {
        SF_LOG_WARN("cluster", "join refused from %s: %s", who.c_str(), why.c_str());
        return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "join refused: " + why);
    }
    static std::mutex issue_mu;  // one name → certificate at a time
    std::lock_guard lk(issue_mu);
    const std::string name = unique_name(req->node_name());
    std::string cert;
    if (!identity_.issue(req->csr_pem(), name, cert, why)) {
        SF_LOG_WARN("cluster", "join from %s: %s", who.c_str(), why.c_str());
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, why);
    }
    std::error_code ec;
    std::filesystem::create_directories(identity_.dir() + "/nodes", ec);
    write_file_atomic(identity_.dir() + "/nodes/" + name + ".crt", cert, 0644);
    tokens_.record_join(req->token_id(), name, serial_hex(cert));
    SF_LOG_INFO("cluster", "node %s joined from %s with token %s (certificate serial %s)",
                name.c_str(), who.c_str(), req->token_id().c_str(), serial_hex(cert).c_str());
    reply->set_cert_pem(cert);
    reply->set_node_name(name);
    return grpc::Status::OK;
}

grpc::Status guest_port::Register(grpc::ServerContext *ctx, const pb::RegisterRequest *req,
                                  pb::RegisterReply *reply) {
    const std::string name = peer_node(ctx);
    if (name.empty() || name == k_head_name) {
        SF_LOG_WARN("cluster", "register refused from %s: no node certificate",
                    peer_host(ctx).c_str());
        return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "a node certificate is required");
    }
    if (req->worker_port() <= 0 || req->worker_port() > 65535)
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad worker port");
    const std::string host    = req->worker_host().empty() ? peer_host(ctx) : req->worker_host();
    const std::string address = host + ":" + std::to_string(req->worker_port());
    const std::string serial  = peer_serial(ctx);
    if (tokens_.revoked(serial)) {
        SF_LOG_WARN("cluster", "register refused from %s (%s): certificate serial %s is revoked",
                    name.c_str(), peer_host(ctx).c_str(), serial.c_str());
        reply->set_state(pb::RegisterReply::REFUSED);
        reply->set_message("this node's certificate (serial " + serial +
                           ") was revoked on the head; join again with a new token");
        return grpc::Status::OK;
    }
    if (req->leaving()) {  // moves its sessions now, while its worker still runs
        pool_.leave(name, serial);
        reply->set_state(pb::RegisterReply::PENDING);
        return grpc::Status::OK;
    }
    node_report r = pool_.heartbeat(name, serial);
    if (r.state == "refused") {
        reply->set_state(pb::RegisterReply::REFUSED);
        reply->set_message(r.message);
        return grpc::Status::OK;
    }
    if (r.name.empty() || r.address != address) {
        const tls_identity tls = dial_tls_;
        pool_.add_node(name, address, [name, address, tls](uint64_t base) {
            return std::make_unique<remote_worker>(name, address, tls, base);
        });
        pool_.heartbeat(name, serial);
        reply->set_state(pb::RegisterReply::PENDING);
        return grpc::Status::OK;
    }
    reply->set_state(r.state == "active" ? pb::RegisterReply::ACTIVE : pb::RegisterReply::PENDING);
    return grpc::Status::OK;
}

std::string guest_port::peer_serial(grpc::ServerContext *ctx) {
    std::string serial;
    for (const auto &v : ctx->auth_context()->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME))
        serial = serial_hex(std::string(v.data(), v.size()));
    return serial;
}

grpc::Status guest_port::GetModel(grpc::ServerContext *ctx, const pb::GetModelRequest *req,
                                  grpc::ServerWriter<pb::ModelChunk> *w) {
    const std::string name = peer_node(ctx);
    if (name.empty() || name == k_head_name || tokens_.revoked(peer_serial(ctx)))
        return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                            "a valid node certificate is required");
    if (req->offset() == 0) SF_LOG_INFO("cluster", "node %s fetches the model", name.c_str());
    return model_.stream(req->offset(), w);
}

}  // namespace sf::cluster
