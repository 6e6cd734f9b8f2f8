// The refusal of a media part (an image, audio or a file) in a request, the same in every API:
// the parsers (api/<dialect>/*_request) refuse the part where they find it, before they know
// which model answers; the generation handler, once it does, says why in terms of that model:
// it is text-only (no projector: serve --mmproj FILE), or its projector reads the medium but
// the server does not carry media to it yet (issue #42; docs/ARCHITECTURE.md, "Images").
// Pure functions; any thread.
#pragma once

#include <string>
#include <string_view>

#include "api/common/api_error.h"
#include "core/worker_report.h"

namespace sf {

/**
 * 400 invalid_request_error, code "unsupported_content", naming `param` (where the part is, e.g.
 * "messages[0].content"): the part of type `type` ("image_url", "input_image", "image",
 * "images", "input_audio", "document", "file", ...) cannot be read. Its message stands alone
 * (the model has no vision support); `media` is set to the medium ("image", "audio", "file")
 * for explain_media_refusal.
 */
api_error media_refusal(const std::string &type, const std::string &param);

/**
 * Rewrites a media_refusal `err` (others are left alone) to name the served `model` and why it
 * cannot read the part: `info` null (the worker has not reported yet) or a model without a
 * projector for the medium: text-only, serve --mmproj FILE; a model whose projector reads it:
 * this server does not pass media to the model yet. Status, type, param and code stay.
 */
void explain_media_refusal(api_error &err, const std::string &model, const model_description *info);

/**
 * Checks an inline image before any refusal for the model's sake, so corrupt, oversize or
 * non-image data is named as such: `data` is a data URL (`data_url`; anything not starting with
 * "data:", an http(s) URL, passes unchecked) or bare base64. True when it decodes to an image of
 * at most k_max_image_bytes (api/common/image_data.h); else false with `err`: 400, code
 * "image_too_large" or "invalid_image", the message naming `where` (the field, e.g.
 * "messages[0].content[1].image_url.url"), `param` as media_refusal's.
 */
bool check_inline_image(std::string_view data, bool data_url, const std::string &where,
                        const std::string &param, api_error &err);

}  // namespace sf
