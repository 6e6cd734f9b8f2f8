#include "models/gguf_info.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace sf::models {

namespace {

// GGUF value types (gguf.h's GGUF_TYPE_*).
enum : uint32_t {
    T_U8,
    T_I8,
    T_U16,
    T_I16,
    T_U32,
    T_I32,
    T_F32,
    T_BOOL,
    T_STRING,
    T_ARRAY,
    T_U64,
    T_I64,
    T_F64,
};

constexpr uint64_t kMaxString = uint64_t(1) << 28;  // a malformed length, not a real key
constexpr uint64_t kMaxCount  = uint64_t(1) << 32;

struct malformed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Little-endian reads from the header (GGUF's byte order on every machine it runs on).
class reader {
  public:
    explicit reader(std::ifstream &f) : f_(f) {}
    template <class T>
    T get() {
        T v{};
        if (!f_.read(reinterpret_cast<char *>(&v), sizeof v)) throw malformed("truncated header");
        return v;
    }
    std::string str() {
        const uint64_t n = get<uint64_t>();
        if (n > kMaxString) throw malformed("a string of " + std::to_string(n) + " bytes");
        std::string s(n, '\0');
        if (n && !f_.read(s.data(), std::streamsize(n))) throw malformed("truncated header");
        return s;
    }
    void skip(uint64_t n) {
        if (!f_.seekg(std::streamoff(n), std::ios::cur)) throw malformed("truncated header");
    }

  private:
    std::ifstream &f_;
};

size_t fixed_size(uint32_t type) {
    switch (type) {
        case T_U8:
        case T_I8:
        case T_BOOL:
            return 1;
        case T_U16:
        case T_I16:
            return 2;
        case T_U32:
        case T_I32:
        case T_F32:
            return 4;
        case T_U64:
        case T_I64:
        case T_F64:
            return 8;
        default:
            return 0;
    }
}

// A scalar value as an unsigned integer (0 for the types that are not integers).
uint64_t read_uint(reader &r, uint32_t type) {
    switch (type) {
        case T_U8:
            return r.get<uint8_t>();
        case T_I8:
            return uint64_t(r.get<int8_t>());
        case T_U16:
            return r.get<uint16_t>();
        case T_I16:
            return uint64_t(r.get<int16_t>());
        case T_U32:
            return r.get<uint32_t>();
        case T_I32:
            return uint64_t(r.get<int32_t>());
        case T_U64:
            return r.get<uint64_t>();
        case T_I64:
            return uint64_t(r.get<int64_t>());
        default:
            r.skip(fixed_size(type));
            return 0;
    }
}

void skip_value(reader &r, uint32_t type) {
    if (type == T_STRING) {
        r.skip(r.get<uint64_t>());
    } else if (type == T_ARRAY) {
        const uint32_t elem = r.get<uint32_t>();
        const uint64_t n    = r.get<uint64_t>();
        if (n > kMaxCount) throw malformed("an array of " + std::to_string(n) + " values");
        if (elem == T_STRING || elem == T_ARRAY)
            for (uint64_t i = 0; i < n; ++i) skip_value(r, elem);
        else if (size_t s = fixed_size(elem))
            r.skip(n * s);
        else
            throw malformed("value type " + std::to_string(elem));
    } else if (size_t s = fixed_size(type)) {
        r.skip(s);
    } else {
        throw malformed("value type " + std::to_string(type));
    }
}

std::string printable(const char *b, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
        const unsigned char c = static_cast<unsigned char>(b[i]);
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            s += char(c);
        } else {
            char hex[8];
            snprintf(hex, sizeof hex, "\\x%02x", c);
            s += hex;
        }
    }
    return s;
}

}  // namespace

std::string gguf_magic_problem(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return "cannot be read";
    char magic[4] = {};
    f.read(magic, 4);
    const auto n = size_t(f.gcount());
    if (n == 4 && std::string(magic, 4) == "GGUF") return "";
    if (n == 0) return "empty";
    if (n < 4) return std::to_string(n) + " bytes, shorter than a GGUF header";
    return "bad magic \"" + printable(magic, 4) + "\"; a GGUF file starts with \"GGUF\"";
}

