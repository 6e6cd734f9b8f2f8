#include "cluster/join_client.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "cluster.grpc.pb.h"
#include "cluster/head_identity.h"
#include "cluster/join_token.h"
#include "cluster/x509.h"
#include "util/file_text.h"
#include "util/log.h"

namespace sf::cluster {

namespace pb = superfluid::cluster::v1;

static std::string node_dir(const std::string &state_dir) {
    return state_dir + "/node";
}

bool load_node_credentials(const std::string &state_dir, node_credentials &out) {
    const std::string d = node_dir(state_dir);
    if (!read_file(d + "/ca.crt", out.ca_pem) || !read_file(d + "/node.key", out.key_pem) ||
        !read_file(d + "/node.crt", out.cert_pem))
        return false;
    out.name = common_name(out.cert_pem);
    return !out.name.empty();
}

static std::chrono::system_clock::time_point in_seconds(int s) {
    return std::chrono::system_clock::now() + std::chrono::seconds(s);
}

// Step 1: the CA, fetched over TLS that does not verify the head (the pin check does).
static bool fetch_ca(const std::string &head, std::string &ca_pem, std::string &error) {
    grpc::experimental::TlsChannelCredentialsOptions o;
    o.set_verify_server_certs(false);
    o.set_check_call_host(false);
    o.set_certificate_verifier(std::make_shared<grpc::experimental::NoOpCertificateVerifier>());
    auto ch   = grpc::CreateChannel(head, grpc::experimental::TlsCredentials(o));
    auto stub = pb::Cluster::NewStub(ch);
    grpc::ClientContext ctx;
    ctx.set_deadline(in_seconds(10));
    pb::GetCAReply r;
    grpc::Status st = stub->GetCA(&ctx, pb::GetCARequest{}, &r);
    if (!st.ok())
        return error = "cannot reach the head at " + head + ": " + st.error_message(), false;
    ca_pem = r.ca_pem();
    return true;
}

// A channel that verifies the head's certificate against `ca_pem` (and, with a key and
// certificate, presents them).
std::shared_ptr<grpc::Channel> head_channel(const std::string &head, const std::string &ca_pem,
                                            const std::string &key_pem,
                                            const std::string &cert_pem) {
    grpc::SslCredentialsOptions so;
    so.pem_root_certs  = ca_pem;
    so.pem_private_key = key_pem;
    so.pem_cert_chain  = cert_pem;
    grpc::ChannelArguments args;
    args.SetSslTargetNameOverride(k_head_name);
    return grpc::CreateCustomChannel(head, grpc::SslCredentials(so), args);
}

bool join_cluster(const std::string &head, const std::string &token_text, const std::string &name,
                  const std::string &state_dir, node_credentials &out, std::string &error) {
    join_token token;
    if (!parse_join_token(token_text, token, error)) return false;
    std::string ca_pem;
    if (!fetch_ca(head, ca_pem, error)) return false;
    const std::string pin = public_key_pin(ca_pem);
    if (pin != token.pin) {
        error = "the head's CA does not match the token (CA public key hash " +
                (pin.empty() ? std::string("unreadable") : pin) + ", the token pins " + token.pin +
                "): not joining, nothing secret was sent";
        return false;
    }
    auto stub = pb::Cluster::NewStub(head_channel(head, ca_pem));
    pb::ChallengeReply ch;
    {
        grpc::ClientContext ctx;
        ctx.set_deadline(in_seconds(10));
        grpc::Status st = stub->Challenge(&ctx, pb::ChallengeRequest{}, &ch);
        if (!st.ok()) return error = "challenge failed: " + st.error_message(), false;
    }
    std::string key_pem, csr_pem;
    if (!make_key_and_csr(name, key_pem, csr_pem, error)) return false;
    pb::JoinRequest req;
    req.set_token_id(token.id);
    req.set_nonce(ch.nonce());
    req.set_csr_pem(csr_pem);
    req.set_node_name(name);
    req.set_proof(join_proof(join_key(token.secret), ch.nonce(), pin, csr_pem));
    pb::JoinReply rep;
    grpc::ClientContext ctx;
    ctx.set_deadline(in_seconds(20));
    grpc::Status st = stub->Join(&ctx, req, &rep);
    if (!st.ok()) return error = "the head refused to join: " + st.error_message(), false;
    if (!verify_signed_by(rep.cert_pem(), ca_pem))
        return error = "the head returned a certificate its CA did not sign", false;
    const std::string d = node_dir(state_dir);
    std::error_code ec;
    std::filesystem::create_directories(d, ec);
    if (!write_file_atomic(d + "/ca.crt", ca_pem, 0644) ||
        !write_file_atomic(d + "/node.key", key_pem, 0600) ||
        !write_file_atomic(d + "/node.crt", rep.cert_pem(), 0644))
        return error = "cannot write the node credentials into " + d, false;
    out = {rep.node_name(), ca_pem, key_pem, rep.cert_pem()};
    return true;
}

register_result register_node(const std::string &head, const node_credentials &creds,
                              int worker_port, const std::string &advertise_host, bool leaving) {
    // One channel per head address for the process's life: registrations are heartbeats.
    static std::mutex mu;
    static std::map<std::string, std::shared_ptr<grpc::Channel>> channels;
    std::shared_ptr<grpc::Channel> ch;
    {
        std::lock_guard lk(mu);
        auto &c = channels[head];
        if (!c) c = head_channel(head, creds.ca_pem, creds.key_pem, creds.cert_pem);
        ch = c;
    }
    auto stub = pb::Cluster::NewStub(ch);
    pb::RegisterRequest req;
    req.set_worker_port(worker_port);
    req.set_worker_host(advertise_host);
    req.set_leaving(leaving);
    pb::RegisterReply rep;
    grpc::ClientContext ctx;
    ctx.set_deadline(in_seconds(3));
    register_result r;
    grpc::Status st = stub->Register(&ctx, req, &rep);
    if (!st.ok()) {
        r.message = st.error_message();
        return r;
    }
    r.reached = true;
    r.st      = rep.state() == pb::RegisterReply::ACTIVE    ? register_result::state::ACTIVE
                : rep.state() == pb::RegisterReply::REFUSED ? register_result::state::REFUSED
                                                            : register_result::state::PENDING;
    r.message = rep.message();
    return r;
}

}  // namespace sf::cluster
