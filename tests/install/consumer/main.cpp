// Shows that an installed keylane is usable from outside: the public headers
// compile, a header-only function runs and a library symbol links.
#include <iostream>

#include <keylane/errc.hpp>
#include <keylane/key.hpp>
#include <keylane/runtime.hpp>

int main() {
  std::cout << "stable_hash(\"acct-1\") = " << keylane::stable_hash("acct-1")
            << '\n'
            << "to_string(errc::window_full) = "
            << keylane::to_string(keylane::errc::window_full) << '\n';
}
