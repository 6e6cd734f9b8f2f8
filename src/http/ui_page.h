// The web page served at /ui: src/http/ui/index.html, embedded at build time by
// cmake/embed_file.cmake (the generated ui_page_html.cpp in the build folder).
#pragma once

#include <string_view>

namespace sf {

/** The page's bytes (HTML with its CSS and JS inline; no external asset). Immutable. */
std::string_view ui_page_html();

}  // namespace sf
