#include "cluster/model_transfer.h"

#include <openssl/evp.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "util/log.h"

namespace sf::cluster {

namespace pb = superfluid::cluster::v1;

namespace {

constexpr size_t k_chunk = 1 << 20;  // bytes per ModelChunk (gRPC's default limit is 4 MiB)

std::string hex(const unsigned char *p, unsigned n) {
    static const char *d = "0123456789abcdef";
    std::string s;
    for (unsigned i = 0; i < n; ++i) s += {d[p[i] >> 4], d[p[i] & 15]};
    return s;
}

}  // namespace

std::string file_sha256(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return "";
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
    std::vector<char> buf(k_chunk);
    while (f) {
        f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(f.gcount()));
    }
    if (f.bad()) return "";
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_DigestFinal_ex(ctx.get(), out, &n);
    return hex(out, n);
}

grpc::Status model_source::stream(uint64_t offset, grpc::ServerWriter<pb::ModelChunk> *w) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path_, ec);
    if (path_.empty() || ec) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no model file");
    if (offset > size) return grpc::Status(grpc::StatusCode::OUT_OF_RANGE, "offset past the end");
    std::string sha;
    {
        std::lock_guard lk(mu_);
        if (sha256_.empty()) sha256_ = file_sha256(path_);
        sha = sha256_;
    }
    std::ifstream f(path_, std::ios::binary);
    if (sha.empty() || !f)
        return grpc::Status(grpc::StatusCode::UNAVAILABLE, "cannot read the model");
    f.seekg(static_cast<std::streamoff>(offset));
    pb::ModelChunk first;
    first.set_name(std::filesystem::path(path_).filename().string());
    first.set_size(size);
    first.set_sha256(sha);
    std::vector<char> buf(k_chunk);
    bool named = false;
    for (uint64_t at = offset; !named || at < size;) {
        pb::ModelChunk c = named ? pb::ModelChunk() : first;
        named            = true;
        f.read(buf.data(), static_cast<std::streamsize>(std::min<uint64_t>(k_chunk, size - at)));
        c.set_data(buf.data(), static_cast<size_t>(f.gcount()));
        at += static_cast<uint64_t>(f.gcount());
        if (!w->Write(c)) return grpc::Status(grpc::StatusCode::CANCELLED, "the guest went away");
        if (f.gcount() == 0 && at < size)
            return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the model file shrank");
    }
    return grpc::Status::OK;
}

std::string fetch_model_from_head(const std::string &head, const node_credentials &creds,
                                  const std::string &state_dir, std::string &error) {
    const std::string dir = state_dir + "/models/from-head";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    auto stub =
        pb::Cluster::NewStub(head_channel(head, creds.ca_pem, creds.key_pem, creds.cert_pem));
    // Ask for the header first (offset 0 would also start the transfer: read one message).
    for (int attempt = 0; attempt < 2; ++attempt) {
        grpc::ClientContext hdr_ctx;
        pb::GetModelRequest q;
        auto probe = stub->GetModel(&hdr_ctx, q);
        pb::ModelChunk head_chunk;
        if (!probe->Read(&head_chunk)) {
            const grpc::Status st = probe->Finish();
            return error          = "cannot get the model from the head: " + st.error_message(), "";
        }
        hdr_ctx.TryCancel();
        probe->Finish();
        const std::string sha = head_chunk.sha256(), name = head_chunk.name();
        const std::string final_path = dir + "/" + sha + ".gguf";
        if (std::filesystem::exists(final_path, ec)) {
            if (file_sha256(final_path) == sha) {
                SF_LOG_INFO("guest", "model %s from the head: already here (%s)", name.c_str(),
                            final_path.c_str());
                return final_path;
            }
            SF_LOG_WARN("guest", "%s does not match its SHA-256: fetching it again",
                        final_path.c_str());
            std::filesystem::remove(final_path, ec);
        }
        const std::string part = final_path + ".incomplete";
        uint64_t have =
            std::filesystem::exists(part, ec) ? std::filesystem::file_size(part, ec) : 0;
        if (have > head_chunk.size()) have = 0;
        SF_LOG_INFO("guest", "fetching model %s (%llu bytes, sha256 %s) from the head%s",
                    name.c_str(), static_cast<unsigned long long>(head_chunk.size()), sha.c_str(),
                    have > 0 ? ", resuming" : "");
        {
            std::ofstream out(part, have > 0 ? std::ios::binary | std::ios::app : std::ios::binary);
            grpc::ClientContext ctx;
            q.set_offset(have);
            auto rd = stub->GetModel(&ctx, q);
            pb::ModelChunk c;
            while (rd->Read(&c))
                out.write(c.data().data(), static_cast<std::streamsize>(c.data().size()));
            const grpc::Status st = rd->Finish();
            out.close();
            if (!st.ok() || !out)
                return error = "the model transfer from the head broke off (" + st.error_message() +
                               "); run join again to resume",
                       "";
        }
        if (file_sha256(part) == sha) {
            std::filesystem::rename(part, final_path, ec);
            if (ec) return error = "cannot store the model as " + final_path, "";
            SF_LOG_INFO("guest", "model verified (sha256 %s): %s", sha.c_str(), final_path.c_str());
            return final_path;
        }
        SF_LOG_WARN("guest",
                    "the model from the head does not match its SHA-256: fetching it "
                    "again from the start");
        std::filesystem::remove(part, ec);
    }
    return error = "the model from the head failed its SHA-256 check twice", "";
}

}  // namespace sf::cluster
