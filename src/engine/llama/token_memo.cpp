#include "engine/llama/token_memo.h"

#include <algorithm>

#include "common.h"
#include "llama.h"

namespace sf {

namespace {

// Texts shorter than this are tokenized whole: too short for the memo to pay.
constexpr size_t k_min_text = 1024;
// Prompts remembered (a few conversations or agents at once).
constexpr size_t k_entries = 8;

}  // namespace

token_memo::token_memo(const llama_vocab *vocab) : vocab_(vocab) {
    usable_ = llama_vocab_type(vocab) == LLAMA_VOCAB_TYPE_BPE && !llama_vocab_get_add_eos(vocab);
    if (!usable_) return;
    // The tokens llama.cpp's tokenizer splits a text at (tokenizer_st_partition).
    const int32_t n = llama_vocab_n_tokens(vocab);
    for (int32_t t = 0; t < n; ++t) {
        const auto attr = llama_vocab_get_attr(vocab, t);
        if (!(attr & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_USER_DEFINED |
                      LLAMA_TOKEN_ATTR_UNKNOWN)))
            continue;
        std::string s = llama_vocab_get_text(vocab, t);
        if (s.size() < 2) continue;  // a one-byte token cannot cross a cut
        longest_special_ = std::max(longest_special_, s.size());
        specials_.push_back(std::move(s));
    }
}

std::vector<token_id> token_memo::whole(std::string_view text, bool add_bos) const {
    return common_tokenize(vocab_, std::string(text), add_bos, /*parse_special=*/true);
}

// True when some special token's text in `text` starts before `at` and ends after it.
bool token_memo::crossed(std::string_view text, size_t at) const {
    for (const auto &s : specials_) {
        const size_t len = s.size();
        const size_t lo  = at >= len - 1 ? at - (len - 1) : 0;
        for (size_t p = lo; p < at; ++p) {
            if (p + len > text.size()) break;
            if (p + len > at && text.compare(p, len, s) == 0) return true;
        }
    }
    return false;
}

// The entry for `text` and its tokens, whose first `from` tokens (spelling text[0, from_off))
// come from an entry with cut points `cuts`: where each special token ends. No cut points
// when the tokens' pieces do not spell the text (the memo then never uses the entry).
token_memo::entry token_memo::remember(std::string_view text, bool add_bos,
                                       std::vector<token_id> tokens, cut_list cuts, size_t from,
                                       size_t from_off) const {
    entry e;
    e.text     = std::string(text);
    e.bos      = add_bos;
    e.cuts     = std::move(cuts);
    size_t off = from_off, i = from;
    if (i == 0 && add_bos && llama_vocab_get_add_bos(vocab_) && !tokens.empty() &&
        tokens[0] == llama_vocab_bos(vocab_)) {
        i = 1;
        e.cuts.emplace_back(0, 1);
    }
    char buf[256];
    for (; i < tokens.size(); ++i) {
        const int32_t n = llama_token_to_piece(vocab_, tokens[i], buf, sizeof buf, 0, true);
        if (n < 0 || off + static_cast<size_t>(n) > text.size() ||
            text.compare(off, static_cast<size_t>(n), std::string_view(buf, n)) != 0) {
            e.cuts.clear();
            break;
        }
        off += static_cast<size_t>(n);
        const auto attr = llama_vocab_get_attr(vocab_, tokens[i]);
        if ((attr & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_USER_DEFINED)) &&
            !(attr & LLAMA_TOKEN_ATTR_RSTRIP))
            e.cuts.emplace_back(off, i + 1);
    }
    if (off != text.size()) e.cuts.clear();
    e.tokens = std::move(tokens);
    return e;
}

std::vector<token_id> token_memo::tokenize(std::string_view text, bool add_bos) {
    if (!usable_ || text.size() < k_min_text) return whole(text, add_bos);
    std::vector<token_id> out;
    cut_list cuts;  // the source entry's cut points up to the one used
    size_t cut_text = 0;
    {
        std::lock_guard lk(mu_);
        // The remembered text that agrees longest with this one, and its last cut point
        // inside the agreement that no special token crosses here.
        for (auto &e : entries_) {
            if (e.bos != add_bos || e.cuts.empty()) continue;
            const size_t n = std::min(e.text.size(), text.size());
            const auto end = e.text.begin() + static_cast<std::ptrdiff_t>(n);
            const auto lcp = static_cast<size_t>(
                std::mismatch(e.text.begin(), end, text.begin()).first - e.text.begin());
            auto it = std::upper_bound(e.cuts.begin(), e.cuts.end(), std::make_pair(lcp, SIZE_MAX));
            while (it != e.cuts.begin()) {
                --it;
                if (it->second <= out.size()) break;
                if (it->first == 0 || !crossed(text, it->first)) {
                    cut_text = it->first;
                    out.assign(e.tokens.begin(),
                               e.tokens.begin() + static_cast<std::ptrdiff_t>(it->second));
                    cuts.assign(e.cuts.begin(), it + 1);
                    e.used = ++clock_;
                    break;
                }
            }
        }
        reused_ += out.size();
    }
    const size_t reused = out.size();
    if (reused == 0) {
        out = whole(text, add_bos);
    } else {
        auto rest = common_tokenize(vocab_, std::string(text.substr(cut_text)), false, true);
        out.insert(out.end(), rest.begin(), rest.end());
    }
    entry e = remember(text, add_bos, out, std::move(cuts), reused, cut_text);
    std::lock_guard lk(mu_);
    e.used = ++clock_;
    if (entries_.size() < k_entries) {
        entries_.push_back(std::move(e));
    } else {
        auto oldest =
            std::min_element(entries_.begin(), entries_.end(),
                             [](const entry &a, const entry &b) { return a.used < b.used; });
        *oldest = std::move(e);
    }
    return out;
}

uint64_t token_memo::reused_tokens() const {
    std::lock_guard lk(mu_);
    return reused_;
}

}  // namespace sf
