// The first stage of each sequence's sampler chain: it removes the candidates whose bytes would
// make the generated text ill-formed UTF-8 (Unicode 15, table 3-7: the well-formed byte
// sequences), given the bytes generated so far (a token may end inside a character; the next
// must complete it).
//
// Why: llama.cpp's grammar decodes UTF-8 leniently (llama-grammar.cpp decode_utf8: a byte
// F8–FF is read as a 4-byte lead, continuation bytes inside a token are not checked, overlong
// forms and surrogates pass), so a grammar-constrained string could hold one "character" that
// the text layer (util/utf8 sanitize) turns into several U+FFFD, or a quote byte that ends the
// JSON string early: a tool call's argument then broke its schema's maxLength (bench
// endurance, 1 call of 80). With this stage every released byte sequence is well-formed and
// the grammar's count of characters is the client's.
//
// Threads: a table is immutable once built and shared by every chain of an engine; a stage
// belongs to its sequence's sampler (the tick thread).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct llama_sampler;
struct llama_vocab;

namespace sf {

/** Each token's bytes and whether they may start at a character boundary. */
struct utf8_token_table {
    std::vector<std::string> bytes;        // by token id: the piece as the text layer receives it
    std::vector<uint8_t> ok_at_boundary;   // 1: well-formed from a boundary (may end inside one)
    std::vector<int32_t> bad_at_boundary;  // the ids whose ok_at_boundary is 0, ascending
};

/** Builds the table of `vocab` (one llama_token_to_piece per token; ~0.1 s for 152k tokens). */
std::shared_ptr<const utf8_token_table> utf8_token_table_build(const llama_vocab *vocab);

/** Puts the "sf-utf8" stage first in `chain` (a common_sampler's chain). */
void utf8_guard_install(llama_sampler *chain, std::shared_ptr<const utf8_token_table> table);

}  // namespace sf
