#include "launch/context_fit.h"

#include <algorithm>

namespace sf::launch {

std::string with_commas(long long n) {
    std::string digits = std::to_string(n < 0 ? -n : n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return n < 0 ? "-" + out : out;
}

namespace {

// "claude's first request needs about 19,000 (at least 32,768 to work)"; the first request's
// size is left out where it was not measured (Hermes Agent).
std::string need_phrase(const agent_def &a) {
    std::string s = std::string(a.name) + "'s first request needs ";
    if (a.first_request > 0)
        s += "about " + with_commas(a.first_request) + " (at least " + with_commas(a.min_context) +
             " to work)";
    else
        s += "at least " + with_commas(a.min_context) + " tokens of context to work";
    return s;
}

// `superfluid serve` with the address flags a server on host:port needs, and --ctx-size n.
std::string serve_command(const std::string &host, int port, int n) {
    std::string cmd = "superfluid serve";
    if (host != "127.0.0.1" && host != "localhost") cmd += " --host " + host;
    if (port != 8453) cmd += " --port " + std::to_string(port);
    return cmd + " --ctx-size " + std::to_string(n);
}

}  // namespace

context_verdict judge_context(const agent_def &a, const server_probe &server,
                              const std::string &host, int port, bool started_here) {
    context_verdict v;
    const int have = server.context_length;
    if (a.min_context <= 0 || have >= a.min_context) return v;
    if (have <= 0) {
        v.fit = context_fit::unknown;
        return v;
    }
    const std::string where = host + ":" + std::to_string(port);
    const int trained       = server.trained_context;
    // What a restart could give: the minimum, or all the model was trained for when less.
    const int could = trained > 0 ? std::min(a.min_context, trained) : a.min_context;
    if (!started_here && could > have && (a.first_request <= 0 || could > a.first_request)) {
        v.fit     = context_fit::too_small;
        v.message = "the server on " + where + " gives each request " + with_commas(have) +
                    " tokens of context; " + need_phrase(a) + ": restart it with `" +
                    serve_command(host, port, could) + "`";
        if (could < a.min_context)
            v.message += " (all its model " + server.model_id + " was trained for)";
        return v;
    }
    // The model itself is shorter than the agent's minimum.
    std::string model = "the model " + server.model_id + " on " + where + " gives each request " +
                        with_commas(have) + " tokens of context";
    if (trained > 0)
        model += have >= trained ? " (all it was trained for)"
                                 : " (it was trained for " + with_commas(trained) + ")";
    if (a.first_request > 0 && have > a.first_request) {
        v.fit     = context_fit::tight;
        v.message = model + ": " + a.name + "'s first request (about " +
                    with_commas(a.first_request) + ") fits, but it works with at least " +
                    with_commas(a.min_context) + ", so a long session may run out";
        return v;
    }
    v.fit     = context_fit::too_small;
    v.message = model + "; " + need_phrase(a) +
                ": serve a model with a longer context (`superfluid launch " + a.name +
                " --model MODEL` starts one when no server runs)";
    return v;
}

}  // namespace sf::launch
