// The `--help` text of every subcommand: CLI11's layout, without the parser's own notation
// (`INT:INT in [1 - 65535]`, `INT:INT [UNIT]`, a flag's `{false}`): an option shows one
// value label, its allowed range or choices, and its default.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace sf {

class help_formatter : public CLI::Formatter {
  public:
    /** The option's names without a flag's default value (`--no-local-worker`). */
    std::string make_option_name(const CLI::Option *opt, bool is_positional) const override;
    /** ` LABEL=DEFAULT`, e.g. ` INT (1-65535)=8453`, ` {on,off}=on`, ` SIZE=256MiB`. */
    std::string make_option_opts(const CLI::Option *opt) const override;
};

/**
 * The value label for CLI11's type name `type` ("INT:INT in [1 - 65535]" → "INT (1-65535)",
 * "TEXT:{on,off}" → "{on,off}", "TEXT:FILE" → "FILE", "DURATION:INT [UNIT]" → "DURATION").
 */
std::string help_value_label(const std::string &type);

}  // namespace sf
