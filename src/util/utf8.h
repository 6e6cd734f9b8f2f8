// UTF-8 helpers for streaming text that arrives in arbitrary byte pieces (one token may
// carry part of a code point). RFC 3629 encoding rules.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sf::utf8 {

/**
 * Length in bytes of the longest prefix of `s` that does not end inside an incomplete
 * multi-byte sequence. Invalid bytes count as complete (they are replaced on output, not
 * held forever). At most 3 trailing bytes are ever held back.
 */
size_t complete_prefix(std::string_view s);

/** Copy of `s` with every invalid or incomplete sequence replaced by U+FFFD. */
std::string sanitize(std::string_view s);

}  // namespace sf::utf8
