#include "engine/llama/speculation.h"

#include <algorithm>

namespace sf {

bool parse_spec_type(const std::string &name, spec_type &out) {
    if (name == "none") {
        out = spec_type::NONE;
    } else if (name == "ngram") {
        out = spec_type::NGRAM;
    } else if (name == "draft") {
        out = spec_type::DRAFT;
    } else if (name == "mtp") {
        out = spec_type::MTP;
    } else {
        return false;
    }
    return true;
}

const char *spec_type_name(spec_type t) {
    switch (t) {
        case spec_type::NGRAM:
            return "ngram";
        case spec_type::DRAFT:
            return "draft";
        case spec_type::MTP:
            return "mtp";
        default:
            return "none";
    }
}

// llama.cpp's common_ngram_simple_draft (common/ngram-map.cpp) does the same for one fixed
// n-gram size and copies the history into a vector; here the longest recurring suffix wins, so
// a short, frequent n-gram does not hide a long, specific one.
void ngram_draft(std::span<const token_id> tokens, const spec_options &opts, int32_t n_max,
                 std::vector<token_id> &out) {
    out.clear();
    const auto len = static_cast<int64_t>(tokens.size());
    if (n_max <= 0) return;
    const int64_t lo = std::max<int64_t>(opts.ngram_min, 1);
    for (int64_t n = std::min<int64_t>(opts.ngram_max, len - 1); n >= lo; --n) {
        const token_id *suffix = tokens.data() + (len - n);
        // Most recent occurrence that ends before the suffix's last token.
        for (int64_t j = len - n - 1; j >= 0; --j) {
            if (tokens[j + n - 1] != suffix[n - 1] ||
                !std::equal(suffix, suffix + n, tokens.data() + j))
                continue;
            const int64_t from = j + n;
            const int64_t take = std::min<int64_t>(n_max, len - from);
            out.assign(tokens.begin() + from, tokens.begin() + from + take);
            return;
        }
    }
}

}  // namespace sf
