// Parses embedding requests into one native form: OpenAI POST /v1/embeddings (`input` as a
// string, strings, token ids or arrays of token ids; `encoding_format` float|base64), Ollama
// POST /api/embed (`input` string or strings, `truncate`, default true) and the legacy POST
// /api/embeddings (`prompt`). Answers are built by embed_response.h.
#pragma once

#include <string>
#include <vector>

#include "api/common/api_error.h"
#include "core/embed_input.h"

namespace sf {

struct embed_job {
    std::string model;
    std::vector<embed_input> inputs;  // may be empty for Ollama (a load request)
    bool truncate  = false;          // cut inputs longer than the context (Ollama's default)
    bool base64    = false;          // OpenAI encoding_format "base64"
    int dimensions = 0;              // requested vector size; 0 = the model's
};

/** OpenAI /v1/embeddings. 400 for an empty or malformed input. */
bool parse_openai_embeddings(const std::string &body, embed_job &out, api_error &err);
/** Ollama /api/embed. */
bool parse_ollama_embed(const std::string &body, embed_job &out, api_error &err);
/** Ollama's legacy /api/embeddings (`prompt`; an empty prompt embeds nothing). */
bool parse_ollama_embeddings(const std::string &body, embed_job &out, api_error &err);

}  // namespace sf
