#include "api/common/media_refusal.h"

#include "api/common/image_data.h"

namespace sf {

namespace {

// The medium of a part type, as the four APIs name their parts.
std::string medium_of(const std::string &type) {
    if (type == "input_audio") return "audio";
    if (type == "file" || type == "input_file" || type == "document") return "file";
    return "image";  // image_url, input_image, image, images
}

std::string what(const std::string &type) {
    return type == "images" ? "images" : "content part type '" + type + "'";
}

}  // namespace

api_error media_refusal(const std::string &type, const std::string &param) {
    api_error err = bad_request(what(type) +
                                    " is not supported: the model has no vision support (it is "
                                    "text-only)",
                                param, "unsupported_content");
    err.media     = medium_of(type) + "\n" + what(type);
    return err;
}

void explain_media_refusal(api_error &err, const std::string &model,
                           const model_description *info) {
    const size_t nl = err.media.find('\n');
    if (nl == std::string::npos) return;
    const std::string medium = err.media.substr(0, nl), part = err.media.substr(nl + 1);
    const bool reads =
        info && ((medium == "image" && info->vision) || (medium == "audio" && info->audio));
    if (reads) {
        err.message = part + " is not supported yet: model '" + model + "' reads " + medium +
                      "s through its projector, but this server does not pass them to it yet";
    } else if (medium == "file") {
        err.message = part + " is not supported: model '" + model +
                      "' reads text only, and this server does not turn files into text";
    } else {
        err.message = part + " is not supported: model '" + model + "' has no " +
                      (medium == "image" ? "vision" : "audio") +
                      " support (it was served without a projector for it: serve --mmproj "
                      "FILE gives it one)";
    }
}

bool check_inline_image(std::string_view data, bool data_url, const std::string &where,
                        const std::string &param, api_error &err) {
    if (data_url && data.substr(0, 5) != "data:") return true;
    image_data img;
    const image_error e = data_url ? decode_image_data_url(data, k_max_image_bytes, img)
                                   : decode_image_base64(data, k_max_image_bytes, img);
    if (e == image_error::NONE) return true;
    err = bad_request(where + ": " + image_error_text(e, k_max_image_bytes), param,
                      e == image_error::TOO_LARGE ? "image_too_large" : "invalid_image");
    return false;
}

}  // namespace sf
