// Arithmetic on nums that needs more than one machine instruction.
#pragma once

#include <cmath>
#include <cstdint>

namespace vm {

// '%': C's fmod, with the sign of the dividend and -0 where fmod gives -0.
// Integral operands below 2^53 in magnitude take the integer remainder
// instead, which is the same result bit for bit: fmod is exact, and so is
// the remainder of two integers a double holds exactly. It spares fmod's
// loop over the operands' exponent difference, which made a Park-Miller
// generator (`x * 16807 % 2147483647`) spend half its time in libm.
// 2^53: every integer of smaller magnitude is exact in a double.
constexpr double kExactIntegerLimit = 9007199254740992.0;

inline double num_mod(double a, double b) {
  if (a > -kExactIntegerLimit && a < kExactIntegerLimit && b > -kExactIntegerLimit &&
      b < kExactIntegerLimit) {
    auto ia = static_cast<int64_t>(a);
    auto ib = static_cast<int64_t>(b);
    if (static_cast<double>(ia) == a && static_cast<double>(ib) == b && ib != 0) {
      int64_t r = ia % ib;
      return r != 0 ? static_cast<double>(r) : std::copysign(0.0, a);
    }
  }
  return std::fmod(a, b);
}

}  // namespace vm
