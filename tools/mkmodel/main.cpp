// mkmodel: writes a tiny GGUF model with random weights (see mkmodel.h).
//
//   mkmodel --preset tiny|bench|qwen3-0.6b|qwen3-32b [--quant q4_k_m|q8_0] [--arch
//   qwen3|llama|lfm2|glm4moe]
//           [--tokenizer qwen3|qwen2.5] [--seed N] [--eog-scale F] --out PATH
//
// Exit status: 0 written, 1 writing failed, 2 bad arguments.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "mkmodel.h"

int main(int argc, char **argv) {
    sf::mkmodel::options opt;
    std::string out;

    CLI::App app{"Writes a tiny GGUF model (Qwen3 tokenizer and chat template, random weights)."};
    app.add_option("--preset", opt.preset, "model shape")
        ->check(CLI::IsMember(sf::mkmodel::presets()))
        ->capture_default_str();
    app.add_option("--quant", opt.quant, "qwen3-0.6b, qwen3-32b: q4_k_m (default) or q8_0")
        ->check(CLI::IsMember(sf::mkmodel::quants()));
    app.add_option("--arch", opt.arch, "architecture")
        ->check(CLI::IsMember(sf::mkmodel::archs()))
        ->capture_default_str();
    app.add_option("--tokenizer", opt.tokenizer,
                   "vocabulary: qwen3, or qwen2.5 (Qwen2.5's special tokens: another tokenizer)")
        ->check(CLI::IsMember(sf::mkmodel::tokenizers()))
        ->capture_default_str();
    app.add_option("--seed", opt.seed, "weight generator seed (same seed, same file)")
        ->capture_default_str();
    app.add_option("--eog-scale", opt.eog_scale,
                   "scale of the <|im_end|> embedding row (1: turns almost never end; 64: most "
                   "end within a few dozen tokens)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--context-length", opt.context_length,
                   "trained context length in tokens (0: the preset's; tiny and bench 32768)")
        ->capture_default_str();
    app.add_option("--out", out, "output .gguf path (written atomically)")->required();

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        app.exit(e);  // prints the error and a hint to stderr
        return 2;
    }

    const std::string err = sf::mkmodel::write_model(opt, out);
    if (!err.empty()) {
        std::fprintf(stderr, "mkmodel: %s\n", err.c_str());
        return 1;
    }
    std::printf("%s\n", out.c_str());
    return 0;
}
