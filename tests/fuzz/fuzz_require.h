// The fuzz targets' invariant check: a broken invariant aborts, which libFuzzer reports as a
// crash and keeps the input.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace sf::fuzz {

/** Aborts (a libFuzzer crash) with `what` when `ok` is false. */
inline void require(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
        std::abort();
    }
}

}  // namespace sf::fuzz
