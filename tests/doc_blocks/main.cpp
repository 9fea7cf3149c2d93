// SPDX-License-Identifier: Apache-2.0
// Runs the doc blocks whose output a doc shows (tests/doc_blocks/check.cmake
// compares it); the other files here are compiled and linked only.
#include <cstdio>
#include <string>

int run_operations_doc();

int main(int argc, char** argv) {
  std::string block = argc > 1 ? argv[1] : "";
  if (block == "operations")
    return run_operations_doc();
  std::fprintf(stderr, "usage: doc_blocks operations\n");
  return 2;
}
