#include "cli/help_formatter.h"

#include <regex>
#include <sstream>
#include <vector>

namespace sf {

std::string help_value_label(const std::string &type) {
    std::vector<std::string> parts;
    std::stringstream in(type);
    for (std::string p; std::getline(in, p, ':');) parts.push_back(p);
    if (parts.empty()) return "";
    std::string label = parts[0], bound;
    static const std::regex range(R"(^\w+ in \[(.+) - (.+)\]$)");
    for (size_t i = 1; i < parts.size(); ++i) {
        const std::string &p = parts[i];
        std::smatch m;
        if (!p.empty() && p[0] == '{') {
            label = p;  // the choices say more than TEXT
        } else if (std::regex_match(p, m, range)) {
            bound = m[1].str() + "-" + m[2].str();
        } else if (p == "POSITIVE") {
            bound = ">0";
        } else if (p == "NONNEGATIVE") {
            bound = ">=0";
        } else if (std::regex_match(p, std::regex("^[A-Z]+$"))) {
            label = p;  // FILE, SIZE, DIR, …
        }
        // Anything else ("INT [UNIT]", "SIZE [b, kb(=1024b), ...]") is the parser's own.
    }
    return bound.empty() ? label : label + " (" + bound + ")";
}

std::string help_formatter::make_option_name(const CLI::Option *opt, bool is_positional) const {
    static const std::regex flag_default(R"(\{[^}]*\})");
    return std::regex_replace(CLI::Formatter::make_option_name(opt, is_positional), flag_default,
                              "");
}

std::string help_formatter::make_option_opts(const CLI::Option *opt) const {
    std::ostringstream out;
    if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
    if (opt->get_type_size() != 0) {
        const std::string label = help_value_label(opt->get_type_name());
        if (!label.empty()) out << " " << label;
        if (!opt->get_default_str().empty()) out << "=" << opt->get_default_str();
        if (opt->get_expected_max() == CLI::detail::expected_max_vector_size)
            out << " ...";
        else if (opt->get_expected_min() > 1)
            out << " x " << opt->get_expected();
        if (opt->get_required()) out << " " << get_label("REQUIRED");
    }
    if (!opt->get_envname().empty())
        out << " (" << get_label("Env") << ":" << opt->get_envname() << ")";
    for (const auto &[what, list] :
         {std::pair{"Needs", opt->get_needs()}, std::pair{"Excludes", opt->get_excludes()}}) {
        if (list.empty()) continue;
        out << " " << get_label(what) << ":";
        for (const CLI::Option *o : list) out << " " << o->get_name();
    }
    return out.str();
}

}  // namespace sf
