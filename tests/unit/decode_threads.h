// Decode threads for the unit tests that run a model (engine, scripted engine, mkmodel).
#pragma once

namespace sf::test {

#if defined(__SANITIZE_THREAD__)
#define SF_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SF_TEST_TSAN 1
#endif
#endif

#ifdef SF_TEST_TSAN
/**
 * One under ThreadSanitizer: with two, ggml's threadpool (prebuilt, uninstrumented) hands each
 * graph's buffers between threads through C11 atomics TSan cannot see, so every decode raised
 * thousands of false reports that tests/sanitizers/tsan.supp then suppresses (75,900 in
 * LlamaEngineTest.DecodesTwoSequencesInOneBatch alone), each one symbolized: the engine tests
 * took 20x their time. One thread computes the same graphs on the caller's thread; the engine's
 * own threading (renders on several threads, the tick thread) is unchanged.
 */
inline constexpr int k_decode_threads = 1;
#else
/** Two: the thread barriers between graph nodes run, as in production. */
inline constexpr int k_decode_threads = 2;
#endif

}  // namespace sf::test
