// Typed reads of optional request fields for the Ollama, embeddings and Responses parsers:
// absent or null leaves `out` as is; a present field of the wrong type or out of range is a
// 400 naming its path (e.g. "options.top_k"). JSON stays in api/.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "api/common/api_error.h"

namespace sf::fields {

using json = nlohmann::json;

/**
 * `j` as compact JSON text (no spaces), invalid UTF-8 in its strings replaced by U+FFFD instead
 * of thrown: every response body and SSE data line the API edge writes.
 */
std::string dump_json(const json &j);

/**
 * The deepest nesting of objects and arrays a request body may have: the top-level object is
 * level 1. Real requests nest about 10 deep (a JSON schema inside a tool inside the tools
 * array); 64 is the common cap (Go's encoding/json and serde_json use 10,000 and 128).
 */
inline constexpr int max_body_depth = 64;

/**
 * Parses `body` as a JSON object: 400 "invalid_json" when it is not JSON, not an object, or
 * nests deeper than max_body_depth (checked while parsing; nothing deeper is ever built). Every
 * route that reads a client's JSON body parses it here.
 */
bool parse_object(const std::string &body, json &out, api_error &err);

/** True when `key` is missing or null. */
bool absent(const json &obj, const char *key);

/**
 * The string at `key` of `obj`, or `dflt` when `obj` is not an object or the key is missing or
 * holds another type. Never throws (json::value() throws type_error on a present key of another
 * type, which a client's body must never cause: fuzz_anthropic_request found one).
 */
std::string text_or(const json &obj, const char *key, const std::string &dflt = "");
/** The boolean at `key` of `obj`, or `dflt` as text_or() does. Never throws. */
bool flag_or(const json &obj, const char *key, bool dflt);

/** A number within [lo, hi]. `path` prefixes the key in messages ("options." …). */
bool number(const json &obj, const char *key, double lo, double hi, float &out, api_error &err,
            const std::string &path = "");
/** An integer within [lo, hi] (a float with no fraction is taken); `present` says if it was set. */
bool integer(const json &obj, const char *key, int64_t lo, int64_t hi, int64_t &out, bool &present,
             api_error &err, const std::string &path = "");
bool boolean(const json &obj, const char *key, bool &out, api_error &err,
             const std::string &path = "");
bool string(const json &obj, const char *key, std::string &out, api_error &err,
            const std::string &path = "");

/** Longest `cache_salt` taken (vLLM suggests 43 base64 characters: 256 random bits). */
inline constexpr size_t max_cache_salt_bytes = 1024;
/**
 * `cache_salt` (vLLM's request field; issue #38): absent or null leaves `out` empty; otherwise
 * a non-empty string of at most max_cache_salt_bytes. Requests share cached prefixes only with
 * requests of the same salt (core/generate_request.h cache_scope). Else a 400 naming it.
 */
bool cache_salt(const json &obj, std::string &out, api_error &err);

/** A string or an array of strings, appended to `out`. */
bool strings(const json &obj, const char *key, std::vector<std::string> &out, api_error &err,
             const std::string &path = "");

/**
 * A JSON schema the output grammar can enforce (api/common/json_schema_check.h; `strict` for output
 * formats, not for tool parameters) and no larger than k_max_schema_bytes (schema_size_ok).
 * Otherwise a 400 naming the keyword and `param`.
 */
bool enforceable_schema(const json &schema, bool strict, const std::string &param, api_error &err);

/**
 * A schema of at most k_max_schema_bytes serialized (api/common/json_schema_check.h): the worker
 * turns it into a grammar for this request, at a cost that grows with its size. Otherwise a 400
 * naming `param` and the bound.
 */
bool schema_size_ok(const json &schema, const std::string &param, api_error &err);

}  // namespace sf::fields
