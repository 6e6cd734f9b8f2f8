// What every API route needs from the server: the session manager, the served model's names,
// the body limit, the priority rules and who may use which session. Built once by http_server,
// copied into each route's handlers, read-only after that (any request thread).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/common/priority.h"
#include "http/session_access.h"
#include "session/session_manager.h"

namespace sf {

/** A model this server serves (issue #40): what requests name it by, and its file. */
struct served_model {
    std::string id;            // what answers carry and /v1/models lists
    std::string path;          // its GGUF file
    std::string general_name;  // GGUF general.name ("" when absent)
};

/** What the API routes need from the server (every dialect's, the model and session routes). */
struct route_context {
    session_manager *sessions = nullptr;
    // The id of the served model `name` designates ("" when none does; http_server.h).
    std::function<std::string(const std::string &)> model_of;
    std::string model_id;               // the default model's: it answers other names
    std::vector<served_model> models;   // every served model, the default included
    size_t max_body_bytes = 32u << 20;  // larger bodies: 413
    priority_config priority;           // classes from headers/keys/rules

    // Model names (http/model_names.h): the store's pulled models, strict names.
    std::string state_dir;            // the model store's index ("" = none)
    bool strict_model_names = false;  // unknown names: 404, not the served model
    std::string identity_secret;      // keys client ids (api/common/client_identity.h)
    // Who may see and use which session (http/session_access.h). Keys in use (keyed()): every
    // caller of a listing holds one, so /api/ps and /api/show give the model's absolute path and
    // the worker's pid (without keys: the file name, no pid).
    std::shared_ptr<const session_access> access = std::make_shared<const session_access>();
};

}  // namespace sf
