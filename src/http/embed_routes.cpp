#include "http/embed_routes.h"

#include <cpp-httplib/httplib.h>

#include <chrono>

#include "api/embeddings/embed_request.h"
#include "api/embeddings/embed_response.h"
#include "api/ollama/ollama_response.h"
#include "api/openai/openai_error.h"
#include "http/error_reply.h"
#include "http/model_names.h"
#include "http/route_util.h"
#include "http/router.h"

namespace sf {

namespace {

enum class flavor { OPENAI, OLLAMA_EMBED, OLLAMA_LEGACY };

void send_error(httplib::Response &res, flavor f, const api_error &e) {
    sf::send_error(res, f == flavor::OPENAI ? api_dialect::OPENAI : api_dialect::OLLAMA, e);
}

void handle(const std::string &body, httplib::Response &res, const route_context &rc, flavor f) {
    const auto t0 = std::chrono::steady_clock::now();
    embed_job job;
    api_error err;
    bool ok = f == flavor::OPENAI         ? parse_openai_embeddings(body, job, err)
              : f == flavor::OLLAMA_EMBED ? parse_ollama_embed(body, job, err)
                                          : parse_ollama_embeddings(body, job, err);
    if (!ok) return send_error(res, f, err);
    std::string why;
    if (!resolve_model(rc, job.model, res, why, f != flavor::OPENAI)) {
        return send_error(res, f,
                          api_error{404, "invalid_request_error", why, "model", "model_not_found"});
    }
    const std::string model = job.model;

    std::vector<std::vector<float>> vectors;
    int32_t tokens = 0;
    if (!job.inputs.empty()) {
        embed_batch ej{job.inputs, job.truncate};
        std::vector<embedding> reply;
        start_error serr;
        if (!rc.sessions->embed(ej, reply, serr)) {
            api_error e = openai_refusal(serr);  // the status and message serve Ollama too
            if (e.param.empty()) e.param = "input";
            return send_error(res, f, e);
        }
        for (auto &e : reply) {
            vectors.push_back(std::move(e.values));
            tokens += e.tokens;
            if (f != flavor::OLLAMA_LEGACY) l2_normalize(vectors.back());
        }
    }
    if (job.dimensions > 0 && !vectors.empty() &&
        static_cast<size_t>(job.dimensions) != vectors[0].size()) {
        return send_error(res, f,
                          bad_request("'dimensions' must be " + std::to_string(vectors[0].size()) +
                                          " for this model (shortening is not supported)",
                                      "dimensions", "unsupported_value"));
    }
    const int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    res.set_content(f == flavor::OPENAI ? openai_embeddings_body(model, vectors, job.base64, tokens)
                    : f == flavor::OLLAMA_EMBED ? ollama_embed_body(model, vectors, ns, 0, tokens)
                                                : ollama_embeddings_body(vectors),
                    "application/json");
}

}  // namespace

void register_embed_routes(http_router &svr, route_context ctx) {
    auto rc = std::make_shared<const route_context>(std::move(ctx));
    const std::pair<const char *, flavor> routes[] = {{"/v1/embeddings", flavor::OPENAI},
                                                      {"/api/embed", flavor::OLLAMA_EMBED},
                                                      {"/api/embeddings", flavor::OLLAMA_LEGACY}};
    for (const auto &[path, f] : routes) {
        svr.Post(path, [rc, f = f](const httplib::Request &, httplib::Response &res,
                                   const httplib::ContentReader &reader) {
            std::string body;
            if (!read_body(reader, rc->max_body_bytes, body)) {
                return send_error(
                    res, f,
                    api_error{413, "invalid_request_error", "the request body is too large", "",
                              "request_too_large"});
            }
            handle(body, res, *rc, f);
        });
    }
}

}  // namespace sf
