// The model file from the head to a guest (issue #17: a guest started without --model gets
// the model the head serves): the head streams its file over the guest port (GetModel, node
// certificate required, 1 MiB chunks); the guest writes STATE/models/from-head/<sha256>.gguf
// through a `.incomplete` file (a broken transfer resumes from its size), hashes the whole
// file and uses it only when the SHA-256 equals the one the head announced. A file already
// there is re-hashed before use, so a damaged copy is fetched again.
// Threads: the head's model_source is read by gRPC handler threads (the hash is computed
// once, under a mutex); fetch_model_from_head blocks the calling thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "cluster.grpc.pb.h"
#include "cluster/join_client.h"

namespace sf::cluster {

/** SHA-256 (lower-case hex) of the file at `path`; "" when it cannot be read. */
std::string file_sha256(const std::string &path);

/** The head's model file as GetModel serves it. */
class model_source {
  public:
    explicit model_source(std::string path) : path_(std::move(path)) {}

    /**
     * Streams the file from `offset` into `writer`: the first chunk carries name, size and
     * SHA-256. Errors: NOT_FOUND when the head has no model file, OUT_OF_RANGE for an offset
     * past its end, UNAVAILABLE when it cannot be read.
     */
    grpc::Status stream(uint64_t offset,
                        grpc::ServerWriter<superfluid::cluster::v1::ModelChunk> *w);

  private:
    std::string path_;
    std::mutex mu_;
    std::string sha256_;  // computed at the first request
};

/**
 * Fetches the head's model into STATE/models/from-head/ (see above) with the node's
 * credentials; returns the verified file's path, or "" with `error`.
 */
std::string fetch_model_from_head(const std::string &head, const node_credentials &creds,
                                  const std::string &state_dir, std::string &error);

}  // namespace sf::cluster
