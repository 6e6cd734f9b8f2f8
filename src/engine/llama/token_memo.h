// Tokenization that reuses the tokens of recent prompts (llama_engine::tokenize). A chat
// prompt mostly repeats an earlier one (the same system prompt and tools, the conversation so
// far), and tokenizing it again took about as long as prefilling the few new tokens of a
// prefix-cache hit: 5-7 ms for 20 KB on the 2-core test VM, a third of llama-server's whole
// time to first token there.
//
// Exactness: llama.cpp splits a text at special tokens (parse_special) and tokenizes each
// piece between them on its own, so the tokens up to the end of a special token depend only
// on the text up to there. A new text that agrees with a remembered one up to such a point
// takes the remembered tokens up to it and tokenizes only the rest. Used for BPE vocabularies
// that add no EOS, and only where no special token's text crosses the cut point in the new
// text (it could be split there differently); anything else is tokenized whole.
//
// Thread-safe (one mutex; request threads render and tokenize concurrently).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"

struct llama_vocab;

namespace sf {

class token_memo {
  public:
    /** `vocab` must outlive the memo. */
    explicit token_memo(const llama_vocab *vocab);

    /** The tokens of `text` (parse_special), with BOS when `add_bos` and the vocab wants it. */
    std::vector<token_id> tokenize(std::string_view text, bool add_bos);

    /** Tokens taken from remembered texts instead of tokenized, since start (tests). */
    uint64_t reused_tokens() const;

  private:
    // (end offset in the text of a special token, tokens up to and including it)
    using cut_list = std::vector<std::pair<size_t, size_t>>;
    struct entry {
        std::string text;
        std::vector<token_id> tokens;
        bool bos = false;
        cut_list cuts;
        uint64_t used = 0;
    };
    std::vector<token_id> whole(std::string_view text, bool add_bos) const;
    entry remember(std::string_view text, bool add_bos, std::vector<token_id> tokens, cut_list cuts,
                   size_t from, size_t from_off) const;
    bool crossed(std::string_view text, size_t at) const;

    const llama_vocab *vocab_;
    bool usable_ = false;                // BPE, no EOS added
    std::vector<std::string> specials_;  // texts of special (control/user-defined) tokens
    size_t longest_special_ = 0;
    mutable std::mutex mu_;
    std::vector<entry> entries_;  // the most recent few prompts
    uint64_t clock_  = 0;
    uint64_t reused_ = 0;
};

}  // namespace sf
