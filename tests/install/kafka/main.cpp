// SPDX-License-Identifier: Apache-2.0
// Shows that an installed keylane::kafka is usable from outside: its
// headers compile (the source's, which include the runtime's), and
// librdkafka's mock cluster starts and takes a topic, so the library and
// librdkafka are found at link and run time.
#include <iostream>

#include <keylane/errc.hpp>
#include <keylane/kafka/mock_cluster.hpp>
#include <keylane/kafka/offset_tracker.hpp>
#include <keylane/kafka/source.hpp>

int main() {
  auto cluster = keylane::kafka::mock_cluster::start(1);
  if (!cluster) {
    std::cout << keylane::render(cluster.error()) << '\n';
    return 2;
  }
  if (auto err = (*cluster)->create_topic("ledger", 2)) {
    std::cout << keylane::render(err) << '\n';
    return 2;
  }
  std::cout << "mock cluster at " << (*cluster)->bootstrap_servers()
            << " has topic ledger\n";
  keylane::kafka::offset_tracker offsets;
  for (int64_t o = 0; o < 3; ++o)
    offsets.take(o);
  offsets.finish(1);
  offsets.finish(0);
  std::cout << "committable after 0 and 1 of 0..2 = " << offsets.committable()
            << '\n';
}
