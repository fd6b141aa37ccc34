/* rocke tests — replaying a checked-in fuzz corpus through a libFuzzer entry
 * point compiled into an ordinary ctest (no libFuzzer main). */
#ifndef ROCKE_TEST_CORPUS_REPLAY_H
#define ROCKE_TEST_CORPUS_REPLAY_H

#include <stddef.h>
#include <stdint.h>

/* Run `one` on every file of the folder dir in name order, each as
 * an exact-size heap copy (ASan sees any read past the end); *current names
 * the file being run for the target's failure message. Returns the number of
 * files; fails the test when there are fewer than min_files. */
size_t rk_test_replay_corpus(const char *dir, size_t min_files, int (*one)(const uint8_t *, size_t),
                             const char **current);

#endif
