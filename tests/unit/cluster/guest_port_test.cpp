// The head's guest port over real TLS on loopback (cluster/guest_port.h): a join succeeds
// once per nonce — a captured Join sent again is refused even while its token has uses left —
// and Register needs a node certificate.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "cluster.grpc.pb.h"
#include "cluster/guest_port.h"
#include "cluster/head_identity.h"
#include "cluster/join_token.h"
#include "cluster/token_store.h"
#include "cluster/x509.h"

using namespace sf;
using namespace sf::cluster;
namespace pb = superfluid::cluster::v1;

namespace {

int free_port() {
    // A port the kernel picked, closed again: good enough on a test machine.
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family      = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    close(fd);
    return ntohs(a.sin_port);
}

}  // namespace

TEST(cluster_guest_port, a_replayed_join_is_refused_and_register_needs_a_node_certificate) {
    const std::string dir =
        std::filesystem::temp_directory_path() / ("sf-guest-port-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    head_identity id;
    bool created = false;
    std::string err;
    ASSERT_TRUE(id.load_or_create(dir, created, err)) << err;
    token_store store(id.dir());
    join_token t;
    ASSERT_TRUE(parse_join_token(store.create(id.pin(), 5, 3600, err), t, err)) << err;

    node_pool pool;
    guest_port port(id, pool);
    const int p = free_port();
    ASSERT_TRUE(port.start("127.0.0.1", p));

    grpc::SslCredentialsOptions so;
    so.pem_root_certs = id.ca().cert_pem;
    grpc::ChannelArguments args;
    args.SetSslTargetNameOverride(k_head_name);
    auto stub = pb::Cluster::NewStub(grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(p),
                                                               grpc::SslCredentials(so), args));

    pb::ChallengeReply ch;
    {
        grpc::ClientContext ctx;
        ASSERT_TRUE(stub->Challenge(&ctx, pb::ChallengeRequest{}, &ch).ok());
    }
    std::string key, csr;
    ASSERT_TRUE(make_key_and_csr("n", key, csr, err));
    pb::JoinRequest req;
    req.set_token_id(t.id);
    req.set_nonce(ch.nonce());
    req.set_csr_pem(csr);
    req.set_node_name("n");
    req.set_proof(join_proof(join_key(t.secret), ch.nonce(), id.pin(), csr));
    pb::JoinReply rep;
    {
        grpc::ClientContext ctx;
        grpc::Status st = stub->Join(&ctx, req, &rep);
        ASSERT_TRUE(st.ok()) << st.error_message();
    }
    EXPECT_TRUE(verify_signed_by(rep.cert_pem(), id.ca().cert_pem));
    EXPECT_EQ(common_name(rep.cert_pem()), "n");
    {
        grpc::ClientContext ctx;  // the same bytes again: the nonce is spent
        EXPECT_EQ(stub->Join(&ctx, req, &rep).error_code(), grpc::StatusCode::PERMISSION_DENIED);
    }
    {
        pb::RegisterRequest r;
        r.set_worker_port(8455);
        pb::RegisterReply rr;
        grpc::ClientContext ctx;  // no client certificate on this channel
        EXPECT_EQ(stub->Register(&ctx, r, &rr).error_code(), grpc::StatusCode::UNAUTHENTICATED);
    }
    port.stop();
    pool.stop();
    std::filesystem::remove_all(dir);
}
