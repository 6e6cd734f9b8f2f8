// The priority classes: one numbering and one spelling for the whole program (issue #39). The
// scheduler plans the lower value first; the names are what the APIs, the CLI, /metrics and
// the journal's readers show. The worker protocol has its own enum (proto/worker.proto
// `Priority`, whose zero value is normal, proto3's default for an unset field);
// protocol/convert maps between the two. Plain data, any thread.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sf {

/** Priority class; lower value = more urgent (planned first). */
enum class priority_class : int { INTERACTIVE = 0, NORMAL = 1, BATCH = 2 };

/** How many classes there are. */
inline constexpr int k_classes = 3;

/** The classes' names, indexed by their value. */
inline constexpr std::array<const char *, k_classes> k_class_names = {"interactive", "normal",
                                                                      "batch"};

/** The classes' names as a list (for CLI11's IsMember check and help). */
inline std::vector<std::string> class_name_list() {
    return {k_class_names.begin(), k_class_names.end()};
}

/** The class's name ("interactive" | "normal" | "batch"). */
inline const char *class_name(priority_class c) {
    const int i = static_cast<int>(c);
    return i >= 0 && i < k_classes ? k_class_names[i] : "normal";
}

/** "interactive" | "normal" | "batch" → class; nullopt for anything else (case-sensitive). */
inline std::optional<priority_class> parse_class_name(std::string_view name) {
    for (int i = 0; i < k_classes; ++i)
        if (name == k_class_names[i]) return static_cast<priority_class>(i);
    return std::nullopt;
}

}  // namespace sf
