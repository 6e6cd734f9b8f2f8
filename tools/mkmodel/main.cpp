// mkmodel: writes a tiny GGUF model with random weights (see mkmodel.h), and with --mmproj a
// tiny vision projector for it (mmproj.h).
//
//   mkmodel --preset tiny|bench|qwen3-0.6b|qwen3-32b [--quant q4_k_m|q8_0] [--arch
//   qwen3|llama|lfm2|glm4moe]
//           [--tokenizer qwen3|qwen2.5] [--seed N] [--eog-scale F] [--nonempty-answers]
//           [--out PATH]
//           [--mmproj PATH]    (at least one of --out and --mmproj)
//
// Exit status: 0 written, 1 writing failed, 2 bad arguments.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "mkmodel.h"
#include "mmproj.h"

int main(int argc, char **argv) {
    sf::mkmodel::options opt;
    std::string out;
    std::string mmproj;

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
    app.add_flag("--nonempty-answers", opt.nonempty_answers,
                 "qwen3: an answer never ends at its first token (an untied output layer; "
                 "mkmodel.h says how)");
    app.add_option("--context-length", opt.context_length,
                   "trained context length in tokens (0: the preset's; tiny and bench 32768)")
        ->capture_default_str();
    app.add_option("--out", out, "output .gguf path of the model (written atomically)");
    app.add_option("--mmproj", mmproj,
                   "also (or only) write a tiny vision projector for the preset's model to this "
                   "path: LLaVA-style (clip projector type mlp), " +
                       std::to_string(sf::mkmodel::k_projector_image_size) + " px images, " +
                       std::to_string(sf::mkmodel::projector_image_tokens()) +
                       " embeddings per image, weights from --seed");

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

    if (out.empty() && mmproj.empty()) {
        std::fprintf(stderr, "mkmodel: give --out, --mmproj or both\n");
        return 2;
    }
    const std::string err_model = out.empty() ? "" : sf::mkmodel::write_model(opt, out);
    const std::string err       = !err_model.empty() || mmproj.empty()
                                      ? err_model
                                      : sf::mkmodel::write_projector(opt, mmproj);
    if (!err.empty()) {
        std::fprintf(stderr, "mkmodel: %s\n", err.c_str());
        return 1;
    }
    for (const std::string &path : {out, mmproj})
        if (!path.empty()) std::printf("%s\n", path.c_str());
    return 0;
}
