#include "api/common/generation_dialect.h"

namespace sf {

api_error generation_dialect::failed(const session_event &fin, bool shutting_down) const {
    return api_error{shutting_down ? 503 : 500, "server_error",
                     fin.error.empty() ? "generation failed" : fin.error, "", ""};
}

}  // namespace sf
