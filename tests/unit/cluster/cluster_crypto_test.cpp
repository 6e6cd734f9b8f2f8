// The cluster's trust pieces without a network: certificates (CA, CSR signing, the pin), the
// join token's format and proof, and the token store's one-time use, expiry and wrong secrets.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "cluster/head_identity.h"
#include "cluster/join_token.h"
#include "cluster/token_store.h"
#include "cluster/x509.h"
#include "util/file_text.h"

using namespace sf::cluster;

namespace {

std::string temp_dir() {
    std::string d = std::filesystem::temp_directory_path() /
                    ("sf-cluster-test-" + std::to_string(getpid()) + "-" + to_hex(random_bytes(4)));
    std::filesystem::create_directories(d);
    return d;
}

}  // namespace

TEST(cluster_x509, ca_signs_a_node_request_and_the_pin_is_the_public_key_hash) {
    key_and_cert ca, other;
    std::string err;
    ASSERT_TRUE(make_ca(ca, err)) << err;
    ASSERT_TRUE(make_ca(other, err)) << err;
    const std::string pin = public_key_pin(ca.cert_pem);
    EXPECT_EQ(pin.size(), 64u);
    EXPECT_NE(pin, public_key_pin(other.cert_pem));

    std::string key, csr, cert;
    ASSERT_TRUE(make_key_and_csr("asked-name", key, csr, err)) << err;
    ASSERT_TRUE(sign_csr(ca, csr, "node-1", 42, 30, cert, err)) << err;
    EXPECT_EQ(common_name(cert), "node-1");  // the CA names the node, not the request
    EXPECT_EQ(serial_hex(cert), "2A");
    EXPECT_TRUE(verify_signed_by(cert, ca.cert_pem));
    EXPECT_FALSE(verify_signed_by(cert, other.cert_pem));
}

TEST(cluster_x509, garbage_is_not_a_request_or_a_certificate) {
    key_and_cert ca;
    std::string err, cert;
    ASSERT_TRUE(make_ca(ca, err));
    EXPECT_FALSE(sign_csr(ca, "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n", "n", 2, 1, cert, err));
    EXPECT_EQ(public_key_pin("not a certificate"), "");
}

TEST(cluster_join_token, parses_its_own_format_and_refuses_malformed_ones) {
    const join_token t = new_join_token(std::string(64, 'a'));
    join_token back;
    std::string err;
    ASSERT_TRUE(parse_join_token(format_join_token(t), back, err)) << err;
    EXPECT_EQ(back.pin, t.pin);
    EXPECT_EQ(back.id, t.id);
    EXPECT_EQ(back.secret, t.secret);
    EXPECT_FALSE(parse_join_token("sf2." + t.pin + "." + t.id + "." + t.secret, back, err));
    EXPECT_FALSE(parse_join_token("sf1." + t.pin + "." + t.id, back, err));
    EXPECT_FALSE(parse_join_token("sf1." + t.pin + "." + t.id + "." + t.secret + "0", back, err));
}

TEST(cluster_join_token, the_proof_binds_secret_nonce_pin_and_request) {
    const std::string key = join_key("00112233445566778899aabbccddeeff");
    const std::string p   = join_proof(key, "nonce-1", "pin", "csr");
    EXPECT_TRUE(same_bytes(p, join_proof(key, "nonce-1", "pin", "csr")));
    EXPECT_FALSE(same_bytes(p, join_proof(key, "nonce-2", "pin", "csr")));
    EXPECT_FALSE(same_bytes(p, join_proof(key, "nonce-1", "pin2", "csr")));
    EXPECT_FALSE(same_bytes(p, join_proof(key, "nonce-1", "pin", "csr2")));
    EXPECT_FALSE(same_bytes(
        p, join_proof(join_key("00112233445566778899aabbccddeef0"), "nonce-1", "pin", "csr")));
}

