#include "cli/ps_command.h"

#include <cpp-httplib/httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

#include "util/secret_source.h"

namespace sf {

int run_ps(const std::string &host, int port) {
    httplib::Client cli(host, port);
    cli.set_connection_timeout(2);
    cli.set_read_timeout(5);
    // A server with keys answers only a key holder: SUPERFLUID_ADMIN_KEY (every session's id),
    // else SUPERFLUID_API_KEY (the ids of this key's sessions).
    httplib::Headers headers;
    for (const char *env : {"SUPERFLUID_ADMIN_KEY", "SUPERFLUID_API_KEY"}) {
        if (const auto keys = secrets_from_env(env); !keys.empty()) {
            headers.emplace("Authorization", "Bearer " + keys.front());
            break;
        }
    }
    auto res = cli.Get("/api/ps", headers);
    if (!res || res->status != 200) {
        fprintf(stderr, "no superfluid server answers on %s:%d (%s)\n", host.c_str(), port,
                res ? ("HTTP " + std::to_string(res->status)).c_str()
                    : httplib::to_string(res.error()).c_str());
        return 1;
    }
    auto j = nlohmann::json::parse(res->body, nullptr, false);
    if (j.is_discarded()) {
        fprintf(stderr, "unexpected answer from /api/ps\n");
        return 1;
    }
    printf("%-28s %-8s %-6s %-9s %s\n", "MODEL", "CONTEXT", "SLOTS", "WORKER", "PATH");
    for (const auto &m : j.value("models", nlohmann::json::array())) {
        const auto &w = m.value("worker", nlohmann::json::object());
        // The pid only when the server has --api-key (without, /api/ps does not give it).
        std::string worker = !w.value("ready", false) ? "starting"
                             : w.contains("pid")      ? std::to_string(w.value("pid", 0))
                                                      : "ready";
        printf("%-28s %-8d %-6d %-9s %s\n", m.value("name", "").c_str(),
               m.value("context_length", 0), m.value("parallel", 0), worker.c_str(),
               m.value("path", "").c_str());
        // Speculative decoding, once the worker has verified drafts (--spec-type).
        const auto sp        = m.value("speculation", nlohmann::json::object());
        const double drafted = sp.value("drafted_tokens", 0.0);
        if (drafted > 0) {
            const double accepted = sp.value("accepted_tokens", 0.0);
            printf("  speculation: %.0f draft tokens, %.0f accepted (%.1f%%)\n", drafted, accepted,
                   100.0 * accepted / drafted);
        }
    }
    const auto &sessions = j.value("sessions", nlohmann::json::array());
    // A cluster head says which node runs each session (issue #17): a NODE column then.
    const bool cluster = std::any_of(sessions.begin(), sessions.end(),
                                     [](const auto &s) { return s.contains("node"); });
    printf("\n%-26s %-12s %-11s %8s %10s %8s%s\n", "SESSION", "PRIORITY", "STATE", "PROMPT",
           "GENERATED", "AGE", cluster ? "  NODE" : "");
    for (const auto &s : sessions) {
        // The id only of a session this caller may use; else the reference that grants nothing.
        const std::string id = s.value("id", "ref_" + s.value("ref", std::string()));
        printf("%-26s %-12s %-11s %8d %10d %7.1fs%s%s\n", id.c_str(),
               s.value("priority", "").c_str(), s.value("state", "").c_str(),
               s.value("prompt_tokens", 0), s.value("generated_tokens", 0), s.value("age_s", 0.0),
               cluster ? "  " : "", cluster ? s.value("node", "-").c_str() : "");
    }
    if (sessions.empty()) printf("(no running sessions)\n");
    return 0;
}

}  // namespace sf
