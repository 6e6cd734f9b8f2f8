#include "api/ollama/ollama_template.h"

#include <cctype>
#include <vector>

namespace sf {

namespace {

void trim_right(std::string &s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
}

std::string strip(const std::string &s) {
    size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    return s.substr(a, b - a);
}

}  // namespace

bool render_ollama_template(const std::string &tmpl, const std::string &system,
                            const std::string &prompt, std::string &out, std::string &error,
                            size_t max_out) {
    // Appends `piece` unless the output would pass max_out.
    auto emit = [&](const std::string &piece) {
        if (piece.size() > max_out - out.size()) {
            error = "the rendered template would be larger than " + std::to_string(max_out) +
                    " bytes (each {{ .Prompt }} and {{ .System }} inserts a copy of the value)";
            return false;
        }
        out += piece;
        return true;
    };
    // The value a name stands for (not copied), or null.
    auto value = [&](const std::string &name) -> const std::string * {
        if (name == ".System") return &system;
        if (name == ".Prompt") return &prompt;
        return nullptr;
    };
    // Each open `if` records whether its current branch is being emitted.
    struct frame {
        bool parent_on, cond, in_else;
    };
    std::vector<frame> stack;
    bool on        = true;
    bool trim_next = false;
    size_t pos     = 0;
    out.clear();
    while (pos <= tmpl.size()) {
        size_t open = tmpl.find("{{", pos);
        std::string text =
            tmpl.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
        if (trim_next) {
            size_t k = 0;
            while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
            text.erase(0, k);
            trim_next = false;
        }
        if (open == std::string::npos) {
            if (on && !emit(text)) return false;
            break;
        }
        size_t close = tmpl.find("}}", open + 2);
        if (close == std::string::npos) {
            error = "unterminated '{{' in template";
            return false;
        }
        std::string action = tmpl.substr(open + 2, close - open - 2);
        bool trim_before   = !action.empty() && action.front() == '-';
        if (trim_before) action.erase(0, 1);
        if (!action.empty() && action.back() == '-') {
            action.pop_back();
            trim_next = true;
        }
        if (trim_before) trim_right(text);
        if (on && !emit(text)) return false;
        pos    = close + 2;
        action = strip(action);
        if (action == ".Response") {
            if (on) return true;  // the model writes the response from here
        } else if (const std::string *v = value(action)) {
            if (on && !emit(*v)) return false;
        } else if (action.rfind("if ", 0) == 0) {
            std::string name     = strip(action.substr(3));
            const std::string *c = name == ".Response" ? nullptr : value(name);
            if (name != ".Response" && !c) {
                error = "unsupported template condition '" + name + "'";
                return false;
            }
            const bool cond = c && !c->empty();
            stack.push_back({on, cond, false});
            on = on && cond;
        } else if (action == "else") {
            if (stack.empty() || stack.back().in_else) {
                error = "'else' without 'if' in template";
                return false;
            }
            stack.back().in_else = true;
            on                   = stack.back().parent_on && !stack.back().cond;
        } else if (action == "end") {
            if (stack.empty()) {
                error = "'end' without 'if' in template";
                return false;
            }
            on = stack.back().parent_on;
            stack.pop_back();
        } else {
            error = "unsupported template action '{{ " + action +
                    " }}' (supported: .System, .Prompt, .Response, if/else/end)";
            return false;
        }
    }
    return true;
}

}  // namespace sf