TEST(cluster_token_store, one_time_tokens_wrong_secrets_and_expiry) {
    const std::string dir = temp_dir();
    token_store store(dir);
    std::string err;
    const std::string pin  = std::string(64, 'b');
    const std::string text = store.create(pin, 1, 3600, err);
    join_token t;
    ASSERT_TRUE(parse_join_token(text, t, err)) << err;
    // The store holds the derived key, never the secret.
    std::string stored;
    ASSERT_TRUE(sf::read_file(dir + "/tokens.json", stored));
    EXPECT_EQ(stored.find(t.secret), std::string::npos);

    const auto proof = [&](const std::string &secret, const std::string &nonce) {
        return join_proof(join_key(secret), nonce, pin, "csr");
    };
    std::string wrong = t.secret;
    wrong.back()      = wrong.back() == '0' ? '1' : '0';
    EXPECT_FALSE(store.redeem(t.id, "n1", pin, "csr", proof(wrong, "n1"), err));
    EXPECT_NE(err.find("wrong secret"), std::string::npos) << err;
    EXPECT_TRUE(store.redeem(t.id, "n2", pin, "csr", proof(t.secret, "n2"), err)) << err;
    EXPECT_FALSE(store.redeem(t.id, "n3", pin, "csr", proof(t.secret, "n3"), err));
    EXPECT_NE(err.find("already used"), std::string::npos) << err;
    EXPECT_FALSE(store.redeem("000000000000", "n4", pin, "csr", proof(t.secret, "n4"), err));
    EXPECT_NE(err.find("unknown"), std::string::npos) << err;

    const std::string two = store.create(pin, 2, 3600, err);
    join_token t2;
    ASSERT_TRUE(parse_join_token(two, t2, err));
    EXPECT_TRUE(store.redeem(t2.id, "a", pin, "csr", proof(t2.secret, "a"), err)) << err;
    EXPECT_TRUE(store.redeem(t2.id, "b", pin, "csr", proof(t2.secret, "b"), err)) << err;
    EXPECT_FALSE(store.redeem(t2.id, "c", pin, "csr", proof(t2.secret, "c"), err));

    const std::string brief = store.create(pin, 5, 1, err);
    join_token t3;
    ASSERT_TRUE(parse_join_token(brief, t3, err));
    sleep(2);
    EXPECT_FALSE(store.redeem(t3.id, "x", pin, "csr", proof(t3.secret, "x"), err));
    EXPECT_NE(err.find("expired"), std::string::npos) << err;
    std::filesystem::remove_all(dir);
}

TEST(cluster_token_store, a_revoked_node_takes_its_certificate_and_token_with_it) {
    const std::string dir = temp_dir();
    token_store store(dir);
    std::string err;
    const std::string pin = std::string(64, 'c');
    join_token t, other;
    ASSERT_TRUE(parse_join_token(store.create(pin, 3, 3600, err), t, err)) << err;
    ASSERT_TRUE(parse_join_token(store.create(pin, 3, 3600, err), other, err)) << err;
    const auto proof = [&](const join_token &tok, const std::string &nonce) {
        return join_proof(join_key(tok.secret), nonce, pin, "csr");
    };
    ASSERT_TRUE(store.redeem(t.id, "n1", pin, "csr", proof(t, "n1"), err)) << err;
    store.record_join(t.id, "gpu-1", "0A1B");
    EXPECT_FALSE(store.revoked("0A1B"));

    std::string token_of;
    ASSERT_TRUE(store.revoke("gpu-1", "0A1B", token_of, err)) << err;
    EXPECT_EQ(token_of, t.id);
    EXPECT_TRUE(store.revoked("0A1B"));
    EXPECT_FALSE(store.revoked("0A1C"));
    ASSERT_EQ(store.revoked_nodes().size(), 1u);
    EXPECT_EQ(store.revoked_nodes()[0].first, "gpu-1");
    // Its token has uses left but is refused as revoked; another token still joins.
    EXPECT_FALSE(store.redeem(t.id, "n2", pin, "csr", proof(t, "n2"), err));
    EXPECT_NE(err.find("revoked"), std::string::npos) << err;
    EXPECT_TRUE(store.redeem(other.id, "n3", pin, "csr", proof(other, "n3"), err)) << err;
    // A node whose join was not recorded: its certificate only.
    ASSERT_TRUE(store.revoke("old", "FF", token_of, err)) << err;
    EXPECT_EQ(token_of, "");
    EXPECT_TRUE(store.revoked("FF"));
    std::filesystem::remove_all(dir);
}

TEST(cluster_head_identity, created_once_then_loaded_with_the_same_pin) {
    const std::string dir = temp_dir();
    head_identity a;
    bool created = false;
    std::string err;
    ASSERT_TRUE(a.load_or_create(dir, created, err)) << err;
    EXPECT_TRUE(created);
    EXPECT_TRUE(verify_signed_by(a.head().cert_pem, a.ca().cert_pem));
    EXPECT_EQ(common_name(a.head().cert_pem), k_head_name);
    head_identity b;
    ASSERT_TRUE(b.load_or_create(dir, created, err)) << err;
    EXPECT_FALSE(created);
    EXPECT_EQ(a.pin(), b.pin());
    std::string c1, c2, key, csr;
    ASSERT_TRUE(make_key_and_csr("x", key, csr, err));
    ASSERT_TRUE(b.issue(csr, "n1", c1, err));
    ASSERT_TRUE(b.issue(csr, "n2", c2, err));
    EXPECT_NE(serial_hex(c1), serial_hex(c2));
    std::filesystem::remove_all(dir);
}