bool read_gguf_summary(const std::string &path, gguf_summary &out, std::string &error) {
    if (std::string why = gguf_magic_problem(path); !why.empty()) {
        error = path + " is not a GGUF file (" + why + ")";
        return false;
    }
    std::ifstream f(path, std::ios::binary);
    f.seekg(4);
    reader r(f);
    out = {};
    try {
        out.version = r.get<uint32_t>();
        if (out.version < 2 || out.version > 3)
            throw malformed("GGUF version " + std::to_string(out.version) + " (2 and 3 are read)");
        out.tensor_count    = r.get<uint64_t>();
        const uint64_t n_kv = r.get<uint64_t>();
        if (out.tensor_count > kMaxCount || n_kv > kMaxCount) throw malformed("implausible counts");
        std::string arch;
        uint64_t ctx = 0, embd = 0, blocks = 0;  // keyed by architecture: matched afterwards
        std::string ctx_key, embd_key, blocks_key;
        int64_t file_type = -1;
        for (uint64_t i = 0; i < n_kv; ++i) {
            const std::string key = r.str();
            const uint32_t type   = r.get<uint32_t>();
            auto ends             = [&](const char *suffix) {
                const std::string s(suffix);
                return key.size() > s.size() &&
                       key.compare(key.size() - s.size(), s.size(), s) == 0;
            };
            if (type == T_STRING && (key == "general.architecture" || key == "general.name")) {
                (key == "general.name" ? out.name : arch) = r.str();
            } else if (key == "general.file_type" && fixed_size(type)) {
                file_type = int64_t(read_uint(r, type));
            } else if (ends(".context_length") && fixed_size(type)) {
                ctx_key = key, ctx = read_uint(r, type);
            } else if (ends(".embedding_length") && fixed_size(type)) {
                embd_key = key, embd = read_uint(r, type);
            } else if (ends(".block_count") && fixed_size(type)) {
                blocks_key = key, blocks = read_uint(r, type);
            } else {
                skip_value(r, type);
            }
        }
        out.architecture = arch;
        if (ctx_key == arch + ".context_length") out.context_length = ctx;
        if (embd_key == arch + ".embedding_length") out.embedding_length = embd;
        if (blocks_key == arch + ".block_count") out.block_count = blocks;
        if (file_type >= 0) out.quantization = gguf_file_type_name(uint32_t(file_type));
        for (uint64_t i = 0; i < out.tensor_count; ++i) {
            r.skip(r.get<uint64_t>());  // name
            const uint32_t n_dims = r.get<uint32_t>();
            if (n_dims > 8) throw malformed("a tensor of " + std::to_string(n_dims) + " dims");
            uint64_t elems = 1;
            for (uint32_t d = 0; d < n_dims; ++d) elems *= r.get<uint64_t>();
            r.skip(4 + 8);  // type, offset
            out.parameters += elems;
        }
    } catch (const malformed &e) {
        error = path + " is not a readable GGUF file: " + e.what();
        return false;
    }
    return true;
}

std::string gguf_file_type_name(uint32_t t) {
    // llama.h's llama_ftype; the gaps are types llama.cpp removed.
    static const char *const names[] = {
        "F32",    "F16",    "Q4_0",    "Q4_1",      nullptr,  nullptr,   nullptr,
        "Q8_0",   "Q5_0",   "Q5_1",    "Q2_K",      "Q3_K_S", "Q3_K_M",  "Q3_K_L",
        "Q4_K_S", "Q4_K_M", "Q5_K_S",  "Q5_K_M",    "Q6_K",   "IQ2_XXS", "IQ2_XS",
        "Q2_K_S", "IQ3_XS", "IQ3_XXS", "IQ1_S",     "IQ4_NL", "IQ3_S",   "IQ3_M",
        "IQ2_S",  "IQ2_M",  "IQ4_XS",  "IQ1_M",     "BF16",   nullptr,   nullptr,
        nullptr,  "TQ1_0",  "TQ2_0",   "MXFP4_MOE", "NVFP4",  "Q1_0",    "Q2_0"};
    if (t < sizeof names / sizeof names[0] && names[t]) return names[t];
    return "file type " + std::to_string(t);
}

std::string format_parameter_count(uint64_t n) {
    char buf[32];
    if (n >= 1000000000ull)
        snprintf(buf, sizeof buf, "%.2fB", double(n) / 1e9);
    else if (n >= 1000000ull)
        snprintf(buf, sizeof buf, "%.2fM", double(n) / 1e6);
    else if (n >= 1000ull)
        snprintf(buf, sizeof buf, "%.2fK", double(n) / 1e3);
    else
        snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(n));
    return buf;
}

}  // namespace sf::models
