// A model named by its Hugging Face repository: `org/repo[:TAG][@rev]` (issue #8). The tag picks
// a quantization among the repository's GGUF files (quant_selector.h); the revision pins a
// branch, tag or commit (default "main").
#pragma once

#include <optional>
#include <string>

namespace sf::models {

/** The model `serve` uses when given none: small, instruction-tuned, ~400 MB at Q4_K_M, runs on
 *  any CPU. */
inline constexpr const char *kDefaultModel = "unsloth/Qwen3-0.6B-GGUF:Q4_K_M";

struct model_ref {
    std::string repo;      // "org/repo"
    std::string tag;       // quantization, e.g. "Q4_K_M"; "" = the default order
    std::string revision;  // branch, tag or 40-hex commit; "" = "main"

    /** The revision asked for: `revision` or "main". */
    std::string rev() const { return revision.empty() ? "main" : revision; }
    /** "org/repo[:TAG][@rev]" as it would be typed (the tag as given). */
    std::string display() const;
};

/**
 * Parses "org/repo[:TAG][@rev]". Repository parts may hold letters, digits, '-', '_', '.';
 * returns nullopt for anything else (a file path, "repo" without org, empty parts).
 */
std::optional<model_ref> parse_model_ref(const std::string &text);

/** True when `text` names a local file or directory rather than a hub repository: it exists,
 *  starts with '/', './', '../' or '~', or ends with ".gguf". */
bool is_local_model_path(const std::string &text);

}  // namespace sf::models
