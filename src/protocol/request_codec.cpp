#include "protocol/request_codec.h"

#include "protocol/convert.h"

namespace sf::protocol {

std::string encode_submission(const worker_submission &s) {
    pb::GenerateRequest r;
    to_proto(s, r);
    return r.SerializeAsString();
}

bool decode_submission(std::string_view bytes, worker_submission &out) {
    pb::GenerateRequest r;
    if (!r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return false;
    out = from_proto(r);
    return true;
}

}  // namespace sf::protocol
