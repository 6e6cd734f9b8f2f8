#include "cluster/head_identity.h"

#include <sys/stat.h>

#include <filesystem>

#include "util/file_text.h"

namespace sf::cluster {

bool head_identity::load(const std::string &state_dir, std::string &error) {
    dir_ = state_dir + "/cluster";
    if (!read_file(dir_ + "/ca.key", ca_.key_pem) || !read_file(dir_ + "/ca.crt", ca_.cert_pem) ||
        !read_file(dir_ + "/head.key", head_.key_pem) ||
        !read_file(dir_ + "/head.crt", head_.cert_pem)) {
        error = "no cluster identity in " + dir_ + " (start `superfluid serve --cluster` once)";
        return false;
    }
    pin_ = public_key_pin(ca_.cert_pem);
    if (pin_.empty()) return error = dir_ + "/ca.crt is not a certificate", false;
    return true;
}

bool head_identity::load_or_create(const std::string &state_dir, bool &created,
                                   std::string &error) {
    dir_    = state_dir + "/cluster";
    created = false;
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    ::chmod(dir_.c_str(), 0700);
    if (!std::filesystem::exists(dir_ + "/ca.crt")) {
        if (!make_ca(ca_, error)) return false;
        if (!write_file_atomic(dir_ + "/ca.key", ca_.key_pem, 0600) ||
            !write_file_atomic(dir_ + "/ca.crt", ca_.cert_pem, 0644))
            return error = "cannot write the CA into " + dir_, false;
        created = true;
    }
    if (!std::filesystem::exists(dir_ + "/head.crt")) {
        if (!read_file(dir_ + "/ca.key", ca_.key_pem) || !read_file(dir_ + "/ca.crt", ca_.cert_pem))
            return error = "cannot read the CA in " + dir_, false;
        std::string csr;
        if (!make_key_and_csr(k_head_name, head_.key_pem, csr, error)) return false;
        if (!sign_csr(ca_, csr, k_head_name, next_serial(), 3650, head_.cert_pem, error))
            return false;
        if (!write_file_atomic(dir_ + "/head.key", head_.key_pem, 0600) ||
            !write_file_atomic(dir_ + "/head.crt", head_.cert_pem, 0644))
            return error = "cannot write the head certificate into " + dir_, false;
    }
    return load(state_dir, error);
}

uint64_t head_identity::next_serial() {
    std::lock_guard lk(serial_mu_);
    std::string text;
    uint64_t n = 1;
    if (read_file(dir_ + "/serial", text)) n = std::strtoull(text.c_str(), nullptr, 10) + 1;
    write_file_atomic(dir_ + "/serial", std::to_string(n) + "\n", 0600);
    return n + 1;  // 1 is never used: the CA's certificate has a random serial
}

bool head_identity::issue(const std::string &csr_pem, const std::string &name,
                          std::string &cert_pem, std::string &error) {
    return sign_csr(ca_, csr_pem, name, next_serial(), 365, cert_pem, error);
}

}  // namespace sf::cluster
