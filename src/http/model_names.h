// Which model answers a request that names one, for every API (issues #19, #40). A server serves
// one model or several (`serve A B C`), and clients hard-code names (`gpt-4o-mini`,
// `claude-sonnet-4-5`, `llama3`), so:
//   - a name that designates a served model (its id, file name or stem, path, GGUF
//     general.name; "default" or none: the default model; for Ollama also "<name>:latest") is
//     answered by that model, and the answer carries its id ("<id>:latest" when so asked);
//   - a name of a model pulled into the store but not served is a 404 whose message says how
//     to serve it (`superfluid serve <name>`): the client asked for a model this machine has,
//     and answering with another one would hide that;
//   - any other name is answered by the served model: the answer names the served model and
//     the response header X-Superfluid-Model-Substituted carries the name asked for (logged
//     once per name) — unless `superfluid serve --strict-model-names`, where it is a 404.
// Model lists (/v1/models, /api/tags) stay truthful: they never list substituted names.
#pragma once

#include <string>

#include "http/route_context.h"

namespace httplib {
struct Response;
}

namespace sf {

/** The response header that names the model a request asked for when another one answered. */
inline constexpr const char *k_model_substituted_header = "X-Superfluid-Model-Substituted";

/** The id of the served model `name` designates ("" when none); `ollama`: "<name>:latest" too. */
std::string served_model_of(const route_context &rc, const std::string &name, bool ollama);

/**
 * Resolves the request's `model` in place. True: a served model answers, and `model` is the
 * name the answer carries and the placement follows (placement/model_set.h): that model's id
 * (or "<id>:latest" as an Ollama client asked), the default model's when the request named
 * none or another one (then `res` gets the X-Superfluid-Model-Substituted header). False: answer
 * 404 in the API's own shape with `message` (a pulled model that is not served, or any unknown name
 * under
 * --strict-model-names). `ollama`: Ollama's naming and wording.
 */
bool resolve_model(const route_context &rc, std::string &model, httplib::Response &res,
                   std::string &message, bool ollama = false);

}  // namespace sf
