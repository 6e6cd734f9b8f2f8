// libFuzzer target: the `serve --config` file (api/common/priority.h parse_priority_config): any
// bytes give the rules or an error line naming the file, never an exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/common/priority.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    sf::priority_config cfg;
    const std::string err = sf::parse_priority_config(text, "config.json", cfg);
    if (err.empty()) {
        for (const auto &r : cfg.rules)
            sf::fuzz::require(!r.key_contains.empty() || !r.user_agent_contains.empty(),
                              "an accepted rule matches on something");
    } else {
        sf::fuzz::require(err.rfind("config.json", 0) == 0, "the error names the file");
    }
    return 0;
}
