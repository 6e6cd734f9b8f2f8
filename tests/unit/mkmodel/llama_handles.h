// What the mkmodel tests share: owning handles for llama.cpp's model and context, and reading a
// written file whole. Header only; each test's thread owns its handles.
#pragma once

#include <llama.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

namespace sf::test {

struct model_deleter {
    void operator()(llama_model *m) const { llama_model_free(m); }
};
struct context_deleter {
    void operator()(llama_context *c) const { llama_free(c); }
};
/** A loaded model, freed with llama_model_free. */
using model_ptr = std::unique_ptr<llama_model, model_deleter>;
/** A context, freed with llama_free. */
using context_ptr = std::unique_ptr<llama_context, context_deleter>;

/** The bytes of the file at `p` ("" when it cannot be read). */
inline std::string read_file(const std::filesystem::path &p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace sf::test
