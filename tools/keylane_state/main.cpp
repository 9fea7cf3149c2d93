// SPDX-License-Identifier: Apache-2.0
// keylane-state: the operator's view of a RocksDB state store (list, show,
// export, erase). The logic is keylane::run_state_tool, so an application
// can build the same tool with a renderer that decodes its own state type.
#include "keylane/state_tool.hpp"

int main(int argc, char** argv) {
  return keylane::run_state_tool(argc, argv);
}
