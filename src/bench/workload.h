// Deterministic prompt text for the scenarios: seeded words, about one token each.
#pragma once

#include <cstdint>
#include <string>

namespace sf::bench {

/**
 * `n` words drawn from a list of common short English words, seeded: the same seed gives the
 * same text. Each word (with its leading space) is one token for Qwen/Llama BPE tokenizers, so
 * `n` words ≈ `n` tokens (approximate: the first word and rare merges may differ).
 */
std::string words(uint64_t seed, int n);

/** A document of about `tokens` tokens: a title line, then seeded words. */
std::string document(uint64_t seed, int tokens);

/** About `bytes` bytes of seeded words (for prompts sized in bytes). */
std::string text_of_bytes(uint64_t seed, int bytes);

}  // namespace sf::bench
