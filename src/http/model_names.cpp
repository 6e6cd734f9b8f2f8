#include "http/model_names.h"

#include <cpp-httplib/httplib.h>

#include <optional>

#include "http/route_util.h"
#include "models/model_store.h"
#include "util/log.h"

namespace sf {

namespace {

// One log line per substituted name.
void log_substitution(const std::string &asked, const std::string &served) {
    if (!log::first_sighting("model:" + asked)) return;
    SF_LOG_INFO("http",
                "model '%s' is not served here: answering with '%s' "
                "(superfluid serve --strict-model-names refuses such requests)",
                asked.c_str(), served.c_str());
}

// The pulled model `name` designates, if any (the served one may be among them).
std::optional<models::model_entry> pulled(const route_context &rc, const std::string &name) {
    if (rc.state_dir.empty()) return std::nullopt;
    models::store_options so;
    so.state_dir = rc.state_dir;
    return models::model_store(so).find(name);
}

}  // namespace

std::string served_model_of(const route_context &rc, const std::string &name, bool ollama) {
    if (std::string id = rc.model_of(name); !id.empty()) return id;
    if (!ollama) return "";
    const auto colon = name.rfind(':');
    if (colon == std::string::npos || name.substr(colon + 1) != "latest") return "";
    return rc.model_of(name.substr(0, colon));
}

bool resolve_model(const route_context &rc, std::string &model, httplib::Response &res,
                   std::string &message, bool ollama) {
    if (model.empty()) {
        model = rc.model_id;
        return true;
    }
    if (const std::string id = served_model_of(rc, model, ollama); !id.empty()) {
        // The model's id; Ollama's "<id>:latest" as asked (its clients compare the names).
        if (model != id + ":latest") model = id;
        return true;
    }
    const auto entry            = pulled(rc, model);
    const std::string pulled_id = entry ? rc.model_of(entry->name) : "";
    if (entry && pulled_id.empty()) {
        message = (ollama ? "model '" : "the model '") + model +
                  "' is pulled but not served: " + "this server serves '" + rc.model_id +
                  "'. Serve it with `superfluid serve " + entry->name + "`";
        return false;
    }
    // A pulled entry named by another spelling (org/repo for org/repo:TAG) may be the served
    // model itself; any other name is substituted, or refused when names are strict.
    if (!entry) {
        if (rc.strict_model_names) {
            message = ollama ? "model '" + model + "' not found; this server serves '" +
                                   rc.model_id + "' (see /api/tags)"
                             : "the model '" + model + "' does not exist; this server serves '" +
                                   rc.model_id + "' (see GET /v1/models)";
            return false;
        }
        log_substitution(model, rc.model_id);
        res.set_header(k_model_substituted_header, model);
    }
    model = entry ? pulled_id : rc.model_id;
    return true;
}

}  // namespace sf
