// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <caf/detail/type_traits.hpp>
#include <caf/expected.hpp>

#include "keylane/detail/float_bits.hpp"
#include "keylane/errc.hpp"

namespace keylane {

/// Turns a payload into bytes for a durable park store and back. The
/// default is CAF's binary format (with floating-point numbers written as
/// their exact bits: infinities, NaN and subnormals come back as they
/// were) and works for every type CAF can serialise: arithmetic types,
/// strings, standard containers, and your own types with an `inspect`
/// overload (see CAF's manual, "Type Inspection"). Specialise
/// `keylane::codec<T>` for anything else, with `available = true`.
/// Without a codec, events can still be parked in memory if `T` is
/// copyable; `park.store = "sqlite"` needs one. Declare `inspect` (or the
/// specialisation) next to `T` itself: every file that uses a runtime of
/// `T` must see the same codec, or the program breaks the one-definition
/// rule and may link a runtime that believes `T` has none.
template <class T, class = void>
struct codec {
  /// Whether `encode` and `decode` exist for `T`.
  static constexpr bool available = caf::detail::is_serializable<T>::value
                                    && std::is_default_constructible_v<T>;

  /// The bytes of `x`.
  static caf::expected<std::string> encode(const T& x) {
    std::vector<char> buf;
    detail::float_bits_serializer out{buf};
    if (auto err = out(const_cast<T&>(x)))
      return make_error(errc::codec_failed,
                        "cannot encode payload: " + caf::to_string(err));
    return std::string{buf.begin(), buf.end()};
  }

  /// The value `encode` wrote into `bytes`.
  static caf::expected<T> decode(std::string_view bytes) {
    T x{};
    detail::float_bits_deserializer in{bytes.data(), bytes.size()};
    if (auto err = in(x))
      return make_error(errc::codec_failed,
                        "cannot decode payload: " + caf::to_string(err));
    if (in.inner().remaining() != 0)
      return make_error(errc::codec_failed,
                        "cannot decode payload: "
                          + std::to_string(in.inner().remaining())
                          + " bytes left over");
    return x;
  }
};

} // namespace keylane
