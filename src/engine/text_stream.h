// Turns a session's token pieces into text that is safe to send to a client as it comes:
// whole UTF-8 code points only, and no byte of a stop string (nor of a possible partial
// match at the end, which the next token may complete) ever released. Pure logic, no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sf {

class text_stream {
  public:
    /** `stops`: stop strings (empty ones are ignored). */
    explicit text_stream(std::vector<std::string> stops = {});

    /**
     * Appends one token's bytes. Returns the text released now (possibly empty). After a
     * stop string matched, stopped() is true and the text before it has been released.
     */
    std::string push(std::string_view piece);

    /** Releases everything still held (end of generation without a stop match). */
    std::string flush();

    bool stopped() const { return stopped_; }
    /** The stop string that matched, when stopped(). */
    const std::string &matched_stop() const { return matched_; }

  private:
    std::vector<std::string> stops_;
    std::string pending_;  // bytes received but not released
    bool stopped_ = false;
    std::string matched_;
};

}  // namespace sf
