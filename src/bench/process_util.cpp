#include "bench/process_util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <openssl/evp.h>

namespace sf::bench {

namespace {

// The whole of a /proc file, or "" when it cannot be read. Plain read(2), not an ifstream:
// reading the file of a process that exits meanwhile fails with ESRCH, and libstdc++'s
// filebuf throws on such a read error out of istreambuf_iterator (the bench once died of it:
// "basic_filebuf::underflow error reading the file: No such process").
std::string read_proc_file(const std::string &path) {
    std::string out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return out;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) break;  // the end, or the process went away (ESRCH): what was read
        out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
}

std::vector<pid_t> all_pids() {
    std::vector<pid_t> out;
    DIR *d = opendir("/proc");
    if (!d) return out;
    while (dirent *e = readdir(d)) {
        char *end = nullptr;
        long v    = strtol(e->d_name, &end, 10);
        if (end && *end == '\0' && v > 0) out.push_back(static_cast<pid_t>(v));
    }
    closedir(d);
    return out;
}

pid_t parent_of(pid_t pid) {
    const std::string s = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
    auto rp             = s.rfind(')');
    if (rp == std::string::npos) return -1;
    std::istringstream rest(s.substr(rp + 1));
    std::string state;
    long ppid = -1;
    rest >> state >> ppid;
    return static_cast<pid_t>(ppid);
}

}  // namespace

std::string proc_cmdline(pid_t pid) {
    std::string s = read_proc_file("/proc/" + std::to_string(pid) + "/cmdline");
    std::replace(s.begin(), s.end(), '\0', ' ');
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

std::vector<pid_t> proc_children(pid_t pid) {
    std::vector<pid_t> out;
    for (pid_t p : all_pids())
        if (parent_of(p) == pid) out.push_back(p);
    return out;
}

double proc_peak_rss_mib(pid_t pid) {
    std::istringstream f(read_proc_file("/proc/" + std::to_string(pid) + "/status"));
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    }
    return 0;
}

double proc_cpu_seconds(pid_t pid) {
    std::istringstream f(read_proc_file("/proc/" + std::to_string(pid) + "/stat"));
    std::string stat;
    std::getline(f, stat);
    // After the command's closing parenthesis: field 3 (state) onwards.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream in(stat.substr(close + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && in >> field; ++i)
        if (i >= 14) ticks += std::stod(field);
    return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::vector<pid_t> engine_processes(const std::vector<pid_t> &exclude) {
    std::vector<pid_t> out;
    pid_t self = getpid();
    for (pid_t p : all_pids()) {
        if (p == self || std::find(exclude.begin(), exclude.end(), p) != exclude.end()) continue;
        std::string cmd   = proc_cmdline(p);
        std::string argv0 = cmd.substr(0, cmd.find(' '));
        std::string base  = argv0.substr(argv0.find_last_of('/') + 1);
        bool engine       = base == "llama-server" ||
                      (base == "superfluid" && (cmd.find(" serve") != std::string::npos ||
                                                cmd.find(" worker") != std::string::npos));
        if (engine) out.push_back(p);
    }
    return out;
}

swap_counters read_swap_counters() {
    swap_counters c;
    std::ifstream f("/proc/vmstat");
    std::string key;
    uint64_t v;
    while (f >> key >> v) {
        if (key == "pswpin") c.pswpin = v;
        if (key == "pswpout") c.pswpout = v;
    }
    return c;
}

std::string sha256_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return "";
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
    std::vector<char> buf(1 << 20);
    while (f) {
        f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        if (f.gcount() > 0) EVP_DigestUpdate(ctx, buf.data(), static_cast<size_t>(f.gcount()));
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    EVP_DigestFinal_ex(ctx, md, &len);
    EVP_MD_CTX_free(ctx);
    static const char *hex = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
        out += hex[md[i] >> 4];
        out += hex[md[i] & 15];
    }
    return out;
}

nlohmann::json machine_info() {
    nlohmann::json m;
    utsname u{};
    if (uname(&u) == 0) {
        m["kernel"]   = std::string(u.sysname) + " " + u.release;
        m["hostname"] = u.nodename;
        m["arch"]     = u.machine;
    }
    std::ifstream cpu("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpu, line)) {
        if (line.rfind("model name", 0) == 0) {
            m["cpu"] = line.substr(line.find(':') + 2);
            break;
        }
    }
    m["cores"] = std::thread::hardware_concurrency();
    std::ifstream mem("/proc/meminfo");
    while (std::getline(mem, line)) {
        if (line.rfind("MemTotal:", 0) == 0) {
            m["memory_mib"] = std::stod(line.substr(9)) / 1024.0;
            break;
        }
    }
    return m;
}

std::string first_output_line(const std::string &command) {
    FILE *p = popen((command + " 2>&1").c_str(), "r");
    if (!p) return "";
    std::string all;
    char buf[512];
    while (fgets(buf, sizeof buf, p)) all += buf;
    pclose(p);
    // The last non-empty line: llama-server prints its log first, the version last.
    std::istringstream in(all);
    std::string line, last;
    while (std::getline(in, line))
        if (line.find("version") != std::string::npos || last.empty()) last = line;
    return last;
}

pid_t spawn_process(const std::vector<std::string> &argv, const std::string &log_path) {
    std::vector<char *> args;
    for (const auto &a : argv) args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        setpgid(0, 0);
        int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        execv(args[0], args.data());
        _exit(127);
    }
    return pid;
}

int free_port() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    sockaddr_in a{};
    a.sin_family      = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port        = 0;
    socklen_t len     = sizeof a;
    int port          = 0;
    if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

}  // namespace sf::bench
